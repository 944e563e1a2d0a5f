package policy

import (
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
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

// WithStrategy selects the ranking strategy. The rule, defaults and allowed
// range are those of the gocql v1 adapter's WithStrategy (package
// github.com/tailroute/tailroute/policy).
func WithStrategy(s Strategy) Option { return route.WithStrategy(route.Strategy(s)) }

// WithLocalDC names the local data center. The rule, defaults and allowed
// range are those of the gocql v1 adapter's WithLocalDC (package
// github.com/tailroute/tailroute/policy).
func WithLocalDC(dc string) Option { return route.WithLocalDC(dc) }

// WithRemoteDCs allows hosts outside the local DC. The rule, defaults and
// allowed range are those of the gocql v1 adapter's WithRemoteDCs (package
// github.com/tailroute/tailroute/policy).
func WithRemoteDCs(allow bool) Option { return route.WithRemoteDCs(allow) }

// WithConcurrencyWeight sets w, the concurrency-compensation weight of C3's
// queue estimate qhat = 1 + os*w + q. The rule, defaults and allowed range
// are those of the gocql v1 adapter's WithConcurrencyWeight (package
// github.com/tailroute/tailroute/policy).
func WithConcurrencyWeight(w float64) Option { return route.WithConcurrencyWeight(w) }

// WithServerWorkers sets W_s, the reads a node serves at once, for hosts
// whose own count is unknown. The rule, default and allowed range are those
// of the gocql v1 adapter's WithServerWorkers (package
// github.com/tailroute/tailroute/policy).
func WithServerWorkers(n int) Option { return route.WithServerWorkers(n) }

// DefaultTailTerm is k of WithTailTerm (2).
const DefaultTailTerm = route.DefaultTailTerm

// WithTailTerm sets k, the service times added to C3's score: Psi_s +
// k/mu_s. The rule, default and allowed range are those of the gocql v1
// adapter's WithTailTerm (package github.com/tailroute/tailroute/policy).
func WithTailTerm(k float64) Option { return route.WithTailTerm(k) }

// WithBusy sets the busy-node rule (DataStax): a host with at least
// minInFlight requests in flight and no response for noResponse is put last
// while a strict majority of the replicas is healthy. The rule, defaults and
// allowed range are those of the gocql v1 adapter's WithBusy (package
// github.com/tailroute/tailroute/policy).
func WithBusy(minInFlight int, noResponse time.Duration) Option {
	return route.WithBusy(minInFlight, noResponse)
}

// WithStall sets when C3 considers a host stalled: it owes responses and has
// given none for max(min, factor*R_s). The rule,
// defaults and allowed range are those of the gocql v1 adapter's WithStall
// (package github.com/tailroute/tailroute/policy).
func WithStall(factor float64, min time.Duration) Option { return route.WithStall(factor, min) }

// WithRateControl enables or disables C3's per-host CUBIC rate control and
// backpressure. The rule, defaults and allowed range are those of the gocql
// v1 adapter's WithRateControl (package
// github.com/tailroute/tailroute/policy).
func WithRateControl(enabled bool) Option { return route.WithRateControl(enabled) }

// WithRate sets the CUBIC parameters (Interval delta 20ms, Beta 0.2, Saddle
// 100ms, Hysteresis 2*delta, SMax 10, InitialRate 100, MinRate 1. The rule,
// defaults and allowed range are those of the gocql v1 adapter's WithRate
// (package github.com/tailroute/tailroute/policy).
func WithRate(rc tracker.RateConfig) Option { return route.WithRate(rc) }

// WithMaxBackpressureWait bounds the backpressure of Algorithm 1: when every
// eligible replica is over its sending rate the request waits for the next
// rate window, at most d, and is then sent to the best replica anyway (never
// dropped, never blocked longer). The rule, defaults and allowed range are
// those of the gocql v1 adapter's WithMaxBackpressureWait (package
// github.com/tailroute/tailroute/policy).
func WithMaxBackpressureWait(d time.Duration) Option { return route.WithMaxBackpressureWait(d) }

// WithJitter sets the herd-protection jitter of C3: every score is multiplied
// by 1 + jitter*u, u uniform in [-1,1), before sorting (exact ties are always
// broken at random). The rule, defaults and allowed range are those of the
// gocql v1 adapter's WithJitter (package
// github.com/tailroute/tailroute/policy).
func WithJitter(f float64) Option { return route.WithJitter(f) }

// WithProbe sets recovery probing (C3 and P2C): with probability p a request
// goes first to a replica that has not responded for at least after and has
// nothing outstanding, and a replica ranked last for its health
// (WithHealthTolerance) goes first once per `after` (a host that ranks last
// never gets fresh measurements otherwise). The rule, defaults and allowed range are those of the gocql v1
// adapter's WithProbe (package github.com/tailroute/tailroute/policy).
func WithProbe(p float64, after time.Duration) Option { return route.WithProbe(p, after) }

// WithMaxCandidates sets how many hosts are ranked for a request without
// token information (no routing key, unknown keyspace): a random sample of
// this many local hosts is ranked, the rest follow as fallback. The rule,
// defaults and allowed range are those of the gocql v1 adapter's
// WithMaxCandidates (package github.com/tailroute/tailroute/policy).
func WithMaxCandidates(n int) Option { return route.WithMaxCandidates(n) }

// WithTracker sets the tracker configuration (clock, EWMA alpha, windows. The
// rule, defaults and allowed range are those of the gocql v1 adapter's
// WithTracker (package github.com/tailroute/tailroute/policy).
func WithTracker(tc tracker.Config) Option { return route.WithTracker(tc) }

// WithClock sets the clock (default tracker.SystemClock). The rule, defaults and
// allowed range are those of the gocql v1 adapter's WithClock (package
// github.com/tailroute/tailroute/policy).
func WithClock(clk tracker.Clock) Option { return route.WithClock(clk) }

// WithFeedbackKeys sets the custom-payload keys read by RecordFeedback. The
// rule, defaults and allowed range are those of the gocql v1 adapter's
// WithFeedbackKeys (package github.com/tailroute/tailroute/policy).
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
