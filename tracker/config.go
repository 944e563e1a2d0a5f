package tracker

import (
	"errors"
	"fmt"
	"time"
)

// Config configures the per-host measurements of a policy
// (tailroute.WithTracker). Zero fields take the documented defaults.
type Config struct {
	// Clock is the time source; default SystemClock.
	Clock Clock
	// EWMAAlpha (alpha) is the weight of a new sample in every EWMA (R_s,
	// q_s, 1/mu_s); default 0.1, i.e. roughly the last 10 samples (a client
	// that is one of many weighs an answer faster than R_s 0.9: package
	// tailroute, "Fast answers"). Allowed (0,1].
	EWMAAlpha float64
	// LatencyWindow is the width of one latency-histogram window; quantiles
	// cover the current and the previous window; default 5s. Allowed
	// 10ms..1h.
	LatencyWindow time.Duration
	// MinQuantileSamples is the number of samples below which quantiles are
	// reported as unavailable; default 20. Allowed 1..1e9.
	MinQuantileSamples int
	// HealthBucket is the width of one response/success bucket (6 buckets in
	// the window plus a sticky bucket); default 500ms: a host that starts or
	// stops failing is seen within one or two buckets (the cascade's
	// narrower buckets, less dilution). Allowed 10ms..1h.
	HealthBucket time.Duration
	// DefaultResponseTime is the response-time prior used before any host
	// has a sample; default 1ms. Allowed 1µs..1min.
	DefaultResponseTime time.Duration
	// ForgetAfter is how long an idle host's estimates stay fully
	// trusted. A host with nothing outstanding and no response for longer
	// than ForgetAfter (SinceResponse) is viewed with its R_s pulled toward
	// the mean R_s of the other hosts and its q_s toward 0, by the factor
	// exp(-(SinceResponse-ForgetAfter)/ForgetAfter): a host that
	// was slow once and then avoided is tried again once its bad estimate
	// is old, instead of only through rare probes. Hosts that receive
	// traffic are never affected. Default 1s; negative = never forget.
	// Allowed 10ms..1h or negative.
	ForgetAfter time.Duration
	// AgeDecay (tau) makes R_s weigh a sample by the age of the estimate it
	// updates: the estimate keeps (1-EWMAAlpha)*exp(-dt/AgeDecay) of its
	// weight, dt being the time since the host's previous response, so the
	// sample's weight is alpha' = 1-(1-alpha)*exp(-dt/tau). A host answering
	// every few milliseconds averages over about 1/alpha samples as
	// before (dt << tau: alpha' ~ alpha); a host that gets a request only
	// now and then (avoided as slow, recovering, probed) has its R_s made
	// mostly of its latest answers instead of answers from seconds ago, so
	// a host that was slow and is fast again is seen to be fast after a few
	// requests, not after ten. The estimate ages as in Finagle's Peak-EWMA
	// (weight exp(-dt/tau) per sample). Server feedback (q_s and 1/mu_s,
	// Router.Feedback) ages the same way, dt being the time since the
	// host's last feedback: at the C3 paper's scale a client hears from a
	// host a few times a second, and without it a server's feedback
	// averages over seconds of a load that changes every 100 ms
	// (with it, tailroute+payload's Figure 14 p99 in cmd/vsim is 0.79-1.01x
	// its p99 without). Needed by: slow-node's p99.9, 1.19x as a plain
	// EWMA (cmd/vsim -preset ablation, seeds 1-12).
	// Default 250ms; negative = off (plain EWMA). Allowed 1ms..1h or
	// negative.
	AgeDecay time.Duration
	// SampleCap (c) bounds every sample that moves R_s to c*R_s. A stall
	// (a GC pause, a frozen process) returns its few trapped requests at
	// once, late by the stall's length, and the first of them comes after a
	// silence that AgeDecay weighs heavily: without a cap one stall lifts
	// R_s to a large part of its length and the host, answering normally
	// again, is avoided for as long as its normal answers take to bring
	// R_s back, while the traffic it sheds goes to the hosts whose stall is
	// still to come. Capped, a sample raises R_s by at most the factor
	// 1+alpha'*(c-1) (1.3 with alpha = 0.1, c = 4), so a host that truly
	// slows down reaches its new R_s within a few samples, and a single
	// stall moves it little. Only R_s is capped: the latency histogram
	// (quantiles, hedging delays) keeps every sample as it was. The cap
	// applies once the host has an R_s. Needed by: gc-pauses, 4.48x p99
	// without the cap (cmd/vsim -preset ablation, seeds 1-12). Default 4:
	// under an exponential service time fewer than 2 % of samples exceed
	// 4x the mean. Allowed 1.5..1000 or negative (no cap).
	SampleCap float64
	// Rate configures the per-host CUBIC rate controller.
	Rate RateConfig
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Clock:               SystemClock{},
		EWMAAlpha:           0.1,
		LatencyWindow:       5 * time.Second,
		MinQuantileSamples:  20,
		HealthBucket:        500 * time.Millisecond,
		DefaultResponseTime: time.Millisecond,
		ForgetAfter:         time.Second,
		AgeDecay:            250 * time.Millisecond,
		SampleCap:           4,
		Rate:                DefaultRateConfig(),
	}
}

