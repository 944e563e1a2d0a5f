// Package speculative adds adaptive, budgeted hedged requests to gocql
// (Dean & Barroso, "The Tail at Scale", CACM 2013: "defer sending a
// secondary request until the first request has been outstanding for more
// than the 95th-percentile expected latency for this class of requests").
//
// # Use
//
//	h, err := speculative.New()                 // p95, clamp [1ms, 500ms], budget 5% over 10s
//	// or follow our policy: speculative.New(tailroute.WithSource(p))
//	err = speculative.Wire(cluster, h)          // after policy.Wire, if any
//	session, err := cluster.CreateSession()
//	...
//	h.Stats()                                   // executions, hedges, budget use, current delay
//
// Wire is the one line that hedges every query: it wraps the cluster's
// HostSelectionPolicy (ours, gocql's TokenAwareHostPolicy, RoundRobin...,
// or gocql's default when none is set) and, with the built-in latency
// Recorder, installs it as the QueryObserver.
//
// # Only idempotent queries are hedged
//
// gocql starts speculative attempts only for queries marked idempotent
// (query_executor.go: "if !qry.IsIdempotent() || sp.Attempts() == 0"),
// since a hedge may execute a statement twice. Mark queries with
// session.Query(...).Idempotent(true), or make it the default with
// cluster.DefaultIdempotence = true (then mark the non-idempotent ones
// Idempotent(false): counter updates, non-LWW appends, LWT). A batch is
// idempotent when all its entries are (BatchEntry.Idempotent). Opt a single
// query out with q.WithContext(speculative.Disable(ctx)).
//
// A hedged query's bound values must not be reused once it returns: gocql
// returns the first attempt's result while the losing attempt may still be
// marshalling the values in its own goroutine. Do not pool the []any you
// pass to Query or Bind.
//
// # What gocql v1.7.0 does (query_executor.go), and how this package fits
//
//   - Speculative execution is configured per query
//     (Query.SetSpeculativeExecutionPolicy, Batch.SpeculativeExecutionPolicy);
//     there is no cluster-wide setting. executeQuery calls the policy's
//     Pick(qry) first and reads the query's SpeculativeExecutionPolicy right
//     after, so the wrapped Pick sets it per execution: one extra attempt
//     when the execution may hedge, none otherwise (a policy the user set on
//     an eligible query is replaced; Disable keeps it). Queries that are
//     not idempotent or opted out are left untouched. This relies on the
//     order Pick, then read the policy; TestGocqlPicksBeforeReadingSpec
//     runs real gocql against the simulator and fails if an upgrade
//     changes it (the query's own policy would then be consulted).
//   - Delay() is read once per execution (time.NewTicker(sp.Delay())); it
//     must be > 0. Attempts() is read up to 3 times per execution (the
//     "== 0" check and each loop test in speculate), so it cannot count or
//     charge anything; ours is a constant 1 on armed executions.
//   - The extra attempt starts when the ticker fires, in a new goroutine
//     running the same retry loop (do) on the same NextHost iterator (made
//     safe with a mutex): the hedge gets the next host of the policy's
//     ranking. Retries (RetryNextHost) of either attempt use it too.
//   - The first attempt to put a result on the channel wins, even an
//     error; executeQuery then cancels the context of the others.
//
// # Hedge delay (adaptive)
//
// Delay = the configured quantile (default p95) of the LatencySource,
// clamped to [MinDelay, MaxDelay] (default [1ms, 500ms]); MaxDelay while
// the source has no estimate. It is an atomic read; the value is recomputed
// at most once per refresh interval (default 100ms) by whichever eligible
// query first notices it is due (compare-and-swap, no lock, no goroutine).
// While the source has no estimate (a client that has just started) it is
// due again after 5ms, so hedging starts within milliseconds of the
// source's first estimate rather than up to a refresh interval later.
//
// Budget pressure raises the quantile. A delay at p95 fires for ~5% of
// requests, i.e. the whole default budget: the budget then runs out about
// half of the time, and since it is granted first come, first served, the
// requests a stalled node holds up (a burst, exactly where hedging pays
// most) are often the ones refused. So once per second the Hedger compares
// the hedges actually sent per request with 70% of the budget fraction:
// above it, the effective quantile moves up (1-q shrinks by target/rate,
// at most halved, floor (1-q)/50); at or below it, it relaxes back (1-q
// grows 1.25x up to the configured value). Ordinary hedging then uses ~70%
// of the budget on the slowest requests and ~30% stays free for bursts.
// Stats.Quantile shows the quantile in force.
// Sources: our tracker (cluster-wide quantile), or the Recorder here, the
// tracker's lock-free log-linear histogram over a sliding window, fed by
// gocql's QueryObserver with successful attempts and the censored latency
// of cancelled losers.
//
// # Budget
//
// At most BudgetFraction (default 5%) of the executions seen over a sliding
// BudgetWindow (default 10s, 20 buckets) get a hedge. Attempts() can only
// say whether a hedge MAY fire, so the budget works with reservations: Pick
// arms an execution only if hedges + reservations + 1 <= fraction x
// requests in the window; the reservation becomes a charged hedge when the
// hedge really fires (the wrapped NextHost is asked for the hedge's host)
// or is given back when the first attempt completes first. When the budget
// is spent, executions are not armed and no hedge is sent. Two rare races
// can still send an uncharged-in-advance hedge (counted in
// Stats.Unreserved and charged when they happen): the first attempt fails,
// retries on another host, and the retry outlives the delay; or gocql's
// select picks the ticker at the same instant the first result arrives.
//
// # Burst cap
//
// The long-run budget alone lets a slow phase of a few hundred ms spend
// seconds' worth of hedges at once, adding work exactly while the cluster
// is behind (C3 §7: reissues "are not a silver bullet when operating a
// system at high utilization"). On top of it, an execution is armed only
// while the hedges that fired within the last BurstHorizon (default
// 200ms) number fewer than max(BurstFloor, BurstFactor x BudgetFraction x
// the executions seen within it) (defaults: factor 3, floor 2), see
// WithBurstCap. Hedges already armed still fire. A stall is the exception:
// while a host has attempts in flight and has been silent for longer than
// the hedge delay, the cap is lifted, because the requests such a host
// holds up are what hedging is for and the other replicas are idle rather
// than busy. Telling a stall from a slow phase takes the source's
// MaxSilence (SilenceSource; our tracker has it); with any other source
// the cap is off. A LoadSource (our policy) reports the silence of the
// hosts its own stall rule calls stalled (Room.StalledFor, WithStall: a
// silence of several of the host's own response times), and only such a
// host is a stall: under load a replica's queue holds a client's requests
// for longer than the delay while it answers others, and its response
// time has grown with that queue. Stats.BurstDenied counts the executions
// it did not arm, Stats.BurstLifted those armed over the cap because of a
// stall.
//
// The decision has to be made at Pick, before anything is known about the
// execution's fate: gocql v1.7.0 reads Attempts() right after Pick and
// turns a nil host for the hedge into ErrNoConnections as the query's
// result, so a hedge cannot be declined when its timer fires. This is why
// the factor matters: a cap that ordinary hedging reaches (factor 1) also
// refuses to arm the requests a stall is about to catch, while factor 3
// only binds in bursts (docs/experiments/hedging-burst-cap.md).
//
// # Load rule
//
// A hedge is extra work. It pays where the host it goes to has spare
// capacity and the first attempt is stuck (a stalled or slow node); it
// costs where every replica is already the bottleneck (high utilisation,
// demand skew, a slow phase on most nodes), because it joins a queue that
// delays other requests and, as CQL cannot cancel, the losing attempt is
// served anyway. So where the client's own knowledge says a hedge has no
// room, the load rule defers it: the execution is armed as usual, but its
// hedge fires after the deferred delay, 3 x the delay d, at most
// MaxDelay, instead of after d.
//
// Deferring, not refusing, because the decision has to be made at Pick
// (see above: the hedge cannot be declined later), before anything is
// known about the execution's fate. A request that a node's pause or
// stall will catch looks, at Pick, like every other; refusing it its hedge
// leaves it to wait out the pause, while a deferred hedge still reaches it
// (a 160 ms pause then costs about 3d rather than 160 ms). Under load the
// deferred delay is past the tail that queueing alone makes, so few
// deferred hedges fire, and those that do are for requests stuck far
// beyond what the load explains. On by default
// (tailroute.WithLoadRule(false) turns it off); an armed execution's
// hedge is deferred, in this order:
//
//  1. Never while a host is stalled: it has been silent, attempts in
//     flight and no answer, for at least the delay d, and the policy's
//     stall rule calls it stalled (silent for several of its own response
//     times; the burst cap has the same lift): the requests a stalled host
//     holds are what hedging is for, and the hosts a hedge goes to are
//     idle rather than busy. A silence that a host's queue explains is no
//     stall: there the replicas are at their capacity and a hedge only
//     joins a queue.
//  2. Queueing: while every host has a known worker count W_s (polled,
//     tailroute.WithServerLoad) and all its workers taken: the client's
//     own outstanding requests plus the other clients' >= W_s, the others'
//     read from the host's latest poll (its queue beyond this client's
//     requests as C3's score counts them: active and pending tasks less
//     w_eff x os_s, w_eff the concurrency weight in force) while that
//     sample counts, and guessed as
//     outstanding x (w-1) (C3's concurrency compensation) without one. A
//     hedge would only wait. While some host's W_s is unknown this test is
//     off: the client cannot tell a queue from work in service there, and
//     that host may have room. The poll is the better reading where it
//     exists: one request of this client in flight on a host does not mean
//     the other clients have w-1 there, and counting it so makes calm
//     hosts look busy.
//  3. Target wait (target_slow): while the host a hedge would go to is
//     expected to take longer than d. Such a host is itself in the tail:
//     its queue, not the first attempt, decides when a hedge there
//     answers, and the hedge only lengthens that queue. The hedge goes to
//     the second-ranked replica of its key, which ranks, on average, in
//     the middle of the hosts, so its expected response time is the
//     median host's C3 estimate R_s - 1/mu_s + qeff_s/mu_s (the score's
//     inputs without the cube; the client's own outstanding requests
//     count only where W_s is known). In a calm cluster, one node slow or
//     paused, the others answer well within d; when most hosts queue,
//     their expected response times pass d.
//  4. Losing: while hedges fired at d mostly lose and the hosts are
//     busy: over the last DefaultOutcomeWindow (2s), with at least 10
//     decided, fewer than one in three won, and the median host has more
//     than half of its workers taken (counted as in rule 2, a host whose
//     W_s is unknown counting as fully taken), now or on average over
//     about the last second (an exponential average with a 1s time
//     constant, each reading weighted by the time it covers and the sum
//     divided by the weight of the time covered, so that until the
//     readings span about a second it is close to their plain average: a
//     client's first readings count for the milliseconds they cover, not
//     for a whole second). The average takes only readings in which
//     every host's W_s is known (not Room.BusyAssumed): "fully taken"
//     for a host of unknown W_s is an assumption to act on, not load to
//     remember, so a client that has just started does not carry it into
//     its next second. A hedge that loses on a busy host was pure extra
//     load: it held a worker other requests waited for. On hosts with
//     most workers free it delayed no one, so there the record is not
//     consulted: hedges fired at p95 in a calm cluster lose one to two
//     times in three (the first attempt is just past p95) and still cut
//     the tail, as the requests that a healthy replica's queue or a
//     probe of a slow one holds up are the ones they reach. The average
//     keeps the record in force through the calm moments of a loaded
//     cluster (between slow phases, on the idle replicas of a skewed
//     demand), where hedges fired at d would meet the next busy phase.
//     Only hedges fired at d are on record: while hedges are deferred
//     the record empties, and after 2s hedges fire at d again and are
//     judged afresh.
//
// The burst cap (burst) and the budget (budget) come first: they refuse
// to arm an execution at all, deferred or not.
//
// One client of many (many_clients) does not hedge: while the policy's
// concurrency weight in force, the number of clients sharing the hosts
// (measured from the polls), is at least 32 (tailroute.Room.OneOfMany),
// the rule arms no execution, stalls included. Such a client hears each
// host a few times a second, and a hedge that wins cancels the slowest of
// those answers: the driver drops the loser's late answer, the policy
// records only how long it had waited, so a host in a slow phase keeps a
// low R_s and keeps its traffic. At the C3 paper's scale (50 servers,
// 150-300 clients, virtual time) hedging raised p99 1.2-4.6x in ten of
// twelve Figure 14 cells for about 4 % more requests; with the loser's
// answer observed, the unhedged p99 came back;
// with this refusal, 0.98-1.08x unhedged
// (docs/experiments/scale-hedging.md). It costs what hedging gained
// there: 0.92-0.96x at 45 % utilization with 10 ms phases, 0.92x with one
// slow server of 100 at 1000 clients.
//
// The rule's inputs come from the source: a LoadSource (our policy of
// either driver: WithSource(p)) reports the hosts' load (HedgeRoom) and
// silence; the hedger reads them at most once per 5ms, not per request.
// With any other source (the built-in Recorder, another policy) the rule
// is off, as there is nothing to read it from, and every hedge fires at
// d. Stats.TargetWait, Busy and DeferredDelay show its inputs in force.
//
// # Metrics
//
// Stats: Executions, Eligible, Armed, Hedges (fired), Won (the hedge's
// attempt was the execution's first success), Lost (an earlier attempt
// succeeded first), InFlight (hedges whose attempt has not ended),
// the executions not armed by reason (BudgetDenied, BurstDenied,
// TooFewHosts, ManyClients; Stats.Suppressed lists them with their
// names), the armed
// executions the load rule deferred by reason (Queueing, TargetSlow,
// Losing; Stats.Deferred), BurstLifted, NoTarget, Unreserved, and the
// delay, deferred delay, quantile, load-rule input and budget window in
// force; Stats.ExtraPct is the hedges as a percentage of the executions.
// speculative/promstats exports them to Prometheus (tailroute_hedge_*;
// counters end in _total; tailroute_hedge_suppressed_total{reason}, reason
// one of budget, burst, too_few_hosts, many_clients, and
// tailroute_hedge_deferred_total{reason}, reason one of queueing,
// target_slow, losing).
//
// # A fast error against a slow success
//
// gocql returns whichever attempt finishes first, error or not, and offers
// no hook to make an error lose. Decisions:
//   - No self-inflicted errors: an execution is not armed unless at least 2
//     hosts are up; the hedge never reuses a host of the execution. Stock
//     gocql with SimpleSpeculativeExecution on a one-host plan sends the
//     hedge to an empty iterator and returns ErrNoConnections at the delay,
//     although the first attempt would have succeeded (tested).
//   - Hedges avoid hosts that returned a host-level error (overloaded,
//     unavailable, timeouts, connection errors) within ErrorHoldoff
//     (default 1s), unless no other host is left.
//   - An error the hedge receives goes through the query's RetryPolicy
//     inside the hedge attempt: with e.g. SimpleRetryPolicy (RetryNextHost)
//     an overloaded hedge host is retried on the next host and the user sees
//     the success. With no RetryPolicy (gocql's default) the hedge's error is
//     returned to the user if it arrives before the first attempt's success
//     (tested) — the same as gocql. Configure a RetryPolicy when hedging.
//   - Corner case: if the first attempt's retries used up every host before
//     the hedge fires, the hedge finds no host and gocql returns
//     ErrNoConnections (Stats.NoTarget).
//
// # When not to hedge
//
// Hedging pays where the other replicas have spare capacity: a stalled or
// slow node, moderate load. At high utilisation it costs: hedges fire
// exactly when nodes are slow, and the second replica has no spare
// capacity for them (the losing attempt is cancelled in the client only;
// the server still serves it). The load rule defers hedges there when the
// Hedger follows our policy (WithSource(p)); otherwise only the budget and
// the burst cap bound it. The budget window is 10s rather than
// shorter because a short window also cuts the reserve that stalls need.
// Enable hedging for latency-critical reads; docs/experiments/
// hedging-load-aware.md has the figures per scenario.
//
// With tailroute's policy, a losing attempt is not forgotten: CQL has no
// cancel, so the tracker counts it as orphaned (still queued on its host)
// until the host answers a later request, and its elapsed time, a lower
// bound of its latency, moves the host's R_s. Otherwise hedging would hide
// exactly the slow samples from C3.
//
// # Cost
//
// Per execution: no allocation when the execution is not eligible or the
// budget is spent; 2 allocations when it is armed (the per-execution state
// and its NextHost closure: gocql needs a distinct NextHost per execution,
// and the state is not pooled because a losing attempt may still call it
// after the query returned; armed executions are at most a few per cent).
// Delay() is one atomic read; Recorder.Record one clock read and one
// atomic add; a quantile scan runs once per refresh interval.
// docs/experiments/hedging-driver-free-core.md has the benchmark figures (go test -run '^$' -bench .
// -benchmem ./speculative/).
//
// The wrapped policy's own plan may be pooled (ours is, see policy.Pick):
// the wrapper reads each host's Info once when it hands it out, and a hedge
// that fires after an attempt of the plan was marked with a nil error
// (gocql's timer firing just as the first result arrives) takes a fresh
// plan from the wrapped policy instead of asking the spent one. Hosts are
// pulled from the wrapped iterator lazily, one per attempt; a host pulled
// but not handed to gocql (down, duplicate, or skipped by the error
// holdoff) is released at once with Mark(context.Canceled), so a policy
// that counts hosts in flight from NextHost to Mark (ours: os_s) stays
// balanced. (gocql's HostPoolHostPolicy would count that Mark as a
// failure.)
//
// The wrapped policy must be the outermost one (it does not implement
// gocql.HostTierer, so do not use it as a TokenAwareHostPolicy fallback).
package speculative
