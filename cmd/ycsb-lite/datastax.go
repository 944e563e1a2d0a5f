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
// In flight and responses as the Java driver counts them. The driver reads
// a node's in-flight count from its connection pool: a request holds its
// stream id from write until the node's response, also after a client
// timeout or a cancelled (speculative) execution, whose stream id stays
// orphaned until the response comes. Responses (success or error from the
// node) are recorded by the policy's RequestTracker (onNodeSuccess,
// onNodeError); a client timeout or a cancelled execution is not a response.
// gocql offers neither, so the policy counts for itself, through the query
// observer that install chains in (wireDatastax), which sees each attempt's
// real error (gocql Marks a cancelled attempt with nil):
//
//   - a host is in flight from the moment NextHost hands it out until its
//     attempt ends; an attempt that ends with a response (nil, not found,
//     any error the node sent) records a response time;
//   - an attempt that ends without a response (context cancelled or expired,
//     gocql's ErrTimeoutNoResponse) stays in flight as an orphan until the
//     node answers a request sent after it (a node serves in order) or, as
//     gocql cannot tell when the late response arrives, until it has had
//     twice its elapsed time or twice the node's mean response time more,
//     whichever is longer, at most the session timeout;
//   - an attempt that fails on the connection ends its in-flight count and,
//     as the driver's onNodeError, records a response time.
//
// Without the observer (a bare policy) Mark is the end of the attempt and
// every Mark a response. A host gocql skips without an attempt (it went down
// between plan and send) is never observed, so HostUp/HostDown/RemoveHost
// reset its count.
//
// What still differs from the driver: the orphans' release time is
// estimated (the driver sees the response); the in-flight count includes the
// time between hand-out and write, where the driver counts from the write
// (microseconds with a connection at hand); the newly-up rule and DC
// failover are not ported (see above).
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
	observed    atomic.Bool          // wireDatastax installed the observer: it ends attempts, not Mark
	maxOrphan   time.Duration        // longest an orphan stays in flight (the session timeout)
}

// dsHost is the driver's per-node state: requests in flight and the times of
// the last two responses.
type dsHost struct {
	inFlight atomic.Int64 // handed out, attempt not ended
	mu       sync.Mutex
	n        int              // responses recorded, up to 2
	last     [2]time.Duration // [0] the older, [1] the newer
	meanResp float64          // EWMA of response times (ns), for the orphans' release estimate
	orphans  []dsOrphan       // attempts that ended without a response (under mu)
}

// dsOrphan is an attempt the client stopped waiting for: in flight until
// the node answers a later request or until releaseAt.
type dsOrphan struct {
	sent, releaseAt time.Duration
}

// maxOrphans bounds a host's orphan list (the driver closes a channel with
// too many orphaned stream ids).
const maxOrphans = 1024

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
		maxOrphan:           5 * time.Second,
	}
}

// unhealthy is the driver's isUnhealthy: busy (>= minInFlight in flight)
// and an insufficient response rate (fewer than two responses, or the older
// of the last two is more than window ago).
func (p *datastaxPolicy) unhealthy(s *dsHost, now time.Duration) bool {
	if p.inFlight(s, now) < p.minInFlight {
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
	if p.inFlight(states[0], now) > p.inFlight(states[1], now) {
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

// dsSelected: without the observer (see wireDatastax) the first Mark ends
// its host's in-flight request and every Mark is a response; with it, Mark
// does nothing of its own.
type dsSelected struct {
	gocql.SelectedHost
	p    *datastaxPolicy
	s    *dsHost
	done atomic.Bool
}

func (d *dsSelected) Mark(err error) {
	if !d.p.observed.Load() {
		if d.done.CompareAndSwap(false, true) {
			d.s.inFlight.Add(-1)
		}
		d.p.responded(d.s)
	}
	d.SelectedHost.Mark(err)
}

func init() {
	registerPolicy(policySpec{
		name: "datastax",
		help: "port of the DataStax Java driver 4.x DefaultLoadBalancingPolicy: shuffled replicas, busy-replica avoidance, P2C on in-flight counts",
		install: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			wireDatastax(cfg, newDatastaxPolicy("", env.seed))
			return installed{}, nil
		},
	})
}
