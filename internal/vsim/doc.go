// Package vsim is a discrete-event simulator in virtual time whose clients
// run the product's own engine: each client of a tailroute strategy is an
// internal/route Router (ranking, rate control, health and busy rules, the
// server-load poller) built with the options policy.New() takes, driven as
// a driver's adapter drives it (Pick, the first host, Observe, Mark), on
// the simulator's clock. The C3 paper's strategies (internal/paperbase)
// and the peers (internal/peers) run as selector.Selectors. A run is a pure
// function of its Config: the same Config and seed give the same Result,
// byte for byte, in seconds for the paper's 600,000-request cells.
//
// The engine's seams (internal/route.WithRand, WithSpawn and
// tailroute.WithClock with a tracker.TimerClock) are what make that so:
// the engine's randomness is seeded per client; its background work (the
// poller's supervisor and per-host loops) runs as processes of the
// scheduler; its timers and its backpressure sleep are events. A process
// runs only while it holds the scheduler's baton (see sched.go), so the
// engine sees one goroutine at a time and its hot path is the product's
// own, unchanged.
//
// Hedging (strategies "+hedge"): each client's queries are idempotent and
// hedged by the product's hedger (internal/hedge, as speculative.Wrap and
// gocql's speculative executor drive it): Admit per request; an armed
// request's hedge timer, an event at the hedge's delay, sends the same
// request to the plan's next host while no answer has come; the first
// answer, error or not, is the request's, and the other attempt is
// cancelled at the client (observed as Cancelled and marked nil, as
// gocql v1.7.0 does) while its server still serves it, as CQL has no
// cancel. "tailroute+hedge" follows the engine (tailroute.WithSource(p):
// the burst cap and the load rule on); "token-aware+hedge" follows the
// hedger's own latency recorder, as over any driver's policy.
//
// The ablation strategies "-<rule>" run the engine with one rule removed,
// through its option or, for a rule without one, route.WithoutRules (a
// track.Rule); cmd/vsim's preset ablation runs them all.
//
// # Model
//
//   - Servers: a FIFO queue drained by W workers (default 4); service
//     times exponential with mean 1/mu (default 4 ms), times the server's
//     factors: Slow (a constant factor, optionally for a time), the
//     paper's bimodal fluctuation (every T each server independently at mu
//     or D x mu, p = 1/2, as the authors' simulator absim draws it), and
//     Overload (a factor while more than a queue length is waiting or in
//     service: a node that becomes slow when load moves onto it). A
//     service time is drawn when the service starts.
//   - Pauses (stop the world, staggered over the period): services in
//     progress end a pause later, none starts, a poll waits for the end.
//   - Failing: a share of a server's requests answered at once with an
//     error (Cassandra's Overloaded), without service, for a time. Down: a server's
//     queued and running requests are lost (errors at their clients), the
//     clients are told at once (the driver's host-down event) and the
//     server gets nothing until it is up.
//   - Load: Poisson arrivals at Utilization x Servers x W x the mean
//     service rate ((mu + D mu)/2 with the fluctuation, as absim), or
//     absim's own (Config.Generators: each of N generators waits a whole
//     number of milliseconds, Poisson-distributed, between its requests);
//     each request to a client drawn uniformly or with demand skew (a
//     share of the clients makes 80 % of the requests); a random key; the
//     network's one-way latency (default 250 us) both ways; read repair
//     (Config.ReadRepair) as absim's shadow reads.
//   - Replica groups: Uniform (one evenly spaced token per server: RF
//     consecutive servers from a uniformly random first, as absim) or
//     Ring (16 random tokens per server); SimpleStrategy (with zones
//     NetworkTopologyStrategy).
//   - The server-load signal: a poll from the engine's poller reaches the
//     server a network hop later, reads its ReadStage row of
//     system_views.thread_pools as the real simulator serves it (active =
//     busy workers, pending = waiting, active_tasks_limit = W, completed),
//     without queueing for a worker, and comes back a hop later.
//   - The Oracle (strategy "oracle") reads each server's true queue and
//     current mean service time.
//   - Zones (Config.Racks, issue 43): server i in rack (i mod Racks)+1 of
//     dc1, each client in a rack of Config.ClientRacks (default rack1),
//     replica groups by NetworkTopologyStrategy dc1:RF (one replica per
//     rack while RF <= Racks), and every message between a client and a
//     server (request, answer, read repair, server-load poll) one way
//     SameRack (default 50 us) or OtherRack (500 us) instead of Network,
//     times 1 + Jitter*u (default 0.2, u uniform in [-1, 1), drawn per
//     message from the run's seed), as ycsb-lite's sim.Network has it.
//     The engine's hosts carry their racks; strategy "tailroute-rack" is
//     told the client's (WithLocalRack), "rack-aware" is gocql's
//     TokenAwareHostPolicy(RackAwareRoundRobinPolicy) with the client's
//     rack (internal/peers.RackAware; ycsb-lite's gives every client the
//     first node's rack, rack1). Result.OutOfZone counts the
//     requests sent to a server out of their client's rack. Pauses can be
//     limited to some servers (Config.PauseServers, staggered over them).
//
// Latency is measured from a request's arrival at its client to its
// answer there (backlog and backpressure waits included); answers before
// Config.Warmup are not measured.
//
// # Limits
//
// No driver: connection pools, stream ids, a driver's own timeouts and
// retries are not modelled; an attempt that fails is not retried, and
// hedging is the product's hedger only (not a driver's own speculative
// execution). No coordinator forwarding: the chosen replica
// serves the request (the paper's model). No CPU cost of the client or of
// the poll. Clients learn of a server going down at once. The network's
// latency is constant (with zones, per pair of racks plus its jitter): no
// bandwidth, no queueing in the network, no loss, and one data center (no
// latency between DCs); the cost of crossing zones is counted in
// requests, not bytes.
// The engine's backpressure sleep parks the request's event, not a thread:
// what the client does meanwhile goes on, as with goroutines.
package vsim