// WithDefaults returns c with zero fields replaced by defaults.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	if c.EWMAAlpha == 0 {
		c.EWMAAlpha = d.EWMAAlpha
	}
	if c.LatencyWindow == 0 {
		c.LatencyWindow = d.LatencyWindow
	}
	if c.MinQuantileSamples == 0 {
		c.MinQuantileSamples = d.MinQuantileSamples
	}
	if c.HealthBucket == 0 {
		c.HealthBucket = d.HealthBucket
	}
	if c.DefaultResponseTime == 0 {
		c.DefaultResponseTime = d.DefaultResponseTime
	}
	if c.ForgetAfter == 0 {
		c.ForgetAfter = d.ForgetAfter
	}
	if c.AgeDecay == 0 {
		c.AgeDecay = d.AgeDecay
	}
	if c.SampleCap == 0 {
		c.SampleCap = d.SampleCap
	}
	c.Rate.withDefaults()
	return c
}

// Validate reports every out-of-range field, each naming the field, its
// value and the allowed range (call on a config with defaults applied).
func (c Config) Validate() error {
	var e fieldErrors
	e.check(!(c.EWMAAlpha > 0 && c.EWMAAlpha <= 1), "Config.EWMAAlpha = %v, allowed (0,1]", c.EWMAAlpha)
	e.check(c.LatencyWindow < 10*time.Millisecond || c.LatencyWindow > time.Hour,
		"Config.LatencyWindow = %v, allowed 10ms..1h", c.LatencyWindow)
	e.check(c.MinQuantileSamples < 1 || c.MinQuantileSamples > 1e9,
		"Config.MinQuantileSamples = %d, allowed 1..1000000000", c.MinQuantileSamples)
	e.check(c.HealthBucket < 10*time.Millisecond || c.HealthBucket > time.Hour,
		"Config.HealthBucket = %v, allowed 10ms..1h", c.HealthBucket)
	e.check(c.DefaultResponseTime < time.Microsecond || c.DefaultResponseTime > time.Minute,
		"Config.DefaultResponseTime = %v, allowed 1µs..1m", c.DefaultResponseTime)
	e.check(c.ForgetAfter >= 0 && (c.ForgetAfter < 10*time.Millisecond || c.ForgetAfter > time.Hour),
		"Config.ForgetAfter = %v, allowed 10ms..1h or negative (never)", c.ForgetAfter)
	e.check(c.AgeDecay >= 0 && (c.AgeDecay < time.Millisecond || c.AgeDecay > time.Hour),
		"Config.AgeDecay = %v, allowed 1ms..1h or negative (off)", c.AgeDecay)
	e.check(!(c.SampleCap < 0) && !(c.SampleCap >= 1.5 && c.SampleCap <= 1000),
		"Config.SampleCap = %v, allowed 1.5..1000 or negative (no cap)", c.SampleCap)
	return errors.Join(append(e, c.Rate.Validate())...)
}

// fieldErrors collects the out-of-range fields of a config.
type fieldErrors []error

// check records the error of the format when bad, with the package prefix.
func (e *fieldErrors) check(bad bool, format string, a ...any) {
	if bad {
		*e = append(*e, fmt.Errorf("tracker: "+format, a...))
	}
}

// RateConfig parameterises the per-host CUBIC rate controller of C3
// (section 3.2, Algorithm 2; values from section 4). Rates are in requests
// per Interval (the paper's srate and rrate "per delta ms").
type RateConfig struct {
	// Interval (delta) is the rate window; default 20ms. Allowed 1ms..10s.
	Interval time.Duration
	// Beta (beta) is the multiplicative decrease factor: on a decrease
	// srate <- srate*Beta (Algorithm 2, line 5); default 0.2. Allowed (0,1).
	Beta float64
	// Saddle is the time after a decrease at which the cubic curve is back at
	// the saturation rate R0 (the length of the saddle region); it sets the
	// scaling factor gamma = Beta*R0/Saddle^3 at every decrease, so that
	// cbrt(Beta*R0/gamma) = Saddle; default 100ms. Allowed 1ms..1min.
	Saddle time.Duration
	// Hysteresis is the minimum time after the last increase before a
	// decrease may happen (Algorithm 2, line 3); default 2*Interval.
	// Allowed 0..1min.
	Hysteresis time.Duration
	// SMax (s_max) caps one increase step; default 10. Allowed (0,1e6].
	SMax float64
	// InitialRate is srate (and R0) of a new or reset host; default 100 per
	// Interval, high so that a fresh client is not throttled: the controller
	// decreases towards the receive rate from above. Allowed [MinRate,1e9].
	InitialRate float64
	// MinRate is the floor of srate; default 1 (one request per Interval is
	// always within rate). Allowed [1,1e9].
	MinRate float64
}

