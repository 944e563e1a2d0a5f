package peers

import (
	"math/rand/v2"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// DataStax is a port of the DataStax Java driver 4.x
// DefaultLoadBalancingPolicy (newQueryPlan with slow-replica avoidance on,
// the driver's default), from github.com/apache/cassandra-java-driver 4.x
// at f98e3433b91b49e0facfbce8e94e01e304714968 (4.18.1+21):
// core/src/main/java/com/datastax/oss/driver/internal/core/loadbalancing/DefaultLoadBalancingPolicy.java
// (the rule, isUnhealthy, updateResponseTimes, the RequestTracker) and,
// in the same tree, BasicLoadBalancingPolicy.java (the round robin of the
// rest of the local DC) and internal/core/util/ArrayUtils.java
// (shuffleHead, bubbleDown).
//
// The rule, for every query:
//
//   - the live local replicas of the routing key come first, shuffled;
//   - with exactly two replicas that shuffle is the whole rule;
//   - with three or more, a replica is unhealthy when it has >= 10 requests
//     in flight (MAX_IN_FLIGHT_THRESHOLD) and fewer than two responses in
//     the last 200 ms (RESPONSE_COUNT_RESET_INTERVAL: the older of its last
//     two responses is more than 200 ms old, or it has fewer than two);
//     while unhealthy replicas are fewer than half of the replicas they move
//     to the end of the replica group (order kept), else nothing moves; then
//     the first two replicas are compared by requests in flight and the
//     less loaded one goes first (power of two choices);
//   - the rest of the local DC follows, rotated round robin.
//
// A response is what the source's RequestTracker records: onNodeSuccess,
// and onNodeError except for a client-side timeout (DriverTimeoutException).
// Done is such a response; an attempt that ended without one (the client
// stopped waiting: a timeout or a cancelled speculative execution) is
// NoResponse. In flight is what the driver reads from the node's connection
// pool: a request holds its stream id from write until the node's response,
// also after a client timeout or cancellation, whose stream id stays
// orphaned until the response comes. Here a request is in flight from Sent
// to Done or NoResponse, and an attempt that ended with NoResponse stays in
// flight as an orphan until the node answers a request sent after it (a
// node serves in order) or, as a client cannot tell when the late response
// arrives, until it has had twice its elapsed time or twice the node's mean
// response time (an EWMA of Done's response times, weight 0.1) more,
// whichever is longer, at most NoResponse's bound.
//
// Differences from the source:
//
//   - The orphans' release time is estimated (the driver sees the
//     response), and in flight counts from Sent (the ycsb-lite adapters
//     call it when the plan hands the host out, the simulator when the
//     request leaves), where the driver counts from the write.
//   - Order and Choose see a query's replicas only: the rest of the local
//     DC round robin is the caller's (the ycsb-lite adapters' fallback; the
//     simulator sends only to replicas). DC failover (maybeAddDcFailover)
//     is not ported.
//   - Not ported: the preference against a replica that came up less than
//     a minute ago (NEWLY_UP_INTERVAL: such a replica, first or second, is
//     moved back with probability 3/4 and the unhealthy rule is skipped);
//     ycsb-lite starts every node at once and the simulator has no up
//     event, so it would never act.
//   - Randomness from SelectorConfig.Rand (the source's ThreadLocalRandom;
//     the shuffle draws as shuffleHead does), time from the now arguments
//     (the source's nanoTime).
//   - Reset (a node down or removed) zeroes its in-flight count and forgets
//     its orphans, as the driver closes its pool; its response times are
//     kept, as in the source.
type DataStax struct {
	rng   *rand.Rand
	hosts []dataStaxHost
}

// The source's constants, and the bound on a host's orphans (the driver
// closes a channel with too many orphaned stream ids).
const (
	dataStaxBusy       = 10                     // MAX_IN_FLIGHT_THRESHOLD
	dataStaxWindow     = 200 * time.Millisecond // RESPONSE_COUNT_RESET_INTERVAL
	dataStaxMaxOrphans = 1024
)

// dataStaxHost is one host's in-flight count, orphans and last two
// responses.
type dataStaxHost struct {
	inFlight int32            // Sent, not ended by Done or NoResponse
	n        int32            // responses recorded, up to 2
	last     [2]time.Duration // the last two responses: [0] the older
	meanResp float64          // EWMA of Done's response times (ns), for the orphans' release
	orphans  []dataStaxOrphan // attempts ended by NoResponse, not yet released
}

// dataStaxOrphan is an attempt the client stopped waiting for: in flight
// until the node answers a request sent after it, or until releaseAt.
type dataStaxOrphan struct {
	sent, releaseAt time.Duration
}

// NewDataStax returns the policy; cfg.Rand shuffles the replicas.
func NewDataStax(cfg selector.SelectorConfig) *DataStax {
	return &DataStax{rng: cfg.Rand}
}

func (p *DataStax) host(s int32) *dataStaxHost {
	p.hosts = grow(p.hosts, s)
	return &p.hosts[s]
}

// InFlight is server s's requests in flight at now (the source's
// getInFlight): attempts Sent and not ended, plus orphans not released by
// now.
func (p *DataStax) InFlight(now time.Duration, s int32) int {
	if int(s) >= len(p.hosts) {
		return 0
	}
	h := &p.hosts[s]
	k := 0
	for _, o := range h.orphans {
		if o.releaseAt > now {
			h.orphans[k] = o
			k++
		}
	}
	h.orphans = h.orphans[:k]
	return int(h.inFlight) + k
}

// Responses is how many responses server s has recorded, up to two (the
// source keeps the times of the last two).
func (p *DataStax) Responses(s int32) int {
	if int(s) >= len(p.hosts) {
		return 0
	}
	return int(p.hosts[s].n)
}

// Unhealthy is the source's isUnhealthy for server s at now: busy (>= 10
// in flight) and an insufficient response rate (fewer than two responses,
// or the older of the last two more than 200 ms before now).
func (p *DataStax) Unhealthy(now time.Duration, s int32) bool {
	if p.InFlight(now, s) < dataStaxBusy {
		return false
	}
	h := &p.hosts[s]
	return h.n < 2 || h.last[0] < now-dataStaxWindow
}

// Order applies the rule to replicas in place (see the type's comment); it
// returns len(replicas) (no host is excluded).
func (p *DataStax) Order(now time.Duration, r []int32) int {
	n := len(r)
	shuffle(p.rng, r)
	if n <= 2 {
		return n
	}
	bad := 0
	for _, s := range r {
		if p.Unhealthy(now, s) {
			bad++
		}
	}
	if bad > 0 && 2*bad < n {
		// The source's loop: from the back, each unhealthy replica bubbles
		// down to just before those already moved (a stable partition).
		moved := 0
		for i := n - 1; i >= 0 && moved < bad; i-- {
			if p.Unhealthy(now, r[i]) {
				moveToBack(r[:n-moved], i)
				moved++
			}
		}
	}
	if p.InFlight(now, r[0]) > p.InFlight(now, r[1]) {
		r[0], r[1] = r[1], r[0]
	}
	return n
}

// Choose returns the first replica of Order's plan.
func (p *DataStax) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	p.Order(now, replicas)
	return replicas[0], 0
}

