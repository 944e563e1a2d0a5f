package tailroute

import (
	"time"

	"github.com/tailroute/tailroute/internal/settings"
	"github.com/tailroute/tailroute/tracker"
)

// Option configures a policy (the routing options, given to policy.New of
// either driver) or a Hedger (the hedging options, given to
// speculative.New of either driver); WithClock configures both. Options
// are validated once, by New: every bad value is reported, joined in one
// error, each naming the option, the field, the value and the allowed
// range; an option of the other kind is an error too.
type Option func(*settings.Set)

// route returns a routing option named name.
func route(name string, f func(s *settings.Set)) Option {
	return func(s *settings.Set) { s.Touch(settings.Routing, name); f(s) }
}

// WithStrategy selects the ranking strategy; default C3.
func WithStrategy(st Strategy) Option {
	return route("WithStrategy", func(s *settings.Set) {
		if st < C3 || st > RoundRobin {
			s.Fail(settings.Routing, "WithStrategy: Strategy = %d, allowed C3 (0), P2C (1), RoundRobin (2)", int(st))
			return
		}
		s.Route.Strategy = int(st)
	})
}

// WithLocalDC names the local data center; default "" (every host is local,
// as with the driver's RoundRobinHostPolicy). Replicas in the local DC are
// always tried first.
//
// A name that no host's data center matches is not an error at New (the
// hosts are not known yet) but is reported once the session lists its
// hosts: the policy logs it (through the Logger of the ClusterConfig given
// to Wire, else the driver's default logger), the policy's Err returns it,
// and the policy falls back rather than returning no hosts: to the one data
// center whose name differs only in case ("DC1" for "dc1"), else to every
// host as local, as the drivers' DC-aware policy keeps serving remote hosts
// when it has no local one. The fallback ends when a host of the named data
// center appears.
func WithLocalDC(dc string) Option {
	return route("WithLocalDC", func(s *settings.Set) { s.Route.LocalDC = dc })
}

// WithRemoteDCs allows hosts outside the local DC; default false (remote hosts
// are never returned when a local DC is set). When true, remote replicas come
// after the local replicas, then the remaining local hosts, then the remaining
// remote hosts.
func WithRemoteDCs(allow bool) Option {
	return route("WithRemoteDCs", func(s *settings.Set) { s.Route.RemoteDCs = allow })
}

// WithConcurrencyWeight sets w, the concurrency-compensation weight of C3's
// queue estimate qhat_s = 1 + os_s*w + q_s. The paper sets it to the number
// of clients. Default 0: measured. With polled server load
// (WithServerLoad) w is the number of clients like this one that the
// polls show (see "The concurrency weight" in the package doc), 1 until
// they show it and without polls. A w set here is used as it is (set it to
// the number of application instances sharing the cluster). With polled
// server load the weight in force is min(w, max(1, Qmax)). Allowed 0..1e6.
func WithConcurrencyWeight(w float64) Option {
	return route("WithConcurrencyWeight", func(s *settings.Set) {
		if !(w >= 0 && w <= 1e6) {
			s.Fail(settings.Routing, "WithConcurrencyWeight: ConcurrencyWeight = %v, allowed 0..1e6", w)
			return
		}
		s.Route.Weight = w
	})
}

// WithServerWorkers sets W_s, the reads a node serves at once, for hosts
// whose own count is unknown; default 1. C3's score drains the queue
// estimate with W_s workers (see "The C3 score" in the package doc). With
// WithServerLoad each host's polled active_tasks_limit of its read stage
// takes precedence. A W_s larger than what a node really serves in parallel
// weakens the queue penalty that makes C3 leave a node as its requests pile
// up, and a client cannot tell the two apart without a signal (Cassandra's
// concurrent_reads defaults to 32, but how many reads a node really serves
// at once depends on its cores and disks), so set it only when known and
// the same on every node. Allowed 1..65536.
func WithServerWorkers(n int) Option {
	return route("WithServerWorkers", func(s *settings.Set) {
		if n < 1 || n > tracker.MaxServerWorkers {
			s.Fail(settings.Routing, "WithServerWorkers: ServerWorkers = %d, allowed 1..%d", n, tracker.MaxServerWorkers)
			return
		}
		s.Route.Workers = float64(n)
	})
}