// DefaultRateConfig returns the paper's parameters.
func DefaultRateConfig() RateConfig {
	return RateConfig{
		Interval:    20 * time.Millisecond,
		Beta:        0.2,
		Saddle:      100 * time.Millisecond,
		Hysteresis:  40 * time.Millisecond,
		SMax:        10,
		InitialRate: 100,
		MinRate:     1,
	}
}

func (c *RateConfig) withDefaults() {
	d := DefaultRateConfig()
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.Beta == 0 {
		c.Beta = d.Beta
	}
	if c.Saddle == 0 {
		c.Saddle = d.Saddle
	}
	if c.Hysteresis == 0 {
		c.Hysteresis = 2 * c.Interval
	}
	if c.SMax == 0 {
		c.SMax = d.SMax
	}
	if c.MinRate == 0 {
		c.MinRate = d.MinRate
	}
	if c.InitialRate == 0 {
		c.InitialRate = d.InitialRate
	}
}

// Validate reports every out-of-range field (values and allowed ranges).
func (c RateConfig) Validate() error {
	var e fieldErrors
	e.check(c.Interval < time.Millisecond || c.Interval > 10*time.Second,
		"RateConfig.Interval = %v, allowed 1ms..10s", c.Interval)
	e.check(!(c.Beta > 0 && c.Beta < 1), "RateConfig.Beta = %v, allowed (0,1)", c.Beta)
	e.check(c.Saddle < time.Millisecond || c.Saddle > time.Minute, "RateConfig.Saddle = %v, allowed 1ms..1m", c.Saddle)
	e.check(c.Hysteresis < 0 || c.Hysteresis > time.Minute, "RateConfig.Hysteresis = %v, allowed 0..1m", c.Hysteresis)
	e.check(!(c.SMax > 0 && c.SMax <= 1e6), "RateConfig.SMax = %v, allowed (0,1e6]", c.SMax)
	e.check(!(c.MinRate >= 1 && c.MinRate <= 1e9), "RateConfig.MinRate = %v, allowed [1,1e9]", c.MinRate)
	e.check(!(c.InitialRate >= c.MinRate && c.InitialRate <= 1e9),
		"RateConfig.InitialRate = %v, allowed [MinRate (%v),1e9]", c.InitialRate, c.MinRate)
	return errors.Join(e...)
}

// MaxServerWorkers is the largest W_s ServerWorkers accepts.
const MaxServerWorkers = 1 << 16

// HostSnapshot is a point-in-time copy of a host's state.
type HostSnapshot struct {
	ID            string
	InFlight      int64         // os_s
	Orphaned      int64         // see View.Orphaned
	ResponseTime  time.Duration // R_s (0 when no sample)
	ServiceTime   time.Duration // 1/mu_s from feedback (0 when none)
	QueueSize     float64       // q_s from feedback
	HasFeedback   bool
	Samples       uint64  // attempts observed since the host was added or reset
	Responses     uint64  // finished attempts in the rolling health window
	Successes     uint64  // successful attempts in the rolling health window
	SuccessRate   float64 // weighted success ratio (see View)
	SinceResponse time.Duration
	Silence       time.Duration // see View.Silence
	Rate          float64       // srate, requests per rate Interval
	ReceiveRate   float64       // rrate, responses per rate Interval
	SentInWindow  uint64        // requests sent in the current rate window
	RateDecreases uint64        // Algorithm 2 decrease events
	RateIncreases uint64        // Algorithm 2 increase events
	P50, P99      time.Duration
	QuantilesOK   bool // P50/P99 are based on at least MinQuantileSamples samples

	// Cumulative since the host was added, not cleared by Reset (what
	// Prometheus counters need): attempts observed with any outcome, those
	// measured (every outcome but Cancelled) and the sum of their latencies,
	// and those that ended in Failure or Lost.
	TotalAttempts uint64
	TotalMeasured uint64
	TotalLatency  time.Duration
	TotalErrors   uint64

	// ServerQueue and ServerServiceTime are the latest polled server-load
	// sample (q_s, smoothed 1/mu_s; see Host.ServerLoad) and ServerLoadAge
	// its age; HasServerLoad is false before the first sample.
	ServerQueue       float64
	ServerServiceTime time.Duration
	ServerLoadAge     time.Duration
	HasServerLoad     bool
	ServerWorkers     int64 // W_s as polled (Host.ServerWorkers); 0 = unknown
}
