package main

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// datastaxPolicy is a port of the DataStax Java driver 4.x
// DefaultLoadBalancingPolicy (newQueryPlan with slow-replica avoidance on,
// the driver's default), kept apart from package policy so the comparison
// has an independent peer baseline. For every query:
//
//   - the live local replicas of the routing key come first, shuffled;
//   - with exactly two replicas that shuffle is the whole rule;
//   - with three or more, a replica is unhealthy when it has >= 10 requests
//     in flight and fewer than two responses in the last 200 ms; while
//     unhealthy replicas are fewer than half of the replicas they move to
//     the end of the replica group (order kept), else nothing moves; then
//     the first two replicas are compared by requests in flight and the
//     less loaded one goes first (power of two choices);
//   - the rest of the local DC follows, rotated round robin.
//
// Not ported: the driver's preference against a replica that came up less
// than a minute ago (it moves such a replica back with probability 3/4
// and skips the unhealthy rule); our runs start every node at once, so it
// would never act. DC failover is not ported either.
//
// Where the driver reads a node's in-flight count from its connection pool
// and records responses in its request tracker (onNodeSuccess/onNodeError),
// gocql offers neither, so this policy counts for itself: a host is in
// flight from the moment NextHost hands it out until its first Mark (gocql
// marks every attempt, success or error); the last two Mark times are the
// response record. A host gocql skips without an attempt (it went down
// between plan and send) is never marked, so HostUp/HostDown/RemoveHost
// reset its count; a retry on the same host is not counted again.
//
// The replica set comes from gocql's token-aware policy over a round robin
// of the local DC (every host when localDC is ""), the same token metadata
// the other policies use.
type datastaxPolicy struct {
	gocql.HostSelectionPolicy // replica source: token-aware over a marked fallback

	mu  sync.Mutex
	rng *rand.Rand

	hostsMu sync.RWMutex
	hosts   map[string]*dsHost

	now         func() time.Duration // monotonic clock; tests replace it
	minInFlight int64                // busy threshold, the driver's MAX_IN_FLIGHT_THRESHOLD = 10
	window      time.Duration        // RESPONSE_COUNT_RESET_INTERVAL, 200 ms
}

// dsHost is the driver's per-node state: requests in flight and the times of
// the last two responses.
type dsHost struct {
	inFlight atomic.Int64
	mu       sync.Mutex
	n        int              // responses recorded, up to 2
	last     [2]time.Duration // [0] the older, [1] the newer
}

// newDatastaxPolicy returns the policy; localDC "" treats every host as
// local. seed fixes the replica shuffle.
func newDatastaxPolicy(localDC string, seed int64) *datastaxPolicy {
	var fallback gocql.HostSelectionPolicy = gocql.RoundRobinHostPolicy()
	if localDC != "" {
		fallback = gocql.DCAwareRoundRobinPolicy(localDC)
	}
	start := time.Now()
	return &datastaxPolicy{
		HostSelectionPolicy: gocql.TokenAwareHostPolicy(markedFallback{fallback}),
		rng:                 rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		hosts:               map[string]*dsHost{},
		now:                 func() time.Duration { return time.Since(start) },
		minInFlight:         10,
		window:              200 * time.Millisecond,
	}
}

func hostKey(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddress().String()
}

func (p *datastaxPolicy) host(h *gocql.HostInfo) *dsHost {
	k := hostKey(h)
	p.hostsMu.RLock()
	s := p.hosts[k]
	p.hostsMu.RUnlock()
	if s != nil {
		return s
	}
	p.hostsMu.Lock()
	defer p.hostsMu.Unlock()
	if s = p.hosts[k]; s == nil {
		s = &dsHost{}
		p.hosts[k] = s
	}
	return s
}

// reset forgets a host's in-flight count (see the type's comment).
func (p *datastaxPolicy) reset(h *gocql.HostInfo) { p.host(h).inFlight.Store(0) }

func (p *datastaxPolicy) HostUp(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostUp(h)
}

func (p *datastaxPolicy) HostDown(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.HostDown(h)
}