// WithTailTerm sets k, the service times added to C3's score: Psi_s +
// k/mu_s, a tail estimate rather than a mean (see "The tail term" in the
// package doc). Default 2; 0 is the paper's score. Allowed 0..100.
func WithTailTerm(k float64) Option {
	return route("WithTailTerm", func(s *settings.Set) {
		if !(k >= 0 && k <= maxTailTerm) {
			s.Fail(settings.Routing, "WithTailTerm: TailTerm = %v, allowed 0..%d", k, maxTailTerm)
			return
		}
		s.Route.TailTerm = k
	})
}

// WithBusy sets the P2C strategy's busy-node rule (the DataStax drivers'):
// a host with at least minInFlight requests in flight and no response for
// noResponse is put last while a strict majority of the replicas is not
// busy; it stays in the plan for retries and speculative attempts. C3 has
// no such rule: its stall rule (WithStall) and W_s shrinking with silence
// leave such a host before it is busy. HostStats.Busy reports the
// condition for every strategy. Default 10 and 200ms. Allowed minInFlight
// 1..1e6, noResponse 1ms..1m.
func WithBusy(minInFlight int, noResponse time.Duration) Option {
	return route("WithBusy", func(s *settings.Set) {
		if minInFlight < 1 || minInFlight > 1e6 {
			s.Fail(settings.Routing, "WithBusy: BusyInFlight = %d, allowed 1..1000000", minInFlight)
			return
		}
		if noResponse < time.Millisecond || noResponse > time.Minute {
			s.Fail(settings.Routing, "WithBusy: BusyNoResponse = %v, allowed 1ms..1m", noResponse)
			return
		}
		s.Route.BusyInFlight, s.Route.BusyNoResponse = minInFlight, noResponse
	})
}

// WithStall sets when C3 considers a host stalled: it owes responses and has
// given none for max(min, factor*R_s) (R_s is the host's response-time
// EWMA). A stalled host does not count as "within rate" (until a
// backpressure wait: "Rate control" in the package doc), so the rate limiter
// of Algorithm 1 cannot promote it over better-ranked replicas that are
// momentarily over their rate (its own rate only adapts when responses come
// back, so a frozen host would otherwise look like spare capacity). The
// outstanding requests already raise its score through os_s. A hedger
// that follows the policy (WithSource(p)) reads the same rule
// (Room.StalledFor) to tell a stall from a queue. Default factor 4 and min
// 10ms. Allowed factor 1..1000, min 1ms..1m.
func WithStall(factor float64, min time.Duration) Option {
	return route("WithStall", func(s *settings.Set) {
		if !(factor >= 1 && factor <= 1000) {
			s.Fail(settings.Routing, "WithStall: StallFactor = %v, allowed 1..1000", factor)
			return
		}
		if min < time.Millisecond || min > time.Minute {
			s.Fail(settings.Routing, "WithStall: StallMin = %v, allowed 1ms..1m", min)
			return
		}
		s.Route.StallFactor, s.Route.StallMin = factor, min
	})
}

// WithRateControl enables or disables C3's per-host CUBIC rate control and
// backpressure; default true (it applies to the C3 strategy only).
func WithRateControl(enabled bool) Option {
	return route("WithRateControl", func(s *settings.Set) { s.Route.RateControl = enabled })
}

// WithRate sets the CUBIC parameters; zero fields keep their defaults (see
// tracker.RateConfig for the defaults and the allowed ranges).
func WithRate(rc tracker.RateConfig) Option {
	return route("WithRate", func(s *settings.Set) { s.Route.Tracker.Rate = rc })
}

// WithMaxBackpressureWait bounds the backpressure of Algorithm 1: when every
// eligible replica is over its sending rate the request waits for the next
// rate window, at most d, and is then sent to the best replica anyway (never
// dropped, never blocked longer). Default 1ms; 0 never waits. Allowed 0..1s.
func WithMaxBackpressureWait(d time.Duration) Option {
	return route("WithMaxBackpressureWait", func(s *settings.Set) {
		if d < 0 || d > time.Second {
			s.Fail(settings.Routing, "WithMaxBackpressureWait: MaxBackpressureWait = %v, allowed 0..1s", d)
			return
		}
		s.Route.MaxWait = d
	})
}

