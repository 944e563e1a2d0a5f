package policy

import (
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/tracker"
)

// Strategy selects how replicas are ranked.
type Strategy int

const (
	// C3 ranks replicas by the C3 score Psi_s = R_s - 1/mu_s + qhat_s^3/mu_s
	// (qhat_s = 1 + os_s*w + q_s) plus the tail term k/mu_s (WithTailTerm),
	// materially less healthy replicas last (WithHealthTolerance), busy
	// hosts last and CUBIC rate control with bounded backpressure. The
	// default.
	C3 Strategy = Strategy(route.C3)
	// P2C is the DataStax drivers' power of two random choices on in-flight
	// counts, with materially less healthy replicas and busy hosts last. No
	// rate control.
	P2C Strategy = Strategy(route.P2C)
	// RoundRobin rotates through the replicas; the baseline. No busy rule, no
	// rate control.
	RoundRobin Strategy = Strategy(route.RoundRobin)
)

// ParseStrategy parses "c3", "p2c" or "roundrobin" (also "rr"), case-insensitive.
func ParseStrategy(s string) (Strategy, error) {
	r, err := route.ParseStrategy(s)
	return Strategy(r), err
}

// String returns the name ParseStrategy accepts: "c3", "p2c" or
// "roundrobin" ("Strategy(n)" for an unknown value).
func (s Strategy) String() string { return route.Strategy(s).String() }

// Feedback payload keys written by servers that report load (the simulator
// with Config.Feedback): queue length and service time in microseconds, each
// an 8-byte big-endian uint64.
const (
	DefaultFeedbackQueueKey       = route.DefaultFeedbackQueueKey
	DefaultFeedbackServiceTimeKey = route.DefaultFeedbackServiceTimeKey
)

// Option configures a Policy. Options are validated once, by New.
type Option = route.Option

// WithStrategy selects the ranking strategy; default C3.
func WithStrategy(s Strategy) Option { return route.WithStrategy(route.Strategy(s)) }

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
func WithLocalDC(dc string) Option { return route.WithLocalDC(dc) }

// WithRemoteDCs allows hosts outside the local DC; default false (remote hosts
// are never returned when a local DC is set). When true, remote replicas come
// after the local replicas, then the remaining local hosts, then the remaining
// remote hosts.
func WithRemoteDCs(allow bool) Option { return route.WithRemoteDCs(allow) }

// WithConcurrencyWeight sets w, the concurrency-compensation weight of C3's
// queue estimate qhat = 1 + os*w + q. The paper sets it to the number of
// clients; the default 1 assumes this process is the only client (set it to
// the number of application instances sharing the cluster). With
// WithServerLoad the weight in force is min(w, max(1, Qmax)), Qmax the
// longest smoothed polled queue (see "Server-load polling" in
// serverload.go). Allowed 0..1e6.
func WithConcurrencyWeight(w float64) Option { return route.WithConcurrencyWeight(w) }

// DefaultServerWorkers is W_s assumed for a host whose own count is
// unknown: 1, the paper's single-queue server (see WithServerWorkers).
const DefaultServerWorkers = route.DefaultServerWorkers

// WithServerWorkers sets W_s, the reads a node serves at once, for hosts
// whose own count is unknown; default DefaultServerWorkers (1). C3's score
// drains the queue estimate qhat with W_s workers: qeff = 1 + (qhat-1)/W_s
// service times instead of qhat (see the package doc, "C3 with W_s
// workers"). With WithServerLoad each host's polled active_tasks_limit of
// its read stage takes precedence. A W_s larger than what a node really
// serves in parallel weakens the queue penalty that makes C3 leave a node
// as its requests pile up, so set it only when known (same on every node).
// Allowed 1..65536.
func WithServerWorkers(n int) Option { return route.WithServerWorkers(n) }

// DefaultTailTerm is k of WithTailTerm: 2, a request's own service counted
// at 3/mu_s, the 95th percentile of an exponential service time, instead
// of its mean.
const DefaultTailTerm = route.DefaultTailTerm

// WithTailTerm sets k, the service times added to C3's score: Psi_s +
// k/mu_s, a tail estimate rather than a mean (see the package doc, "The
// tail term"). Default DefaultTailTerm (2); 0 is the paper's score.
// Allowed 0..100.
func WithTailTerm(k float64) Option { return route.WithTailTerm(k) }