func (p *datastaxPolicy) RemoveHost(h *gocql.HostInfo) {
	p.reset(h)
	p.HostSelectionPolicy.RemoveHost(h)
}

// responded records a response (success or error) from s, as the driver's
// updateResponseTimes.
func (p *datastaxPolicy) responded(s *dsHost) {
	now := p.now()
	s.mu.Lock()
	if s.n < 2 {
		s.last[s.n] = now
		s.n++
	} else {
		s.last[0], s.last[1] = s.last[1], now
	}
	s.mu.Unlock()
}

// unhealthy is the driver's isUnhealthy: busy (>= minInFlight in flight)
// and an insufficient response rate (fewer than two responses, or the older
// of the last two is more than window ago).
func (p *datastaxPolicy) unhealthy(s *dsHost, now time.Duration) bool {
	if s.inFlight.Load() < p.minInFlight {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n < 2 || s.last[0] < now-p.window
}

// order applies the driver's rules to the replicas in place.
func (p *datastaxPolicy) order(replicas []gocql.SelectedHost) {
	n := len(replicas)
	if n < 2 {
		return
	}
	p.mu.Lock()
	p.rng.Shuffle(n, func(i, j int) { replicas[i], replicas[j] = replicas[j], replicas[i] })
	p.mu.Unlock()
	if n == 2 {
		return
	}
	states := make([]*dsHost, n)
	for i, r := range replicas {
		states[i] = p.host(r.Info())
	}
	now := p.now()
	bad := make([]bool, n)
	nbad := 0
	for i, s := range states {
		if p.unhealthy(s, now) {
			bad[i] = true
			nbad++
		}
	}
	if nbad > 0 && float64(nbad) < float64(n)/2 {
		// Stable partition: healthy first, then unhealthy, each in order.
		reordered := make([]gocql.SelectedHost, 0, n)
		rs := make([]*dsHost, 0, n)
		for _, want := range []bool{false, true} {
			for i := range replicas {
				if bad[i] == want {
					reordered = append(reordered, replicas[i])
					rs = append(rs, states[i])
				}
			}
		}
		copy(replicas, reordered)
		copy(states, rs)
	}
	if states[0].inFlight.Load() > states[1].inFlight.Load() {
		replicas[0], replicas[1] = replicas[1], replicas[0]
	}
}

// Pick returns the query plan: ordered replicas, then the fallback's hosts.
func (p *datastaxPolicy) Pick(q gocql.ExecutableQuery) gocql.NextHost {
	next := p.HostSelectionPolicy.Pick(q)
	replicas, pending := takeReplicas(next)
	p.order(replicas)
	var mu sync.Mutex // gocql serializes NextHost, but hedging wrappers may not
	i := 0
	return func() gocql.SelectedHost {
		mu.Lock()
		defer mu.Unlock()
		var h gocql.SelectedHost
		switch {
		case i < len(replicas):
			h = replicas[i]
			i++
		case pending != nil:
			h, pending = pending, nil
		default:
			h = next()
		}
		if h == nil {
			return nil
		}
		s := p.host(h.Info())
		s.inFlight.Add(1)
		return &dsSelected{SelectedHost: h, p: p, s: s}
	}
}

// dsSelected ends its host's in-flight request at the first Mark; every
// Mark is a response.
type dsSelected struct {
	gocql.SelectedHost
	p    *datastaxPolicy
	s    *dsHost
	done atomic.Bool
}

func (d *dsSelected) Mark(err error) {
	if d.done.CompareAndSwap(false, true) {
		d.s.inFlight.Add(-1)
	}
	d.p.responded(d.s)
	d.SelectedHost.Mark(err)
}

func init() {
	registerPolicy(policySpec{
		name: "datastax",
		help: "port of the DataStax Java driver 4.x DefaultLoadBalancingPolicy: shuffled replicas, busy-replica avoidance, P2C on in-flight counts",
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			cfg.PoolConfig.HostSelectionPolicy = newDatastaxPolicy("", env.seed)
			return installed{}, nil
		},
	})
}
