package tracker

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/hist"
)

// Config configures a Tracker. Zero fields take the documented defaults.
type Config struct {
	// Clock is the time source; default SystemClock.
	Clock Clock
	// EWMAAlpha (alpha) is the weight of a new sample in every EWMA (R_s,
	// q_s, 1/mu_s); default 0.1, i.e. roughly the last 10 samples. Allowed
	// (0,1].
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
	// (weight exp(-dt/tau) per sample). Default 250ms; negative = off
	// (plain EWMA). Allowed 1ms..1h or negative.
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
	// applies once the host has an R_s. Default 4: under an exponential
	// service time fewer than 2 % of samples exceed 4x the mean. Allowed
	// 1.5..1000 or negative (no cap).
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

// Tracker holds the state of every host it has seen and cluster-wide
// aggregates. Hosts are created on first use and live until Remove.
type Tracker struct {
	cfg   Config
	clock Clock

	mu    sync.Mutex
	hosts atomic.Pointer[hostSet] // copy-on-write

	qcache atomic.Pointer[quantileCache]
}

// hostSet is the tracked hosts, by ID and as a list: the hot path's
// passes over every host (the other hosts' mean R_s of an idle host's
// View, MaxSilence) walk the list, not the map.
type hostSet struct {
	byID map[string]*Host
	list []*Host
}

func newHostSet(m map[string]*Host) *hostSet {
	s := &hostSet{byID: m, list: make([]*Host, 0, len(m))}
	for _, h := range m {
		s.list = append(s.list, h)
	}
	return s
}

// quantileCache keeps the last cluster-wide quantiles for QuantileCacheTTL so
// that a caller asking for a quantile on every request (speculative
// execution) does not merge the per-host histograms every time.
type quantileCache struct {
	at    time.Duration
	total uint64
	n     int
	q     [4]float64
	d     [4]time.Duration
	ok    [4]bool
}

// QuantileCacheTTL is how long a cluster-wide quantile is reused while new
// samples arrive.
const QuantileCacheTTL = 10 * time.Millisecond

// New returns a Tracker; cfg zero fields take defaults. Out-of-range fields
// are reported as an error naming the field, the value and the allowed range.
func New(cfg Config) (*Tracker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{cfg: cfg, clock: cfg.Clock}
	t.hosts.Store(newHostSet(map[string]*Host{}))
	return t, nil
}

// Config returns the effective configuration.
func (t *Tracker) Config() Config { return t.cfg }

// Clock returns the tracker's clock.
func (t *Tracker) Clock() Clock { return t.clock }

// Now returns the tracker clock's current time.
func (t *Tracker) Now() time.Duration { return t.clock.Now() }

// Host returns the state of host id, creating it if needed.
func (t *Tracker) Host(id string) *Host {
	if h, ok := t.hosts.Load().byID[id]; ok {
		return h
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.hosts.Load().byID
	if h, ok := old[id]; ok {
		return h
	}
	h := newHost(id, t, t.clock.Now())
	m := make(map[string]*Host, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[id] = h
	t.hosts.Store(newHostSet(m))
	return h
}

// Lookup returns the state of host id if it exists.
func (t *Tracker) Lookup(id string) (*Host, bool) {
	h, ok := t.hosts.Load().byID[id]
	return h, ok
}

// Remove forgets host id.
func (t *Tracker) Remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.hosts.Load().byID
	if _, ok := old[id]; !ok {
		return
	}
	m := make(map[string]*Host, len(old))
	for k, v := range old {
		if k != id {
			m[k] = v
		}
	}
	t.hosts.Store(newHostSet(m))
}

// Hosts returns the tracked hosts sorted by ID.
func (t *Tracker) Hosts() []*Host {
	out := append([]*Host(nil), t.hosts.Load().list...)
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Snapshot returns a snapshot of every host, sorted by ID.
func (t *Tracker) Snapshot() []HostSnapshot {
	hs := t.Hosts()
	out := make([]HostSnapshot, len(hs))
	for i, h := range hs {
		out[i] = h.Snapshot()
	}
	return out
}

// LatencyQuantile returns the cluster-wide q-quantile (0 < q <= 1) of recent
// attempt latencies (the current and previous LatencyWindow of every host)
// and false when fewer than MinQuantileSamples were recorded or q is out of
// range. The value is the highest of the histogram bucket holding the sample
// of rank round(q*n), as hdrhistogram reports it: at most 6.25% above the
// sample. Hosts record into their own histograms only (no shared cache line
// on the hot path); this merges them, and caches the result for
// QuantileCacheTTL (or, while it was not ok, until a host observes a sample).
func (t *Tracker) LatencyQuantile(q float64) (time.Duration, bool) {
	if !(q > 0 && q <= 1) {
		return 0, false
	}
	now := t.clock.Now()
	hosts := t.hosts.Load().list
	var total uint64
	for _, h := range hosts {
		total += h.samples.Load()
	}
	c := t.qcache.Load()
	if c != nil && now-c.at < QuantileCacheTTL && now >= c.at {
		for i := 0; i < c.n; i++ {
			if c.q[i] == q && (c.ok[i] || c.total == total) {
				return c.d[i], c.ok[i]
			}
		}
	}
	var merged hist.Counts
	var n uint64
	for _, h := range hosts {
		n += h.hist.AddTo(now, &merged)
	}
	d := merged.Quantile(n, q)
	ok := n >= uint64(t.cfg.MinQuantileSamples)
	nc := &quantileCache{at: now, total: total}
	if c != nil && now-c.at < QuantileCacheTTL && now >= c.at && c.total == total {
		*nc = *c
	}
	if nc.n == len(nc.q) {
		nc.n = 0
	}
	for i := 0; i < nc.n; i++ { // replace an entry for q if present
		if nc.q[i] == q {
			nc.q[i], nc.d[i], nc.ok[i] = q, d, ok
			t.qcache.Store(nc)
			return d, ok
		}
	}
	nc.q[nc.n], nc.d[nc.n], nc.ok[nc.n] = q, d, ok
	nc.n++
	t.qcache.Store(nc)
	return d, ok
}

// ResponseTime returns the mean R_s (EWMA of attempt latencies) of the hosts
// that have samples, and whether any has.
func (t *Tracker) ResponseTime() (time.Duration, bool) {
	r, ok := t.meanResponseTime()
	return time.Duration(r), ok
}

func (t *Tracker) meanResponseTime() (float64, bool) { return t.meanResponseTimeExcept(nil) }

// meanResponseTimeExcept is the mean R_s of the hosts with samples other
// than x.
func (t *Tracker) meanResponseTimeExcept(x *Host) (float64, bool) {
	var sum float64
	n := 0
	for _, h := range t.hosts.Load().list {
		if h == x {
			continue
		}
		if r, ok := h.resp.get(); ok {
			sum += r
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// priorResponseTime scores a host without samples: the mean of the others
// (so that a new or recovered host competes on equal terms), or
// DefaultResponseTime.
func (t *Tracker) priorResponseTime() float64 { return t.priorResponseTimeExcept(nil) }

// priorResponseTimeExcept is priorResponseTime over the hosts other than x.
func (t *Tracker) priorResponseTimeExcept(x *Host) float64 {
	if r, ok := t.meanResponseTimeExcept(x); ok {
		return r
	}
	return float64(t.cfg.DefaultResponseTime)
}

// successFloor is the floor of a failing host's sticky success rate:
// 0.0001 divided by the number of hosts (fallback cascade).
func (t *Tracker) successFloor() float64 {
	n := max(len(t.hosts.Load().list), 1)
	return 0.0001 / float64(n)
}
