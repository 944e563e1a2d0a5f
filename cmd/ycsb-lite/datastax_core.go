// The datastax policy's driver-free core (dsCore): per-host state, the
// busy rule, the plan order, and the load signals (in flight with orphans,
// responses). It is bound to gocql v1 in datastax.go and to the v2 driver
// in datastax_v2.go (generated from datastax.go); both hand the core their
// hosts through dsNode.

package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// dsCore is a port of the DataStax Java driver 4.x
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
// Neither gocql driver offers these, so the policy counts for itself,
// through the query observer its adapter's wire function chains in, which
// sees each attempt's real error (the drivers Mark a cancelled attempt with
// nil):
//
//   - a host is in flight from the moment NextHost hands it out until its
//     attempt ends; an attempt that ends with a response (nil, not found,
//     any error the node sent) records a response time;
//   - an attempt that ends without a response (context cancelled or expired,
//     the driver's ErrTimeoutNoResponse) stays in flight as an orphan until
//     the node answers a request sent after it (a node serves in order) or,
//     as the driver cannot tell when the late response arrives, until it has
//     had twice its elapsed time or twice the node's mean response time more,
//     whichever is longer, at most the session timeout;
//   - an attempt that fails on the connection ends its in-flight count and,
//     as the driver's onNodeError, records a response time.
//
// Without the observer (a bare policy) Mark is the end of the attempt and
// every Mark a response. A host the driver skips without an attempt (it went
// down between plan and send) is never observed, so the adapters' HostUp,
// HostDown and RemoveHost reset its count.
//
// What still differs from the driver: the orphans' release time is
// estimated (the driver sees the response); the in-flight count includes the
// time between hand-out and write, where the driver counts from the write
// (microseconds with a connection at hand); the newly-up rule and DC
// failover are not ported (see above).
//
// The replica set comes from the driver's token-aware policy over a round
// robin of the local DC (every host when localDC is ""), the same token
// metadata the other policies use.
type dsCore struct {
	mu  sync.Mutex
	rng *rand.Rand

	hostsMu sync.RWMutex
	hosts   map[string]*dsHost

	now         func() time.Duration // monotonic clock; tests replace it
	minInFlight int64                // busy threshold, the driver's MAX_IN_FLIGHT_THRESHOLD = 10
	window      time.Duration        // RESPONSE_COUNT_RESET_INTERVAL, 200 ms
	observed    atomic.Bool          // the observer is installed: it ends attempts, not Mark
	maxOrphan   time.Duration        // longest an orphan stays in flight (the session timeout)
}

// dsNode is what the core needs of a driver's host (both drivers'
// *HostInfo): its identity.
type dsNode interface {
	HostID() string
	ConnectAddress() net.IP
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

// newDSCore returns the core; seed fixes the replica shuffle.
func newDSCore(seed int64) *dsCore {
	start := time.Now()
	return &dsCore{
		rng:         rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		hosts:       map[string]*dsHost{},
		now:         func() time.Duration { return time.Since(start) },
		minInFlight: 10,
		window:      200 * time.Millisecond,
		maxOrphan:   5 * time.Second,
	}
}

// hostKey names a host: its host ID, else its connect address.
func hostKey[H dsNode](h H) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddress().String()
}

// state returns host k's state, created on first use.
func (c *dsCore) state(k string) *dsHost {
	c.hostsMu.RLock()
	s := c.hosts[k]
	c.hostsMu.RUnlock()
	if s != nil {
		return s
	}
	c.hostsMu.Lock()
	defer c.hostsMu.Unlock()
	if s = c.hosts[k]; s == nil {
		s = &dsHost{}
		c.hosts[k] = s
	}
	return s
}

// resetKey forgets host k's in-flight count (see the type's comment).
func (c *dsCore) resetKey(k string) {
	s := c.state(k)
	s.inFlight.Store(0)
	s.mu.Lock()
	s.orphans = s.orphans[:0]
	s.mu.Unlock()
}

// unhealthy is the driver's isUnhealthy: busy (>= minInFlight in flight)
// and an insufficient response rate (fewer than two responses, or the older
// of the last two is more than window ago).
func (c *dsCore) unhealthy(s *dsHost, now time.Duration) bool {
	if c.inFlight(s, now) < c.minInFlight {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n < 2 || s.last[0] < now-c.window
}

// dsOrder applies the driver's rules to the replicas in place; state gives
// a replica's per-host state.
func dsOrder[S any](c *dsCore, replicas []S, state func(S) *dsHost) {
	n := len(replicas)
	if n < 2 {
		return
	}
	c.mu.Lock()
	c.rng.Shuffle(n, func(i, j int) { replicas[i], replicas[j] = replicas[j], replicas[i] })
	c.mu.Unlock()
	if n == 2 {
		return
	}
	states := make([]*dsHost, n)
	for i, r := range replicas {
		states[i] = state(r)
	}
	now := c.now()
	bad := make([]bool, n)
	nbad := 0
	for i, s := range states {
		if c.unhealthy(s, now) {
			bad[i] = true
			nbad++
		}
	}
	if nbad > 0 && float64(nbad) < float64(n)/2 {
		// Stable partition: healthy first, then unhealthy, each in order.
		reordered := make([]S, 0, n)
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
	if c.inFlight(states[0], now) > c.inFlight(states[1], now) {
		replicas[0], replicas[1] = replicas[1], replicas[0]
	}
}

// dsQueryPlan is the query plan over a token-aware plan (next, whose fallback
// hosts isFallback tells): the ordered replicas (dsOrder), then the
// fallback's hosts. Every host handed out counts one in flight on its state
// and goes out through wrap, which lets its Mark end the attempt.
func dsQueryPlan[S comparable](c *dsCore, next func() S, isFallback func(S) bool, state func(S) *dsHost, wrap func(S, *dsHost) S) func() S {
	var zero S
	replicas, pending := splitReplicas(next, isFallback)
	dsOrder(c, replicas, state)
	var mu sync.Mutex // the drivers serialize NextHost, but hedging wrappers may not
	i := 0
	return func() S {
		mu.Lock()
		defer mu.Unlock()
		var h S
		switch {
		case i < len(replicas):
			h = replicas[i]
			i++
		case pending != zero:
			h, pending = pending, zero
		default:
			h = next()
		}
		if h == zero {
			return zero
		}
		s := state(h)
		s.inFlight.Add(1)
		return wrap(h, s)
	}
}

// wired records that the adapter installed the observer, with the
// session's timeout (0: keep the default) as the orphans' bound.
func (c *dsCore) wired(timeout time.Duration) {
	if timeout > 0 {
		c.maxOrphan = timeout
	}
	c.observed.Store(true)
}

// marked is a handed-out host's Mark: without the observer the first Mark
// (done) ends s's in-flight request and every Mark is a response; with it,
// Mark does nothing of its own.
func (c *dsCore) marked(s *dsHost, done *atomic.Bool) {
	if c.observed.Load() {
		return
	}
	if done.CompareAndSwap(false, true) {
		s.inFlight.Add(-1)
	}
	c.responded(s)
}

// noResponse reports an attempt that ended without the node's response:
// the caller gave up (context) or the driver's client-side timeout
// (timeout, the driver's ErrTimeoutNoResponse).
func noResponse(ctx context.Context, err, timeout error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, timeout) {
		return true
	}
	return ctx != nil && ctx.Err() != nil
}
