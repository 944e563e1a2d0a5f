// Package selector is the interface between the virtual-time simulator
// (internal/vsim) and the replica choices that do not run the product's
// engine: the C3 paper's strategies (internal/paperbase) and the peer
// policies (internal/peers). A Selector sees what a client sees (its own
// sends and answers) plus, for the paper's C3 only, the server's
// piggybacked Feedback, and for the Oracle only, Env.
package selector

import (
	"math/rand/v2"
	"time"
)

// Feedback is what a server piggybacks on a response in the C3 paper's
// model (§3, §6): its queue size when the response left (q_s) and the
// request's service time (1/mu_s). No real Cassandra sends it; only the
// paper's strategies read it.
type Feedback struct {
	Queue       int           // requests waiting or in service at the server when the response left
	ServiceTime time.Duration // this request's service time
	Failed      bool          // the answer was an error (the server failed the request, or it went down); Queue and ServiceTime are 0
}

// Env is what a strategy may read of the modelled cluster besides its own
// measurements: only the Oracle reads it.
type Env interface {
	// Oracle returns server s's true state now: requests queued or in
	// service, and its current mean service time.
	Oracle(s int32) (queue int, meanService time.Duration)
	// Servers is the number of servers.
	Servers() int
}

// Selector is one client's replica choice for the strategies that do not
// run the product's engine (the paper's baselines and the peers). The
// simulator calls it from one goroutine at a time, in virtual time.
type Selector interface {
	// Choose returns the replica (a server index, one of replicas) to send
	// a request to at now, or retryAfter > 0 to be asked again after that
	// long (a rate limiter's backpressure); replicas may be reordered.
	Choose(now time.Duration, replicas []int32) (server int32, retryAfter time.Duration)
	// Sent is called when a request leaves for server at now.
	Sent(now time.Duration, server int32)
	// Done is called when server's response arrives at now: rtt is the
	// response time the client measured, fb the server's piggybacked
	// feedback.
	Done(now time.Duration, server int32, rtt time.Duration, fb Feedback)
}

// SelectorConfig is what a Selector's constructor gets: the client's own
// seeded randomness, the number of clients (the paper's concurrency
// compensation, n), the modelled cluster (Oracle only) and the topology a
// driver reads from system.local and system.peers (the rack-aware port).
type SelectorConfig struct {
	Rand    *rand.Rand
	Clients int
	Env     Env
	// LocalDC and LocalRack are the client's data center and rack; Place
	// returns server s's (nil: every server in LocalDC and LocalRack).
	LocalDC, LocalRack string
	Place              func(s int32) (dc, rack string)
}
