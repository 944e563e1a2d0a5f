// Package policy is a drop-in gocql.HostSelectionPolicy (gocql v1.7.0) that
// routes each request to the replica expected to answer fastest, after C3
// (Suresh et al., NSDI'15) and the DataStax drivers' busy-node avoidance:
//
//	p, err := policy.New()             // C3, validated options
//	cluster := gocql.NewCluster(hosts...)
//	err = policy.Wire(cluster, p)      // policy + query/batch observers
//	session, err := cluster.CreateSession()
//	...
//	err = p.Err()                      // problems found while serving (unknown local DC, shared policy)
//
// A Policy serves one session (Wire and Init return or report an error
// otherwise). A local DC (WithLocalDC) that no host is in is logged and
// reported by Err, and the policy falls back (see WithLocalDC) rather than
// leave gocql with no host to try.
//
// Query plan (Pick): the query's local replicas (token-aware: Murmur3 token of
// the routing key, replica placement of the keyspace's SimpleStrategy or
// NetworkTopologyStrategy) ranked by the strategy, then remote replicas (only
// WithRemoteDCs), then the remaining local hosts, then the remaining remote
// hosts (only WithRemoteDCs), from a random start. Down hosts are skipped.
// Without token information (no routing key, unknown keyspace, partitioner
// other than Murmur3) a random sample of up to MaxCandidates local hosts is
// ranked instead of the replicas.
//
// Strategies: C3 (default): health first, then sort by Psi_s = R_s - 1/mu_s +
// qeff^3/mu_s with qhat = 1 + os_s*w + q_s and qeff = 1 + (qhat-1)/W_s (see
// "C3 with W_s workers" below); busy hosts last while a majority
// is healthy; with probability ProbeProbability a replica without a response
// for ProbeAfter goes first, and one ranked last for its health goes first
// once per ProbeAfter (recovery probing, WithProbe); then Algorithm 1: the first replica within its CUBIC sending
// rate, else wait for the next rate window at most MaxBackpressureWait and
// send to the best replica anyway. P2C: health first, then DataStax power of
// two random choices on in-flight counts, busy hosts last, probes as for C3.
// RoundRobin: rotation over the replicas, the baseline.
//
// Failures (after the success-prioritized fallback cascade): a replica whose
// rolling success rate is materially below the best candidate's (more than
// HealthTolerance, 5 %, below) is ranked behind the healthier ones unless
// the cascade's weighted pick (weight (rate/best)^3) draws it, whatever its
// score or in-flight count: next to two healthy replicas, one failing half
// of its requests is a first choice in about 6 % of picks, one failing all
// only through probes. The score itself ignores health: a penalty such as
// dividing it by successRate^3 loses to qhat^3 (one more request in flight
// on a healthy replica outweighs a 50 % failure rate). What an error's latency
// contributes, by kind (classify, tracker.Host.Observe):
//
//	Overloaded, Unavailable, other server  Failure; answered at once, so the
//	  errors                               latency is ignored unless above R_s
//	read/write timeout (after the server   Failure; the latency is above R_s
//	  waited)                              and raises it
//	client timeout (ErrTimeoutNoResponse)  Lost; raises R_s (latency >= timeout)
//	broken or refused connection           Lost; at once, ignored
//
// An error's latency is a lower bound of what a success would have taken:
// it moves R_s only upward, so fast failures never make a host look fast.
// Recovery: three failures in a row make a host failing now, and the first
// success after them healthy again (the streak rule, see package tracker);
// a host ranked last for failing is probed once per
// ProbeAfter per client, so one that stops failing is a first choice again
// within ProbeAfter. A host that fails only part of its requests recovers
// as its rolling success buckets (6 x 500 ms) fill with successes. After a
// slow spell, R_s weighs a sample by the age of the estimate
// (tracker.Config.AgeDecay), so a host avoided as slow and fast again is
// seen to be fast after a few answers; and no sample counts above 4 x R_s
// (tracker.Config.SampleCap), so the late answers of a stall (a GC pause)
// do not keep the host avoided once it answers normally again.
//
// Two departures from the paper's Algorithms 1 and 2, both measured (see
// docs/experiments/): a stalled host (one that owes responses and has been
// silent for max(StallMin, StallFactor*R_s), tracker.View.Silence) is never
// "within rate" — its rate only adapts when responses return, so a frozen
// host would otherwise look like spare capacity to Algorithm 1; and the
// multiplicative decrease of Algorithm 2 applies only while the client sends
// at its full rate — below it, rrate measures the client's own demand and
// would pin srate to the last window's demand. Without these, C3 sent
// requests to paused nodes and throttled itself onto slower replicas (gc-pauses
// p99 4x and bimodal p99 2.4x the fixed version's).
//
// Which signal drives what:
//
//	NextHost (host handed out)  os_s += 1; one token of the host's sending rate
//	Mark, first call            os_s -= 1 (exactly once per hand-out; later
//	                            Marks of a Retry on the same host do not
//	                            decrement again)
//	Mark, without Wire          also the measurement: latency since NextHost
//	                            (or since the previous Mark), outcome from the
//	                            error; Mark(nil) cannot tell success from a
//	                            cancelled attempt, hence Wire
//	QueryObserver/BatchObserver the measurement with Wire: End-Start of each
//	(installed by Wire)         attempt and its real error -> R_s, latency
//	                            histograms (LatencyQuantile), success buckets,
//	                            last-response time, receive rate, Algorithm 2.
//	                            Cancelled attempts (context cancelled/expired,
//	                            speculative losers) are orphans: the host
//	                            still serves them (CQL has no cancel), so they
//	                            count with os_s in qhat and the busy rule
//	                            until the host answers a later request, and
//	                            their elapsed time raises R_s when above it
//	RecordFeedback(iter)        EWMA of server-reported q_s and 1/mu_s
//	WithServerLoad (opt-in)     q_s, 1/mu_s and W_s polled from each host's
//	                            system_views.thread_pools (Cassandra 4.0+),
//	                            q_s and 1/mu_s faded with the sample's age; see
//	                            serverload.go for the derivation and cost
//	HostDown / HostUp           skip / clean slate (stats reset, os_s reset)
//
// Without server feedback or polled server load C3 uses client-side estimates: 1/mu_s falls back to
// R_s (the whole response time is taken as service time) and q_s to 0, so
// Psi_s = qeff^3 * R_s with qhat = 1 + os_s*w. A host without samples is
// scored with the cluster-wide R EWMA.
//
// C3 with W_s workers. The paper models each server as one queue: a request
// waits one service time for each of the qhat - 1 requests ahead of it.
// A Cassandra read stage serves W_s requests at once (concurrent_reads;
// active_tasks_limit in system_views.thread_pools), so the queue ahead
// drains W_s times as fast and the score uses qeff = 1 + (qhat-1)/W_s
// (W_s = 1: the paper's score). The estimate stays pessimistic (all workers
// assumed busy), so every request in flight still costs something and a
// client still spreads its requests; what changes is that a fast node with
// a few requests in flight no longer loses to an idle node several times
// slower (with W_s = 1 and w = 1, one request in flight on a 5 ms node
// scores 8 x 5 = 40 ms, behind an idle 20 ms node). W_s comes from each
// host's polled active_tasks_limit (WithServerLoad), else from
// WithServerWorkers, default 1: without a signal the client cannot tell a
// node's real parallelism, and an assumed W_s above it removes the queue
// penalty that makes C3 leave a node whose requests pile up. W_s counts
// only while the node answers: once it has owed responses for a silence
// longer than its R_s, W_s is scaled by R_s/silence (never below 1), so a
// paused node is scored as a single queue within a few R_s.
//
// The tail term. C3's Psi_s estimates a request's mean response time; the
// policy ranks by Psi_s + k/mu_s (WithTailTerm, default k = 2), a tail
// estimate: a host's service time spreads in proportion to its mean (for
// an exponential service time 3/mu_s is the 95th percentile, hence k = 2),
// so at equal Psi_s the host with the longer 1/mu_s has the longer tail.
// Without a server signal the score is R_s*(qeff^3 + k): with W_s = 1 and
// w = 1, one request in flight on a 5 ms replica scores 5*(8+2) = 50 ms,
// ahead of an idle 25 ms replica (25*3 = 75 ms; without the term 40 ms
// against 25 ms), and two in flight (5*29 = 145 ms) still lose to it. The
// cube of a queue outgrows k quickly, so the term decides only between
// short queues: with w clients counted per request in flight (w > 1) or
// long queues the order is the paper's. It is a departure from the paper,
// whose exponent b = 3 makes clients less greedy for a low 1/mu_s; the
// term makes them somewhat greedier while queues are short.
//
// Defaults: strategy C3, w (ConcurrencyWeight) 1, busy at 10 in flight and
// 200ms without response, stalled after max(10ms, 4*R_s) of silence, CUBIC delta 20ms, beta 0.2, saddle 100ms,
// hysteresis 40ms, s_max 10, initial rate 100/delta, MaxBackpressureWait 1ms,
// tail term k 2,
// jitter 0.05, probe probability 0.01 after 1s (failing hosts: one probe per
// 1s), MaxCandidates 8, EWMA alpha 0.1 aged with tau 250ms, HealthTolerance
// 0.05, success buckets of 500ms.
//
// This package is the gocql v1 adapter (host and query types, keyspace
// metadata, error classes, observers, Wire and the session rules) over a
// driver-free engine (internal/route); package
// github.com/tailroute/tailroute/apache/policy is the same policy for the
// Apache Cassandra Go driver v2. Neither adapter builds the other's driver.
//
// The hot path (Pick, NextHost, Mark) allocates nothing, for idempotent
// queries too (per-query state is pooled, reference counted while a
// speculative execution may still use it; see Pick), and takes no lock
// shared between hosts.
package policy