// WithBusy sets the busy-node rule (DataStax): a host with at least
// minInFlight requests in flight and no response for noResponse is put last
// while a strict majority of the replicas is healthy; it stays in the plan
// for retries and speculative attempts. Defaults 10 and 200ms. Allowed
// minInFlight 1..1e6, noResponse 1ms..1m.
func WithBusy(minInFlight int, noResponse time.Duration) Option {
	return route.WithBusy(minInFlight, noResponse)
}

// WithStall sets when C3 considers a host stalled: it owes responses and has
// given none for max(min, factor*R_s) (tracker.View.Silence; R_s is the host's
// response-time EWMA). A stalled host never counts as "within rate", so the
// rate limiter of Algorithm 1 cannot promote it over better-ranked replicas
// that are momentarily over their rate (its own rate only adapts when
// responses come back, so a frozen host would otherwise look like spare
// capacity). The outstanding requests already raise its score through os_s.
// Defaults factor 4 and min 10ms. Allowed factor 1..1000, min 1ms..1m.
func WithStall(factor float64, min time.Duration) Option { return route.WithStall(factor, min) }

// WithRateControl enables or disables C3's per-host CUBIC rate control and
// backpressure; default enabled (it applies to the C3 strategy only).
func WithRateControl(enabled bool) Option { return route.WithRateControl(enabled) }

// WithRate sets the CUBIC parameters (Interval delta 20ms, Beta 0.2, Saddle
// 100ms, Hysteresis 2*delta, SMax 10, InitialRate 100, MinRate 1; zero fields
// keep their defaults). See tracker.RateConfig for the allowed ranges.
func WithRate(rc tracker.RateConfig) Option { return route.WithRate(rc) }

// WithMaxBackpressureWait bounds the backpressure of Algorithm 1: when every
// eligible replica is over its sending rate the request waits for the next
// rate window, at most d, and is then sent to the best replica anyway (never
// dropped, never blocked longer). Default 1ms; 0 never waits. Allowed 0..1s.
func WithMaxBackpressureWait(d time.Duration) Option { return route.WithMaxBackpressureWait(d) }

// WithJitter sets the herd-protection jitter of C3: every score is multiplied
// by 1 + jitter*u, u uniform in [-1,1), before sorting (exact ties are always
// broken at random). Default 0.05. Allowed 0..0.5.
func WithJitter(f float64) Option { return route.WithJitter(f) }

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
func WithProbe(p float64, after time.Duration) Option { return route.WithProbe(p, after) }

// WithMaxCandidates sets how many hosts are ranked for a request without
// token information (no routing key, unknown keyspace): a random sample of
// this many local hosts is ranked, the rest follow as fallback. Default 8.
// Allowed 1..16.
func WithMaxCandidates(n int) Option { return route.WithMaxCandidates(n) }

// WithTracker sets the tracker configuration (clock, EWMA alpha, windows;
// see tracker.Config). A zero Clock or Rate in tc keeps what WithClock or
// WithRate set, in whatever order the options are given.
func WithTracker(tc tracker.Config) Option { return route.WithTracker(tc) }

// WithClock sets the clock of the policy's tracker, the same tracker.Clock
// the speculative package's WithClock takes; default tracker.SystemClock.
// Tests use tracker.ManualClock.
func WithClock(clk tracker.Clock) Option { return route.WithClock(clk) }

// WithFeedbackKeys sets the custom-payload keys read by RecordFeedback;
// defaults DefaultFeedbackQueueKey and DefaultFeedbackServiceTimeKey.
func WithFeedbackKeys(queue, serviceTime string) Option {
	return route.WithFeedbackKeys(queue, serviceTime)
}

// withKeyspaceMetadata replaces Session.KeyspaceMetadata (tests, benchmarks).
func withKeyspaceMetadata(f func(string) (*gocql.KeyspaceMetadata, error)) Option {
	return route.WithKeyspaceFunc(keyspaceFunc(f))
}

// keyspaceFunc adapts gocql's keyspace metadata to the router's.
func keyspaceFunc(f func(string) (*gocql.KeyspaceMetadata, error)) route.KeyspaceFunc {
	return func(ks string) (string, map[string]any, error) {
		md, err := f(ks)
		if err != nil {
			return "", nil, err
		}
		if md == nil {
			return "", nil, nil // no placement
		}
		return md.StrategyClass, md.StrategyOptions, nil
	}
}