// WithProbe sets recovery probing (C3 and P2C): a replica ranked last for
// its health (WithHealthTolerance) gets no traffic otherwise, so when it
// has nothing outstanding and neither a probe nor any other attempt went
// to it for `after`, the request goes to it first, i.e. at most one probe
// per failing host per `after` per client, whatever the load: the probe
// share of a client falls as its load grows, and a host that recovers is
// tried again within `after` (its first success makes it healthy again).
// A shorter `after` finds a recovered host sooner at the cost of more
// attempts to one that still fails. A replica avoided for its latency is
// not probed: its estimates fade instead (tracker.Config.ForgetAfter, the
// polled service time). Default 1s. Allowed 1ms..1h.
func WithProbe(after time.Duration) Option {
	return route("WithProbe", func(s *settings.Set) {
		if after < time.Millisecond || after > time.Hour {
			s.Fail(settings.Routing, "WithProbe: ProbeAfter = %v, allowed 1ms..1h", after)
			return
		}
		s.Route.ProbeAfter = after
	})
}

// WithMaxCandidates sets how many hosts are ranked for a request without
// token information (no routing key, unknown keyspace): a random sample of
// this many local hosts is ranked, the rest follow as fallback. Default 8.
// Allowed 1..16.
func WithMaxCandidates(n int) Option {
	return route("WithMaxCandidates", func(s *settings.Set) {
		if n < 1 || n > maxCandidates {
			s.Fail(settings.Routing, "WithMaxCandidates: MaxCandidates = %d, allowed 1..%d", n, maxCandidates)
			return
		}
		s.Route.MaxCandidates = n
	})
}

// WithHealthTolerance sets how much less healthy than the healthiest
// candidate a replica may be before health, not speed, decides its place
// (see "Health" in the package doc): a replica whose rolling success rate
// is below best*(1-tolerance) stays a first choice only with probability
// (rate/best)^3 and is otherwise ranked behind every healthier replica
// (C3 and P2C; RoundRobin ignores health). Default 0.05; 1 turns the rule
// off. Allowed 0..1.
func WithHealthTolerance(tolerance float64) Option {
	return route("WithHealthTolerance", func(s *settings.Set) {
		if !(tolerance >= 0 && tolerance <= 1) {
			s.Fail(settings.Routing, "WithHealthTolerance: HealthTolerance = %v, allowed 0..1", tolerance)
			return
		}
		s.Route.HealthTol = tolerance
	})
}

// WithServerLoad turns server-load polling on or off; default true (it
// applies to the C3 strategy only: P2C and RoundRobin never poll). On,
// q_s, 1/mu_s and W_s of C3's score come from each host's
// system_views.thread_pools (Cassandra 4.0+), polled within the budget of
// WithPollBudget; a cluster that does not serve the table (Cassandra 3.x,
// or no SELECT permission on it) is logged once and not polled again (see
// "Server load" in the package doc). Off, C3 ranks on the client's own
// estimates (q_s = 0, 1/mu_s = R_s).
func WithServerLoad(on bool) Option {
	return route("WithServerLoad", func(s *settings.Set) { s.Route.ServerLoad = on })
}

// WithPollBudget bounds what server-load polling (WithServerLoad) costs: a
// client's polls are at most share of its own requests, and each host is
// polled at most once per minInterval and, while the client sends enough
// requests to pay for it, at least once per maxInterval (the token bucket,
// the schedule and the worst case for N clients x M nodes: "Server load" in
// the package doc). A fixed interval d is WithPollBudget(1, d, d). Default
// 0.1, 100ms and 2s. Allowed share (0, 1], minInterval 10ms..1m,
// maxInterval minInterval..10m.
func WithPollBudget(share float64, minInterval, maxInterval time.Duration) Option {
	return route("WithPollBudget", func(s *settings.Set) {
		if !(share > 0 && share <= 1) {
			s.Fail(settings.Routing, "WithPollBudget: PollShare = %v, allowed (0, 1]", share)
			return
		}
		if minInterval < minPollInterval || minInterval > maxPollMinInterval {
			s.Fail(settings.Routing, "WithPollBudget: PollMinInterval = %v, allowed %v..%v", minInterval, minPollInterval, maxPollMinInterval)
			return
		}
		if maxInterval < minInterval || maxInterval > maxPollMaxInterval {
			s.Fail(settings.Routing, "WithPollBudget: PollMaxInterval = %v, allowed %v (minInterval)..%v", maxInterval, minInterval, maxPollMaxInterval)
			return
		}
		s.Route.PollShare, s.Route.PollMin, s.Route.PollMax = share, minInterval, maxInterval
	})
}

