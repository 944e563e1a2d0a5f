// config.go is every option of the Router in one file (about 400 lines), so the options,
// their defaults and their allowed ranges read as one list.

package route

import (
	"fmt"
	"strings"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// Strategy selects how replicas are ranked.
type Strategy int

const (
	// C3 ranks replicas by the C3 score Psi_s = R_s - 1/mu_s + qeff_s^3/mu_s
	// (qhat_s = 1 + os_s*w + q_s drained by the server's W_s workers:
	// qeff_s = 1 + (qhat_s-1)/W_s, core.C3Score) plus the tail term k/mu_s
	// (WithTailTerm), materially less healthy replicas last
	// (WithHealthTolerance), busy hosts last and CUBIC rate control with
	// bounded backpressure. The default.
	C3 Strategy = iota
	// P2C is the DataStax drivers' power of two random choices on in-flight
	// counts, with materially less healthy replicas and busy hosts last. No
	// rate control.
	P2C
	// RoundRobin rotates through the replicas; the baseline. No busy rule, no
	// rate control.
	RoundRobin
)

func (s Strategy) String() string {
	switch s {
	case C3:
		return "c3"
	case P2C:
		return "p2c"
	case RoundRobin:
		return "roundrobin"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// ParseStrategy parses "c3", "p2c" or "roundrobin" (also "rr"), case-insensitive.
func ParseStrategy(s string) (Strategy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "c3":
		return C3, nil
	case "p2c":
		return P2C, nil
	case "roundrobin", "round-robin", "rr":
		return RoundRobin, nil
	}
	return 0, fmt.Errorf("policy: strategy %q, allowed c3, p2c, roundrobin", s)
}

// Feedback payload keys written by servers that report load (the simulator
// with Config.Feedback): queue length and service time in microseconds, each
// an 8-byte big-endian uint64.
const (
	DefaultFeedbackQueueKey       = "tailroute-q"
	DefaultFeedbackServiceTimeKey = "tailroute-st"
)

// Config is the validated configuration of a Router (built by Options).
type Config struct {
	driverSpec     bool // WithDriverSpeculation
	strategy       Strategy
	localDC        string
	remoteDCs      bool
	weight         float64
	workers        float64 // WithServerWorkers: W_s of hosts whose workers are unknown
	busyInFlight   int
	busyNoResponse time.Duration
	stallFactor    float64
	stallMin       time.Duration
	rateControl    bool
	maxWait        time.Duration
	jitter         float64
	probeP         float64
	probeAfter     time.Duration
	maxCandidates  int
	healthTol      float64
	tracker        tracker.Config
	feedbackQ      string
	feedbackST     string
	serverLoad     time.Duration // WithServerLoad interval; 0 = off
	tailTerm       float64       // WithTailTerm (k)

	keyspaceFunc KeyspaceFunc // test hook

	errs []error
}

func defaultConfig() Config {
	return Config{
		strategy:       C3,
		weight:         1,
		workers:        DefaultServerWorkers,
		busyInFlight:   10,
		busyNoResponse: 200 * time.Millisecond,
		stallFactor:    4,
		stallMin:       10 * time.Millisecond,
		rateControl:    true,
		maxWait:        time.Millisecond,
		jitter:         0.05,
		probeP:         0.01,
		probeAfter:     time.Second,
		maxCandidates:  8,
		healthTol:      0.05,
		feedbackQ:      DefaultFeedbackQueueKey,
		feedbackST:     DefaultFeedbackServiceTimeKey,
		tailTerm:       DefaultTailTerm,
	}
}

// Option configures a Policy. Options are validated once, by New.
type Option func(*Config)

func (c *Config) fail(format string, a ...any) { c.errs = append(c.errs, fmt.Errorf(format, a...)) }

// WithStrategy selects the ranking strategy; default C3.
func WithStrategy(s Strategy) Option {
	return func(c *Config) {
		if s < C3 || s > RoundRobin {
			c.fail("policy: WithStrategy: Strategy = %d, allowed C3 (0), P2C (1), RoundRobin (2)", int(s))
			return
		}
		c.strategy = s
	}
}

// WithLocalDC names the local data center; default "" (every host is local,
// as with gocql's RoundRobinHostPolicy). Replicas in the local DC are always
// tried first.
//
// A name that no host's data center matches is not an error at New (the
// hosts are not known yet) but is reported once the session lists its
// hosts: the policy logs it (through the Logger of the ClusterConfig given
// to Wire, else gocql.Logger), Err returns it, and the policy falls back
// rather than returning no hosts: to the one data center whose name
// differs only in case ("DC1" for "dc1"), else to every host as local, as
// gocql's DC-aware policy keeps serving remote hosts when it has no local
// one. The fallback ends when a host of the named data center appears.
func WithLocalDC(dc string) Option { return func(c *Config) { c.localDC = dc } }

// WithRemoteDCs allows hosts outside the local DC; default false (remote hosts
// are never returned when a local DC is set). When true, remote replicas come
// after the local replicas, then the remaining local hosts, then the remaining
// remote hosts.
func WithRemoteDCs(allow bool) Option { return func(c *Config) { c.remoteDCs = allow } }

// WithConcurrencyWeight sets w, the concurrency-compensation weight of C3's
// queue estimate qhat = 1 + os*w + q. The paper sets it to the number of
// clients; the default 1 assumes this process is the only client (set it to
// the number of application instances sharing the cluster). With
// WithServerLoad the weight in force is min(w, max(1, Qmax)) (weight.go).
// Allowed 0..1e6.
func WithConcurrencyWeight(w float64) Option {
	return func(c *Config) {
		if !(w >= 0 && w <= 1e6) {
			c.fail("policy: WithConcurrencyWeight: ConcurrencyWeight = %v, allowed 0..1e6", w)
			return
		}
		c.weight = w
	}
}

// DefaultTailTerm is k of WithTailTerm: the score counts a request's own
// service at 3/mu_s, the 95th percentile of an exponential service time,
// instead of its mean.
const DefaultTailTerm = 2

const maxTailTerm = 100

// WithTailTerm sets k, the service times added to C3's score: Psi_s +
// k/mu_s. C3's Psi_s estimates a request's mean response time at s; a
// host's service time spreads in proportion to its mean, so at equal Psi_s
// the host with the longer 1/mu_s has the longer tail, and k/mu_s makes the
// score a tail estimate. Without a server signal (1/mu_s = R_s) the score
// is R_s*(qeff^3 + k): with W_s = 1 and w = 1, one request in flight on a
// replica (8 + k) now beats an idle replica more than (8+k)/(1+k) times
// slower (3.3x at k = 2) instead of 8x, and two in flight (27 + k) still
// lose to an idle replica 5x slower. Where the queue term counts many
// requests (w > 1 clients, long queues) its cube dwarfs k and the order
// is the paper's. Default DefaultTailTerm (2); 0 is the paper's score.
// Allowed 0..100.
func WithTailTerm(k float64) Option {
	return func(c *Config) {
		if !(k >= 0 && k <= maxTailTerm) {
			c.fail("policy: WithTailTerm: TailTerm = %v, allowed 0..%d", k, maxTailTerm)
			return
		}
		c.tailTerm = k
	}
}

// TailTerm returns k of WithTailTerm.
func (c *Config) TailTerm() float64 { return c.tailTerm }

// DefaultServerWorkers is W_s, the requests a server serves at once, that
// the C3 score assumes for a host whose own count is unknown (no
// server-load polling, or a server that does not report
// active_tasks_limit): 1, the paper's single-queue server. An assumed W_s
// larger than the server's real parallelism takes away the queue penalty
// that makes C3 leave a server as its requests pile up, and a client
// cannot tell the two apart without a signal (Cassandra's concurrent_reads
// defaults to 32, but how many reads a node really serves at once depends
// on its cores and disks), so the default stays pessimistic.
const DefaultServerWorkers = 1

// WithServerWorkers sets W_s for hosts whose own count is unknown (default
// DefaultServerWorkers): the C3 score drains the queue estimate qhat with
// W_s workers (core.C3Score). Set it to the number of reads a node serves
// in parallel when known and the same on every node. With server-load
// polling a host's polled active_tasks_limit takes precedence. Allowed
// 1..65536.
func WithServerWorkers(n int) Option {
	return func(c *Config) {
		if n < 1 || n > tracker.MaxServerWorkers {
			c.fail("policy: WithServerWorkers: ServerWorkers = %d, allowed 1..%d", n, tracker.MaxServerWorkers)
			return
		}
		c.workers = float64(n)
	}
}

// WithBusy sets the busy-node rule (DataStax): a host with at least
// minInFlight requests in flight and no response for noResponse is put last
// while a strict majority of the replicas is healthy; it stays in the plan
// for retries and speculative attempts. Defaults 10 and 200ms. Allowed
// minInFlight 1..1e6, noResponse 1ms..1m.
func WithBusy(minInFlight int, noResponse time.Duration) Option {
	return func(c *Config) {
		if minInFlight < 1 || minInFlight > 1e6 {
			c.fail("policy: WithBusy: BusyInFlight = %d, allowed 1..1000000", minInFlight)
			return
		}
		if noResponse < time.Millisecond || noResponse > time.Minute {
			c.fail("policy: WithBusy: BusyNoResponse = %v, allowed 1ms..1m", noResponse)
			return
		}
		c.busyInFlight, c.busyNoResponse = minInFlight, noResponse
	}
}

// WithStall sets when C3 considers a host stalled: it owes responses and has
// given none for max(min, factor*R_s) (tracker.View.Silence; R_s is the host's
// response-time EWMA). A stalled host never counts as "within rate", so the
// rate limiter of Algorithm 1 cannot promote it over better-ranked replicas
// that are momentarily over their rate (its own rate only adapts when
// responses come back, so a frozen host would otherwise look like spare
// capacity). The outstanding requests already raise its score through os_s.
// Defaults factor 4 and min 10ms. Allowed factor 1..1000, min 1ms..1m.
func WithStall(factor float64, min time.Duration) Option {
	return func(c *Config) {
		if !(factor >= 1 && factor <= 1000) {
			c.fail("policy: WithStall: StallFactor = %v, allowed 1..1000", factor)
			return
		}
		if min < time.Millisecond || min > time.Minute {
			c.fail("policy: WithStall: StallMin = %v, allowed 1ms..1m", min)
			return
		}
		c.stallFactor, c.stallMin = factor, min
	}
}

// WithRateControl enables or disables C3's per-host CUBIC rate control and
// backpressure; default enabled (it applies to the C3 strategy only).
func WithRateControl(enabled bool) Option { return func(c *Config) { c.rateControl = enabled } }

// WithRate sets the CUBIC parameters (Interval delta 20ms, Beta 0.2, Saddle
// 100ms, Hysteresis 2*delta, SMax 10, InitialRate 100, MinRate 1; zero fields
// keep their defaults). See tracker.RateConfig for the allowed ranges.
func WithRate(rc tracker.RateConfig) Option { return func(c *Config) { c.tracker.Rate = rc } }

// WithMaxBackpressureWait bounds the backpressure of Algorithm 1: when every
// eligible replica is over its sending rate the request waits for the next
// rate window, at most d, and is then sent to the best replica anyway (never
// dropped, never blocked longer). Default 1ms; 0 never waits. Allowed 0..1s.
func WithMaxBackpressureWait(d time.Duration) Option {
	return func(c *Config) {
		if d < 0 || d > time.Second {
			c.fail("policy: WithMaxBackpressureWait: MaxBackpressureWait = %v, allowed 0..1s", d)
			return
		}
		c.maxWait = d
	}
}

// WithJitter sets the herd-protection jitter of C3: every score is multiplied
// by 1 + jitter*u, u uniform in [-1,1), before sorting (exact ties are always
// broken at random). Default 0.05. Allowed 0..0.5.
func WithJitter(f float64) Option {
	return func(c *Config) {
		if !(f >= 0 && f <= 0.5) {
			c.fail("policy: WithJitter: Jitter = %v, allowed 0..0.5", f)
			return
		}
		c.jitter = f
	}
}

// WithProbe sets recovery probing (C3 and P2C). With probability p a request
// goes first to a replica that has not responded for at least after and has
// nothing outstanding (a host that ranks last never gets fresh measurements
// otherwise; a host that still owes responses will be measured when they
// return, so probing it would only add requests to a stall). A replica
// ranked last for its health (WithHealthTolerance) is probed by time
// instead: when it has nothing outstanding and neither a probe nor any
// other attempt went to it for `after`, the request goes to it first
// (tracker.Host.ClaimProbe), i.e. at most one probe per failing host per
// `after` per client, whatever the load: the probe share of a client falls
// as its load grows, and a host that recovers is tried again within `after`
// (its first success makes it healthy again). A shorter `after` finds a
// recovered host sooner at the cost of more attempts to one that still
// fails. p = 0 turns both off. Defaults 0.01 and 1s. Allowed p 0..1, after
// 1ms..1h.
func WithProbe(p float64, after time.Duration) Option {
	return func(c *Config) {
		if !(p >= 0 && p <= 1) {
			c.fail("policy: WithProbe: ProbeProbability = %v, allowed 0..1", p)
			return
		}
		if after < time.Millisecond || after > time.Hour {
			c.fail("policy: WithProbe: ProbeAfter = %v, allowed 1ms..1h", after)
			return
		}
		c.probeP, c.probeAfter = p, after
	}
}

// WithMaxCandidates sets how many hosts are ranked for a request without
// token information (no routing key, unknown keyspace): a random sample of
// this many local hosts is ranked, the rest follow as fallback. Default 8.
// Allowed 1..16.
func WithMaxCandidates(n int) Option {
	return func(c *Config) {
		if n < 1 || n > maxCand {
			c.fail("policy: WithMaxCandidates: MaxCandidates = %d, allowed 1..%d", n, maxCand)
			return
		}
		c.maxCandidates = n
	}
}

// WithTracker sets the tracker configuration (clock, EWMA alpha, windows;
// see tracker.Config). A zero Clock or Rate in tc keeps what WithClock or
// WithRate set, in whatever order the options are given.
func WithTracker(tc tracker.Config) Option {
	return func(c *Config) {
		if tc.Clock == nil {
			tc.Clock = c.tracker.Clock
		}
		if tc.Rate == (tracker.RateConfig{}) {
			tc.Rate = c.tracker.Rate
		}
		c.tracker = tc
	}
}

// WithClock sets the clock of the policy's tracker, the same tracker.Clock
// the speculative package's WithClock takes; default tracker.SystemClock.
// Tests use tracker.ManualClock.
func WithClock(clk tracker.Clock) Option {
	return func(c *Config) {
		if clk == nil {
			c.fail("policy: WithClock: Clock = nil, want a non-nil tracker.Clock")
			return
		}
		c.tracker.Clock = clk
	}
}

// WithFeedbackKeys sets the custom-payload keys read by RecordFeedback;
// defaults DefaultFeedbackQueueKey and DefaultFeedbackServiceTimeKey.
func WithFeedbackKeys(queue, serviceTime string) Option {
	return func(c *Config) {
		if queue == "" || serviceTime == "" {
			c.fail("policy: WithFeedbackKeys: keys %q, %q, allowed non-empty strings", queue, serviceTime)
			return
		}
		c.feedbackQ, c.feedbackST = queue, serviceTime
	}
}

// WithKeyspaceFunc replaces the session's keyspace metadata (tests,
// benchmarks).
func WithKeyspaceFunc(f KeyspaceFunc) Option {
	return func(c *Config) { c.keyspaceFunc = f }
}

// DriverSpeculation reports WithDriverSpeculation.
func (c *Config) DriverSpeculation() bool { return c.driverSpec }

// WithDriverSpeculation says that queries may carry gocql's own
// SpeculativeExecutionPolicy (set with Query.SetSpeculativeExecutionPolicy
// rather than through speculative.Wire). gocql v1.7.0 can then start a
// speculative attempt after the execution's first Mark(nil), if its timer
// fires just as the first result arrives; the per-query state of
// idempotent executions is then not pooled but left to the garbage
// collector (one allocation per idempotent Pick), so such a late call can
// never reach a state that serves another execution. Default false: the
// state is pooled (see Pick), which speculative.Wire's hedging is safe
// with, since it never asks a plan again after a Mark(nil); the policy turns
// pooling of idempotent states off by itself at the first late call it sees
// (see queryState), so the option only closes the window before that call.
func WithDriverSpeculation(on bool) Option { return func(c *Config) { c.driverSpec = on } }

// WithHealthTolerance sets how much less healthy than the healthiest
// candidate a replica may be before health, not speed, decides its place
// (the success-prioritized fallback cascade): a replica whose rolling
// success rate (tracker.View.SuccessRate) is below best*(1-tolerance) stays
// a first choice only with probability (rate/best)^3 and is otherwise
// ranked behind every healthier replica, whatever its C3 score or in-flight
// count (C3 and P2C; RoundRobin ignores health). Recovery: the rate is
// rolling (6 buckets of tracker.Config.HealthBucket), so a replica that
// stops failing regains its place as its recent buckets fill with
// successes, at once after a run of failures (the tracker's streak rule),
// and probes (WithProbe) reach replicas that get no traffic at all. Default 0.05; 1 turns the rule off. Allowed 0..1.
func WithHealthTolerance(tolerance float64) Option {
	return func(c *Config) {
		if !(tolerance >= 0 && tolerance <= 1) {
			c.fail("policy: WithHealthTolerance: HealthTolerance = %v, allowed 0..1", tolerance)
			return
		}
		c.healthTol = tolerance
	}
}

// Busy returns the busy-node rule of WithBusy.
func (c *Config) Busy() (minInFlight int, noResponse time.Duration) {
	return c.busyInFlight, c.busyNoResponse
}

// Weight returns the concurrency weight w of WithConcurrencyWeight.
func (c *Config) Weight() float64 { return c.weight }

// ServerWorkers returns W_s of WithServerWorkers.
func (c *Config) ServerWorkers() int { return int(c.workers) }
