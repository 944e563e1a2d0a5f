// Package tailroute holds what both Cassandra driver adapters share: the
// options (each declared here once), their defaults, the ranking
// strategies, the snapshot types the policies and hedgers report, and the
// specification of the routing engine. It imports no Cassandra driver.
//
// # Use
//
// Pick the adapter of your driver and configure it with the options of this
// package:
//
//	import (
//		"github.com/tailroute/tailroute"
//		"github.com/tailroute/tailroute/policy"      // gocql v1.7.0
//		"github.com/tailroute/tailroute/speculative" // optional hedging
//	)
//
//	p, err := policy.New(tailroute.WithLocalDC("dc1")) // options validated here
//	cluster := gocql.NewCluster(hosts...)
//	err = policy.Wire(cluster, p)                      // policy + query/batch observers
//	h, err := speculative.New(tailroute.WithSource(p)) // optional: budgeted hedging
//	err = speculative.Wire(cluster, h)                 // after policy.Wire
//	session, err := cluster.CreateSession()
//	...
//	err = p.Err() // problems found while serving (unknown local DC, shared policy)
//
// With the Apache Cassandra Go driver v2 the same lines use
// github.com/tailroute/tailroute/apache/policy and
// github.com/tailroute/tailroute/apache/speculative (where a hedged
// execution is prepared with Hedger.Arm). With no option at all,
// policy.New() gives the C3 strategy with every default below, server-load
// polling included (see Server load).
//
// The routing options (WithStrategy, WithLocalDC, WithTailTerm,
// WithServerLoad, ...) are given to policy.New, the hedging options
// (WithSource, WithBudget, WithBurstCap, ...) to speculative.New, and
// WithClock to either; giving an option to the other kind is an error.
// Every option's doc states its default (the Default* constants) and its
// allowed range; a bad value is reported by New, naming the option, the
// field, the value and the allowed range.
//
// A query is routed token-aware when the policy knows its partition: a
// statement with bound ? markers (or a routing key set on the query) and
// its keyspace (the session's, or a qualified table name). A query with
// literal values is ranked over a sample of local hosts instead (counted as
// Counters.Unrouted).
//
// # Query plan
//
// A plan (the driver's Pick) is the query's local replicas (Murmur3 token of
// the routing key, replica placement of the keyspace's SimpleStrategy or
// NetworkTopologyStrategy) ranked by the strategy, then the remote replicas
// (only WithRemoteDCs), then the remaining local hosts, then the remaining
// remote hosts (only WithRemoteDCs), from a random start. Down hosts are
// skipped. Without token information (no routing key, unknown keyspace,
// partitioner other than Murmur3) a random sample of up to MaxCandidates
// local hosts is ranked instead of the replicas.
//
// Strategies. C3 (the default): health first (see Health), then by score
// (see The C3 score), the known-slow rule (see The C3 score) and the zone
// rule (see Zones), a failing replica's recovery probe first (WithProbe),
// then the rate rule (see Rate control). P2C: health first, then the
// DataStax drivers' power of two random choices on in-flight counts, busy
// hosts last while a majority of the replicas is not busy (WithBusy),
// probes as for C3. RoundRobin: rotation over the replicas, the baseline.
//
// Every rule of C3 below names the case that needs it ("needed by"): the
// cell where the engine without that rule does worst, as its p99 over the
// p99 with it, from cmd/vsim's ablation preset (5 simulated nodes, 4
// clients, seeds 1-12 pooled) unless the case names another cell
// (docs/experiments/ablation.md has every rule in every cell).
//
// # The C3 score
//
// C3 (Suresh et al., NSDI'15) ranks host s by
//
//	Psi_s = R_s - 1/mu_s + qeff_s^3/mu_s + k/mu_s
//	qhat_s = 1 + os_s*w + q_s
//	qeff_s = 1 + (qhat_s - 1)/W_s
//
// where R_s is the EWMA of the host's response times as this client sees
// them, 1/mu_s the EWMA of its service time, q_s the EWMA of its queue
// length, os_s the requests this client has in flight on it, w the
// concurrency weight (WithConcurrencyWeight), W_s the requests the host
// serves at once and k the tail term (WithTailTerm). Without a server
// signal (no polled server load: WithServerLoad(false), a cluster without
// system_views, or no fresh sample) 1/mu_s is R_s (the whole response time is
// taken as service time) and q_s is 0, so Psi_s = R_s*(qeff_s^3 + k). A host
// without samples is scored with the cluster-wide R EWMA. Every score is
// ranked in order; exact ties are broken at random.
//
// W_s workers. The paper models each server as one queue: a request waits
// one service time for each of the qhat_s - 1 requests ahead of it. A
// Cassandra read stage serves W_s requests at once (concurrent_reads;
// active_tasks_limit in system_views.thread_pools), so the queue ahead
// drains W_s times as fast: qeff_s (W_s = 1 is the paper's score). The
// estimate stays pessimistic (all workers assumed busy), so every request
// in flight still costs something and a client still spreads its requests.
// W_s comes from each host's polled active_tasks_limit (see Server load),
// else from WithServerWorkers (default 1): without a signal the client
// cannot tell a node's real parallelism, and an assumed W_s above it
// removes the queue penalty that makes C3 leave a node whose requests pile
// up. W_s counts only while the node answers: once it has owed responses
// for a silence longer than d*R_s, W_s is scaled by d*R_s/silence (never
// below 1), so a paused node is scored as a single queue within a few R_s.
// d is w/2 within [1/2, 1] (w the concurrency weight in force): each
// request in flight counts w times in qhat_s, so a shrinking W_s repels w
// times as hard, and a single client (w = 1) can act on half a response
// time of silence where clients counted w >= 2 times wait a whole one.
// Needed by: the polled W_s, two-slow (1.11x with W_s = 1; slow-node
// p99.9 1.22x); W_s and w_eff shrinking with silence, gc-pauses (3.2x).
//
// The tail term. Psi_s without k estimates a request's mean response time;
// k/mu_s makes it a tail estimate: a host's service time spreads in
// proportion to its mean (for an exponential service time 3/mu_s is the
// 95th percentile, hence the default k = 2), so at equal Psi_s the host with
// the longer 1/mu_s has the longer tail. With W_s = 1 and w = 1, one request
// in flight on a 5 ms replica scores 5*(8+2) = 50 ms, ahead of an idle 25 ms
// replica (25*3 = 75 ms; without the term 40 ms against 25 ms), and two in
// flight (5*29 = 145 ms) still lose to it. The cube of a queue outgrows k
// quickly, so the term decides only between short queues; with w > 1 or
// long queues the order is the paper's. k = 0 is the paper's score.
// Needed by: two-slow (1.11x with k = 0; slow-node p99.9 1.12x).
//
// Known-slow replicas. The cube repels a herd early, and where one replica
// serves several times slower than another that trade is a loss: with
// W_s = 1 and two requests in flight a 4 ms replica scores (27+2) x 4 ms,
// behind an idle 20 ms one at (1+2) x 20 ms, though the request it would
// take waits about 3 x 4 ms there. With server-load polling on (Server
// load), a replica whose service time is at least 3 times another eligible
// replica's is not ranked first while its expected response time
// (R_s - 1/mu_s + qeff_s/mu_s + k/mu_s, the score without the cube, with
// R_s and 1/mu_s raised to that service time) is over 1.5 times that
// replica's: the one with the least expected response time goes first. As
// the fast replica's queue grows its expected response passes that bound
// and the score's order stands again. The service time of the replica
// ranked first is its polled 1/mu_s or, if higher, its R_s but at most
// 1.5 times the median of the client's latencies there; that
// of the other replica is its polled 1/mu_s (without one, its R_s), at
// least that median (medians over the latency window, from 3 samples on).
// No one estimate makes this call alone. The polled 1/mu_s of a replica
// the clients seldom use rests on a few busy instants (active_tasks is an
// instant count) and reads anywhere from a fifth to twice the true mean,
// and for the first polls of a session there is none. The evidence fades
// as the replica is avoided, with R_s (tracker.Config.ForgetAfter), so a
// replica that has recovered is tried again (measured case: vsim -preset
// ablation, recovering-85, where evidence that does not fade keeps the
// recovered node out: 2.3 times the p99 of an overloaded cluster). A
// stop-the-world pause lifts both, R_s with its late answers and the
// polled 1/mu_s with workers busy and nothing completed, while a few late
// answers leave the median where it was; 1.5 times the median is about the
// mean of an exponential service time (1/ln 2 = 1.44 times its median).
// Without polling the score alone decides. Needed by: two-slow (1.16x
// without the rule; slow-node p99.9 1.13x). What it costs: recovering at
// 85 % load, 0.71x without it.
//
// The concurrency weight. w is the number of clients in the paper. By
// default (WithConcurrencyWeight(0)) it is measured: with polled server load
// (see Server load), w is the hosts' completed requests over this client's
// own answers from them, summed over every host's poll pairs with weight
// exp(-age/5s), at least 1, once 20 own answers are in the sums; until
// then, and without polls, w = 1 (this process is the only client). A
// cluster of 300 such clients measures about 300 (writes count once per
// replica, so a write-heavy client overstates it; Qmax bounds what it
// costs). Measured case: the C3 paper's §6 cells in the virtual-time
// simulator (go run ./cmd/vsim -preset fig14), where w = 1 treats
// 300 clients as one and herds them (docs/RESULTS.md); with 4 clients,
// gc-pauses (1.09x with w = 1). With polled server
// load the weight in force is
//
//	w_eff = min(w, max(1, Qmax))
//
// where Qmax is the longest smoothed polled queue (pending + active of
// ReadStage and MutationStage) over the hosts: each host's queue is
// smoothed from w, quick to rise (half way to a longer queue at once) and
// slow to fall (a fifth of the way to a shorter one per poll). Under load
// w stands; at low load a request in flight on a fast host no longer counts
// as w of them. A host silent for longer than its R_s keeps R_s/silence of
// w - w_eff, so a paused host's requests in flight count as w again within
// a few R_s. A host's queue counts while its latest poll is at most 6 of
// its poll intervals old; without any, w again. w_eff is needed by:
// two-slow (1.03x with w; slow-node p99.9 1.13x).
//
// Fast answers. For a client that is one of many (w at least 32, see Rate
// control) an answer faster than R_s moves R_s with the weight 0.9, the
// weight C3 gives every sample, where tracker.Config.AgeDecay gives it
// about 0.45 (a client of 150 hears from each of 50 hosts every 100-170
// ms); an answer slower than R_s keeps that weight. Such a client's hosts
// are loaded by the others and change queue and phase between two of its
// answers. An answer can only be fast while the host is fast and its queue
// short; a slow one may be a single long service time (an exponential
// service time's tail) and says less. So a host that is fast again is used
// again from its first fast answer, and left at the pace of its slow ones.
// Needed by: Figures 14 and 15 (cmd/vsim -preset fig14 and fig15, seeds
// 1-5), 0.82-0.98x p99 in 20 of 24 cells (u70-T100-c150 0.84x,
// skew50-T100-c150 0.82x), 0.99-1.01x in three and 1.04x in one
// (u45-T500-c150). A client that is a larger share of its hosts' load keeps
// the one weight: there a slow replica's lucky fast answer brings the
// client's own load back onto it (with 4 clients, slow-node p99.9 1.11x and
// two-slow p99.9 1.07x with fast answers weighed so).
//
// # Health
//
// The success-prioritized fallback cascade (WithHealthTolerance): a replica
// whose rolling success rate is below best*(1-tolerance), best the
// healthiest candidate's, stays a first choice only with probability
// (rate/best)^3 and is otherwise ranked behind every healthier replica,
// whatever its score or in-flight count (C3 and P2C). Next to two healthy
// replicas, one failing half of its requests is a first choice in about 6%
// of picks, one failing all only through probes. The score itself ignores
// health. What an error's latency contributes, by kind:
//
//	Overloaded, Unavailable, other server  failure; answered at once, so the
//	  errors                               latency is ignored unless above R_s
//	read/write timeout (after the server   failure; the latency is above R_s
//	  waited)                              and raises it
//	client timeout                         lost; raises R_s (latency >= timeout)
//	broken or refused connection           lost; at once, ignored
//
// An error's latency is a lower bound of what a success would have taken: it
// moves R_s only upward, so fast failures never make a host look fast.
// Recovery: three failures in a row make a host failing now, and the first
// success after them healthy again (the streak rule of package tracker); a
// host ranked last for failing is probed once per ProbeAfter per client
// (WithProbe), so one that stops failing is a first choice again within
// ProbeAfter. A host that fails only part of its requests recovers as its
// rolling success buckets (6 of tracker.Config.HealthBucket) fill with
// successes. After a slow spell R_s weighs a sample by the age of the
// estimate (tracker.Config.AgeDecay), and no sample counts above
// tracker.Config.SampleCap times R_s, so the late answers of a stall do not
// keep a host avoided once it answers normally again. Needed by: the
// fallback cascade, a node failing every request at 85 % load (48,249
// errors without it against 144); the probe, the same cell (2.95x p99
// without it).
//
// # Zones
//
// In a cloud each availability zone is a rack (Ec2Snitch, GoogleCloudSnitch),
// and with RF 3 over three zones every partition has one replica in the
// client's zone. A request that crosses zones costs a few hundred
// microseconds each way and, in most clouds, money both ways. With
// WithLocalRack (C3 only) the first in-zone replica (local data center,
// that rack) among those eligible as first choice goes first, ahead of a
// replica the score ranks better, while
//
//	E'_zone <= b * min_s E_s
//
// where E_s is a replica's expected response time (R_s - 1/mu_s +
// qeff_s/mu_s + k/mu_s, the score without the cube: the network is in R_s)
// over the eligible replicas, b is WithZoneBound (default 1.5), and while
// the in-zone replica is not stalled (WithStall). E'_zone is the in-zone
// replica's E_s read with the engine's own evidence against it, so the
// preference yields exactly when that evidence says the replica is worse:
//
//   - its silence: R_s is taken as at least the time it has owed an answer
//     without giving one (a request owed that long has taken at least
//     that), so a replica that stops answering is left once that silence
//     passes about b times the best expected response, before the stall
//     threshold; the score's own sign of a stall (W_s shrinking) moves the
//     linear estimate of a replica with one request in flight too little;
//   - the known-slow rule's evidence (see The C3 score), polled or not:
//     when the service time that rule credits it with (its polled 1/mu_s,
//     or its R_s capped by 1.5 times the median of its latencies) is at
//     least 3 times the fastest other eligible replica's, R_s and 1/mu_s
//     are raised to it. As the rule's evidence fades while the replica is
//     avoided, it is taken back once the evidence has faded and left again
//     at its first slow answer;
//   - its health: materially less healthy (WithHealthTolerance) replicas
//     are not eligible, so a local replica that fails is left at once.
//
// One that serves slower is left once its expected response passes b
// times the best (a local replica 2x slower than the others, or with a
// queue several requests longer), and taken again when it no longer does
// and the evidence above has cleared. The linear estimate, not the score,
// is compared: the score's cube makes one request in flight cost several
// times an idle replica's, which would send a healthy cluster's requests
// out of the zone whenever its replica has one, while E_s grows by a
// service time over W_s per request ahead. b is what the zone may cost:
// 1.5 lets a request wait up to half again its best expected response to
// stay in the zone.
//
// The least of a few estimates is low by chance: a replica out of the
// zone answers the client now and then, so its R_s is mostly its last
// answer, and the least of two such is below what either usually takes
// (the winner's curse), while the in-zone replica's R_s averages many
// answers, its slow ones too. On that alone a healthy cluster of three
// zones sent 12 % of its requests out of the zone (cmd/vsim -preset zones;
// 6.8 % with the reading below, as fast where the in-zone replica is
// slow). So an in-zone replica beyond b times the best E_s but within b
// times the slowest's is kept while the client's own latencies agree:
// its median over the latency window (tracker.Config.LatencyWindow) no
// higher than the least median of the other eligible replicas, each from
// 3 answers at least (without them the estimates decide). One beyond b
// times every replica's is left at once.
//
// A pause is remembered: once an in-zone replica has owed an answer for
// three times its stall threshold (WithStall: max(StallMin, StallFactor x
// R_s), 30 ms at the least), which its own latency tails do not reach and
// a stop-the-world pause does, no in-zone replica goes first for 10 s
// after the last such reading, and the client ranks by the score alone.
// The silence reading leaves a pausing replica only once the client's own
// requests are caught, and while the zone is preferred its replicas carry
// most of the client's load, so in a zone whose nodes pause again (GC)
// each pause would catch more of its requests than without the rack. The
// cost: a zone whose replicas pause more often than every 10 s is not
// preferred.
//
// Probes (WithProbe) and the rate rule still send some
// requests elsewhere. Every attempt
// handed out to a host out of the zone is counted (Counters.OutOfZone,
// HostStats.OutOfZone; queries pinned to a host are not), whatever the
// strategy. A rack no host of the local data center is in is reported as
// an unknown local DC is (logged, the adapters' Err) and no replica is
// preferred until one appears.
//
// # Rate control
//
// C3's Algorithm 1 with CUBIC per-host rate control (Algorithm 2,
// tracker.RateConfig): the first ranked replica within its sending rate
// gets the request; when every eligible replica is over its rate the
// request waits for the next rate window, at most MaxBackpressureWait, and
// is then sent to the best replica anyway (WithMaxBackpressureWait; never
// dropped). Two departures from the paper: a stalled host (one that owes
// responses and has been silent for max(StallMin, StallFactor*R_s),
// WithStall) is not "within rate" when the plan is made, since its rate
// only adapts when responses return, so it cannot spare a request the
// backpressure wait; after the wait the rates alone are read again (the
// stall checked there too, even only below the first ranked, costs Figure
// 14's u70-T500-c150 1.03x p99, seeds 1-5); and the multiplicative
// decrease of Algorithm 2 applies only while the client sends at its full
// rate, since below it the receive rate measures the client's own demand,
// or while the hosts queue: while the polled hosts hold on average more
// than three times their W_s requests
// (waiting or in service), the servers' queues bound the answers and the
// clients herd onto the replicas that look best, and the decrease, which
// holds a client to about one request per rate window on a host that has
// not returned more, spreads them. For a client that is one of many (its
// concurrency weight w, see The concurrency weight, at least 32: at most
// about 3 % of its hosts' load) the bound is one W_s, the hosts queueing
// at all: with demand skewed over the clients the herd's queues form at
// the replicas it picks while the mean over every host stays short (p99
// 0.31-0.66x with 20 % of 150 clients making 80 % of the requests). A
// client that is a larger share of its hosts' load, or hosts that do not
// queue, keep the exception: capping the client's own demand then sends it
// to worse replicas (4 clients on 5 nodes; 20 on 10 with a slow one; 64 on
// 5 at 20 % load with two slow ones).
//
// Needed by: the exception at less than the full rate, two-slow (1.88x
// with the decrease whatever the demand; recovering at 85 % load 2.60x,
// gc-pauses 3.87x); the decrease while the hosts queue, Figure 14's
// u70-T500-c150 (1.66x without it, seeds 1-2); the backpressure wait, the
// same cell (1.09x without it, seeds 1-5); CUBIC and the stall rule,
// bimodal 70 % / 100 ms (1.03x without either).
//
// # Server load
//
// With the C3 strategy the policy polls by default (WithServerLoad; P2C and
// RoundRobin never poll) for every up host (local, or any with
// WithRemoteDCs) that host's own rows of the node-local virtual table
// (Cassandra 4.0+)
//
//	SELECT name, active_tasks, active_tasks_limit, pending_tasks, completed_tasks FROM system_views.thread_pools
//
// through the application's session, at consistency ONE, without retries,
// with a timeout of the host's poll interval, routed to that host itself.
// Polls are never measured, never counted in os_s, never earn poll credit
// and are never passed to the tracker as user traffic; query observers can
// skip them with the adapters' IsServerLoadPoll.
//
// Fallback. The answer decides, not the version a node reports: a host that
// answers Invalid (no system_views: Cassandra 3.x) or Unauthorized (no
// SELECT on it) is not polled again, and the first such host is logged,
// once per policy, however many follow. On a cluster without the table a
// client sends one poll per host, ever, and C3 ranks on its own estimates
// (q_s = 0, 1/mu_s = R_s). A poll that fails otherwise is dropped and the
// host polled again at its next turn. User queries never wait for a poll
// and never see its errors.
//
// Budget (WithPollBudget: share, minInterval, maxInterval; default 0.1,
// 100ms, 2s). A client's polls are at most share of its own requests:
// every host polled has a token bucket that starts with one credit, earns
// share/M credits per request the policy plans (user traffic only; queries
// pinned to a host, as polls are, earn none; M the hosts polled: up,
// eligible as above, not dropped by the fallback) and holds at most one; a
// poll spends one, and a host whose turn finds no credit is not polled. Each host's turn comes every
//
//	I = clamp(M/(share*r), minInterval, maxInterval)
//
// times a random factor in [0.8, 1.2) after its previous turn, never less
// than minInterval after it (r: the client's request rate, an EWMA over
// about a second of plans; I as it is now, looked at again at least every
// 4 minIntervals, so a client whose requests pick up after an idle spell
// polls within a few minIntervals, not at the end of the idle I); a turn
// that finds the credit short comes again when the rest is earned at rate
// r, if sooner. So a busy client's polls spread
// evenly over the hosts, one per I each, and a client that stops sending
// stops polling after at most M more polls (one per host). A host's first
// poll comes within minInterval of the session. A fixed interval d is
// WithPollBudget(1, d, d).
//
// Warm-up. A host's first 1/mu_s takes at least 5 samples (see below),
// the fifth 4 I after the first at the interval I: close to a second for a
// client of a few hundred requests per second, during which a replica
// that serves several times slower than the others is told apart only by
// the client's own latencies. So until a host has its first 1/mu_s, its
// turns come every minInterval, each spending the credit there is but
// none needed, at most 8 of them (once per host per session, again for a
// host removed and added back); then the bucket and I apply.
//
// Worst case. Over any stretch of time T in which a client plans R
// requests (and polls the same M hosts), it polls each node at most
// 8 + min(1 + share*R/M, 1 + T/minInterval) times (8: the warm-up, once):
// beyond those, at most min(1/minInterval, share*r/M) polls per second per
// node per client. N clients that each poll the same M nodes and plan R
// requests in all over T send a node at most
// 8N + min(N*(1 + T/minInterval), N + share*R/M) polls: beyond 9N, at most
// min(N/minInterval, share*(r_1 + ... + r_N)/M) per second, i.e. at most
// share of their requests, spread over the nodes, and never more than 10
// per second per client at the default minInterval. A
// client at 1000 requests per second on 5 nodes polls each node up to 10
// times a second (I = minInterval; 5% of its requests), one at 10
// requests per second once every 5 seconds (I = maxInterval, the credit
// allows one per 5 s). ServerLoadCounters report the current polls per
// second per node and I; policy/promstats exports them.
//
// Freshness follows the interval the host is polled at: each sample is
// stamped with the midpoint of its poll; its queue counts in full for 1.5
// of the host's I at that poll and its service time for 1.5 of the
// host's spacing (I, or M/(share*r) when that is longer: the credit then
// spaces the polls, so the service time lasts until the next poll); after
// that each fades and is dropped after 6 such intervals, so a host whose
// polls stop or slow down falls back to the client-side estimates (q_s =
// 0, 1/mu_s = R_s). A host's polled queue counts in Qmax for 6 of its
// intervals (see The concurrency weight). A queue changes with the load, a
// service time with the server's condition. And with many clients the
// credit is what spaces the polls: at 1000 clients on 100 nodes a client
// polls a node every 20 s, and service times dropped after 6 I = 12 s ran
// out at the same moment in every client that had started with it, which
// then found the slow node forgotten and all sent to it at once (cmd/vsim,
// scale u50-slow1 over 1,200,000 requests: the slow node's index of
// dispersion 12.2 against round robin's 0.9, p99.9 35.3 ms; with the
// spacing 0.96 and 29.0 ms). The queue's freshness stays with I: with it
// too, Figure 14's u45-T100-c300 and u45-T500-c300 read 1.04x p99.
//
// From each sample, over ReadStage and MutationStage:
//
//	q_s    = pending + active - w*os_s   (qhat_s already counts w*os_s, os_s
//	                                      this client's requests on the host
//	                                      while the poll ran, w = w_eff)
//	1/mu_s = busy time / completed       (Little's law on the workers, over
//	                                      the newest sample pairs that hold
//	                                      8 completions, at least 4 and at
//	                                      most 32 pairs: each pair's busy
//	                                      time is the mean of its two
//	                                      active counts times the time
//	                                      between them, zero when no worker
//	                                      was seen busy; where the pairs
//	                                      hold fewer, or no busy worker,
//	                                      the latest estimate stands while
//	                                      its pairs are within the last 32,
//	                                      then there is none)
//	W_s    = active_tasks_limit of ReadStage (of MutationStage without a
//	                                      ReadStage row); 0 (null), negative
//	                                      or above 65536 is ignored
//
// W_s is the node's configuration, not its load: it is used for every host
// that reported one, whatever the sample's age. A completed count lower
// than the previous sample's (the node restarted) gives no rate: the sample
// becomes the new baseline. A polled 1/mu_s counts for every host, only
// when above R_s (then R_s is raised to it: a response takes at least its
// service time): it is the mean over every client's requests, where the
// client's own R_s of a host it seldom uses rests on a few samples of a
// spread-out service time, so an avoided slow replica would otherwise look
// fast again after a few lucky responses. A polled q_s counts only for a
// host the client does not measure itself (nothing observed since the
// sample, nothing outstanding, no response for the sample's 1.5
// intervals): on a host it uses, its own os_s is fresher. Needed by:
// Figure 14's u45-T500-c150 (1.09x with the polled q_s for every host,
// seeds 1-5); the warm-up polls, 1000 clients' u80-slow2 (1.17x without
// them, seed 1).
//
// What polls cannot tell. A node in a stop-the-world pause answers no
// query, polls included, and its counters stand still until it resumes:
// the pause shows in the client's own silence (W_s and w above) before any
// poll, and the first request each client sends into a pause waits it out,
// with or without polls (a router that saw every client's requests pile up
// at the node would send fewer there). Active counts are instants: at a
// replica that serves a few requests a second the polled 1/mu_s rests on
// few busy instants and spreads widely around the true mean, so the
// known-slow rule also reads the client's own latencies (see Known-slow
// replicas).
//
// # Signals
//
//	host handed out                 os_s += 1; one token of the host's sending rate
//	attempt marked (first Mark)     os_s -= 1, exactly once per hand-out
//	query/batch observer (Wire)     the measurement: each attempt's latency and
//	                                real error -> R_s, latency histograms,
//	                                success buckets, last-response time,
//	                                receive rate, Algorithm 2. Cancelled
//	                                attempts (context done, hedge losers) are
//	                                orphans: the host still serves them, so
//	                                they count with os_s until the host
//	                                answers a later request
//	Mark without Wire               the measurement, from the plan's own timing
//	server-load poll (C3 default)   q_s, 1/mu_s and W_s as above
//	host down / up                  skipped / clean slate (statistics reset)
//
// # Hedging
//
// The speculative packages hedge an idempotent execution once it has been
// outstanding for the WithQuantile quantile of recent latencies (The Tail
// at Scale), clamped by WithDelayBounds, within a budget (WithBudget) and a
// burst cap (WithBurstCap); the load rule (WithLoadRule, read from a
// LoadSource such as the policy) defers a hedge where the hosts have no
// room for the extra request; see package speculative.
package tailroute
