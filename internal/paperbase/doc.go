// Package paperbase holds the C3 paper's own replica-selection strategies
// (Suresh et al., "C3: Cutting Tail Latency in Cloud Data Stores via
// Adaptive Replica Selection", NSDI'15, §3-§4 and §6) as driver-free
// selector.Selector implementations, ported from the authors' simulator
// absim (github.com/lalithsuresh/absim), branch table. The published
// Fig 14/15 sweep is factorial.py at commit c5d5488 (2015-02-22), where
// C3 = "expDelay", LOR = "pending", RR = "round_robin", ORA =
// "clairvoyant"; table's HEAD 1a8f9d5 only renames them (C3, LOR, RR,
// ORA) and rounds token counts and waits to 1e-9 ms, which this port
// follows. Line references are to simulations/client.py at 1a8f9d5.
// None of tailroute's additions to C3 are here.
//
// Strategies:
//
//   - C3 (NewC3, NewC3With; paper §3.1-§3.3, Algorithms 1-2; absim
//     Client.computeExpectedDelay 259-278, updateEma 311-320, updateRates
//     322-369, BackpressureScheduler 445-507, RateLimiter 510-542,
//     ReceiveRate 545-565): Ψ_s = (R_s - 1/μ̄_s) + q̂_s³/μ̄_s with
//     q̂_s = 1 + os_s·n + q̄_s, n = number of clients, EWMA weight 0.9 on
//     the newest sample, score 0 before any feedback; replicas tried in
//     score order (stable), the first with a token gets the request;
//     per-server token bucket (10 tokens, initial rate 10 per δ = 20 ms),
//     receive rate EWMA (0.1) per δ, CUBIC update on every response
//     (β = 0.2, γ = 4e-6 per ms³, s_max = 10, hysteresis 2δ, floor 0.01).
//   - LOR (NewLOR; paper §6; absim client.py:176-178): fewest requests in
//     flight from this client; no rate limiter (the runs omit
//     --backpressure).
//   - RRRateLimited (NewRRRateLimited, NewRRRateLimitedWith; paper §6 "RR";
//     absim client.py:170-175): round robin per replica group with C3's
//     rate limiter, CUBIC adaptation and backpressure, since the published
//     runs start RR with --backpressure (factorial.py@c5d5488:106-110).
//     It is named so to tell it from a plain round robin.
//   - ORA (NewORA; paper §6 "Oracle"; absim client.py:211-217): least
//     (1 + requests queued or in service) × the server's current mean
//     service time, from Env.Oracle at choice time; no rate limiter.
//
// Differences from absim (all strategies keep absim's tie-breaking: the
// first in replicas' order, which absim's stable sorts keep as the
// replica group's ring order):
//
//  1. The backlog queue is the simulator's. absim keeps, per client and
//     per replica group (keyed by the group's first replica), a FIFO
//     whose head is retried after minDurationToWait. Here Choose returns
//     server -1 and retryAfter = that wait (the shortest wait for a
//     token over the replicas, rounded up to 1 ns; absim rounds to 1e-9
//     ms); the simulator must keep absim's per-(client, group) FIFO, ask
//     again only for its head, after retryAfter, and after a send go on
//     with the next head at the same instant. Latency should include the
//     backlog time (absim measures from the request's creation).
//  2. absim forces the waited-for replica's bucket to tokens = 1,
//     lastSent = wake time after the wait (client.py:497-499). Here the
//     force is applied at the group's next Choose at or after the wake
//     time (the group being replicas[0]), backdated to the wake time.
//  3. Choose consumes the token (absim's tryAcquire + update at send):
//     the simulator must send to the server Choose returns. Sent to any
//     other server is taken as a read repair ("shadow read"): absim's
//     forceUpdates (tokens = max(tokens-1, 0), lastSent kept). The
//     Selector does not generate read repairs: absim sends one to every
//     other replica of the group after 10 % of sends (shadowReadRatio
//     0.1, all strategies); the simulator must, calling Sent and Done
//     for them (they count in os_s, feedback and the receive rate).
//  4. absim piggybacks q_s = requests still waiting (not in service)
//     when the response leaves (server.py:60). Feedback.Queue counts
//     waiting or in service, so C3 uses max(0, Queue - ServerSlots) with
//     ServerSlots = 4 (absim's serverConcurrency): exact if Queue is
//     counted after the departing request freed its slot and the next
//     waiter took it.
//  5. absim's receive rate is a process ticking every δ from time 0;
//     here the ticks are applied lazily at the server's next response.
//     A response at exactly a tick instant counts in the next interval
//     (absim's order at equal times depends on SimPy's event order).
//  6. absim keeps EWMAs of R_s and of every piggybacked metric; C3 keeps
//     only R_s - 1/μ_s (absim's "nw", the same value since the EWMA is
//     linear with one weight and one first sample), q_s and 1/μ_s.
//  7. Internally time is absim's float milliseconds (γ is per ms³);
//     Score is in ms, ORA's Cost in ns (only its order matters).
//  8. RR's rotation index advances at every Choose (absim: every sort,
//     backlog retries included), per group replicas[0].
//
// Hot path: Choose, Sent and Done allocate nothing (per-server slices are
// sized from Env.Servers() at construction). None of the strategies draws
// random numbers (absim's C3, LOR, RR and ORA draw none either).
package paperbase