// Sent counts one request in flight on server s.
func (p *DataStax) Sent(_ time.Duration, s int32) { p.host(s).inFlight++ }

// end ends one attempt's in-flight count (never below zero).
func (h *dataStaxHost) end() {
	if h.inFlight > 0 {
		h.inFlight--
	}
}

// Done is server s's response at now (success or an error the node sent)
// to an attempt sent rtt before: it ends the attempt, releases the orphans
// sent before it and records the response (the source's
// updateResponseTimes).
func (p *DataStax) Done(now time.Duration, s int32, rtt time.Duration, _ selector.Feedback) {
	h := p.host(s)
	h.end()
	if h.meanResp == 0 {
		h.meanResp = float64(rtt)
	} else {
		h.meanResp += 0.1 * (float64(rtt) - h.meanResp)
	}
	sent := now - rtt
	k := 0
	for _, o := range h.orphans {
		if o.sent > sent { // sent after this request: not known to be answered
			h.orphans[k] = o
			k++
		}
	}
	h.orphans = h.orphans[:k]
	if h.n < 2 {
		h.last[h.n] = now
		h.n++
	} else {
		h.last[0], h.last[1] = h.last[1], now
	}
}

// NoResponse ends at now an attempt of server s, elapsed long, that ended
// without the node's response (a client timeout or a cancellation): it is
// not a response and stays in flight as an orphan until s answers a request
// sent after it or until max(2 x elapsed, 2 x the mean response time) more
// has passed, at most bound.
func (p *DataStax) NoResponse(now time.Duration, s int32, elapsed, bound time.Duration) {
	h := p.host(s)
	h.end()
	wait := min(max(2*elapsed, time.Duration(2*h.meanResp)), bound)
	if len(h.orphans) < dataStaxMaxOrphans {
		h.orphans = append(h.orphans, dataStaxOrphan{sent: now - elapsed, releaseAt: now + wait})
	}
}

// Reset zeroes server s's in-flight count and forgets its orphans (see the
// type's comment).
func (p *DataStax) Reset(_ time.Duration, s int32) {
	if int(s) < len(p.hosts) {
		h := &p.hosts[s]
		h.inFlight = 0
		h.orphans = h.orphans[:0]
	}
}