// WithLocalRack names the client's rack (its availability zone: Ec2Snitch
// and GoogleCloudSnitch name the rack after the zone, "1c" for
// eu-central-1c); default "" (no zone preference). With the C3 strategy the
// replica of the local data center in that rack goes first while its
// expected response is within WithZoneBound of the best replica's (see
// "Zones" in the package doc); every attempt sent to a host outside it is
// counted (Counters.OutOfZone, HostStats.OutOfZone). P2C and RoundRobin
// ignore the rack for ranking but count.
//
// A rack that no host of the local data center is in is not an error at
// New (the hosts are not known yet) but is reported as WithLocalDC's
// unknown data center is: logged, returned by the policy's Err, and no
// replica is preferred (every attempt counts as out of zone) until a host
// of that rack appears.
func WithLocalRack(rack string) Option {
	return route("WithLocalRack", func(s *settings.Set) { s.Route.LocalRack = rack })
}

// WithZoneBound sets how much zone locality may cost (WithLocalRack): the
// in-zone replica goes first while its expected response time is at most
// bound times the best replica's (or the slowest's, while its latency
// median says it is no slower: "Zones" in the package doc). Default 1.5:
// in a healthy cluster a local replica with a request or two in flight
// stays within it (its expected response is 1.0-1.3 times an idle
// remote's), and a local
// replica serving 2x slower, measured slow by the known-slow rule's
// evidence, silent for longer than the bound allows, stalled (WithStall)
// or failing (WithHealthTolerance) is left (see "Zones" in
// the package doc). 1 keeps a request in its zone only while its replica
// is expected to be the fastest. Allowed 1..100.
func WithZoneBound(bound float64) Option {
	return route("WithZoneBound", func(s *settings.Set) {
		if !(bound >= 1 && bound <= maxZoneBound) {
			s.Fail(settings.Routing, "WithZoneBound: ZoneBound = %v, allowed 1..%d", bound, maxZoneBound)
			return
		}
		s.Route.ZoneBound = bound
	})
}

// WithTracker sets the tracker configuration (clock, EWMA alpha, windows;
// see tracker.Config). A zero Clock or Rate in tc keeps what WithClock or
// WithRate set, in whatever order the options are given.
func WithTracker(tc tracker.Config) Option {
	return route("WithTracker", func(s *settings.Set) {
		c := tc // the option may be applied again, to another policy's settings
		if c.Clock == nil {
			c.Clock = s.Route.Tracker.Clock
		}
		if c.Rate == (tracker.RateConfig{}) {
			c.Rate = s.Route.Tracker.Rate
		}
		s.Route.Tracker = c
	})
}

// WithDriverSpeculation says that queries may carry the driver's own
// SpeculativeExecutionPolicy (set with Query.SetSpeculativeExecutionPolicy
// rather than through speculative.Wire). The driver can then start a
// speculative attempt after the execution's first Mark(nil), if its timer
// fires just as the first result arrives; the per-query state of
// idempotent executions is then not pooled but left to the garbage
// collector (one allocation per idempotent Pick), so such a late call can
// never reach a state that serves another execution. Default false: the
// state is pooled, which speculative.Wire's hedging is safe with, since it
// never asks a plan again after a Mark(nil); the policy turns pooling of
// idempotent states off by itself at the first late call it sees, so the
// option only closes the window before that call.
func WithDriverSpeculation(on bool) Option {
	return route("WithDriverSpeculation", func(s *settings.Set) { s.Route.DriverSpec = on })
}

// WithClock sets the clock of a policy's tracker or of a Hedger (give both
// the same clock to keep them on one time line); default
// tracker.SystemClock. The server-load poller's schedule follows it too
// when it makes timers (tracker.TimerClock). Tests use tracker.ManualClock.
func WithClock(clk tracker.Clock) Option {
	return func(s *settings.Set) {
		s.Touch(settings.Routing|settings.Hedging, "WithClock")
		if settings.IsNil(clk) {
			s.Fail(settings.Routing|settings.Hedging, "WithClock: Clock = nil, want a non-nil tracker.Clock")
			return
		}
		s.Route.Tracker.Clock = clk
		s.Hedge.Clock = clk
	}
}
