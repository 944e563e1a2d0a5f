package promstats

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/promlabels"
)

// StatsSource is what a Collector reads: *speculative.Hedger (gocql v1)
// and *apache/speculative.Hedger (v2) both are one; Stats is their
// speculative.Stats. This package imports neither driver.
type StatsSource interface{ Stats() tailroute.Hedging }

// Collector is a prometheus.Collector reading a Hedger's Stats at
// scrape time (no background goroutine, nothing on the request path).
type Collector struct {
	h StatsSource

	executions, eligible, armed, fired, won, lost, suppressed, deferred *prometheus.Desc
	noTarget, unreserved, lifted                                        *prometheus.Desc
	inFlight, delay, deferredDelay, quantile, winReq, winHedges         *prometheus.Desc
	reserved, targetWait, busy                                          *prometheus.Desc
}

// Option configures a Collector's labels (WithSession, WithLabels; the
// same type as policy/promstats' Option).
type Option = promlabels.Option

// WithSession sets the session label of every metric (default "default"):
// give each hedger registered in one registry its own.
func WithSession(name string) Option { return promlabels.WithSession(name) }

// WithLabels adds constant labels to every metric, e.g. {"driver": "v2"};
// collectors registered together must use the same label names.
func WithLabels(l prometheus.Labels) Option { return promlabels.WithLabels(l) }

// New returns a collector for h.
func New(h StatsSource, opts ...Option) *Collector {
	constLabels := promlabels.Const(opts)
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("tailroute_hedge_"+name, help, labels, constLabels)
	}
	return &Collector{
		h:             h,
		executions:    d("executions_total", "Query executions seen by the hedging policy (Pick calls)."),
		eligible:      d("eligible_total", "Executions that may hedge: idempotent and not opted out."),
		armed:         d("armed_total", "Executions armed: a hedge fires if the first attempt outlives the delay."),
		fired:         d("fired_total", "Hedges sent (extra attempts)."),
		won:           d("won_total", "Hedges whose attempt was the execution's first success."),
		lost:          d("lost_total", "Hedges beaten by a success of an earlier attempt."),
		suppressed:    d("suppressed_total", "Eligible executions not armed, by reason: budget (long-run budget spent), burst (burst cap), too_few_hosts, many_clients (the load rule: one client of many).", "reason"),
		deferred:      d("deferred_total", "Armed executions whose hedge the load rule deferred to the deferred delay, by reason: queueing, target_slow, losing.", "reason"),
		lifted:        d("burst_lifted_total", "Executions over the burst cap armed anyway because a host was stalled."),
		noTarget:      d("no_target_total", "Hedges that fired but found no host left."),
		unreserved:    d("unreserved_total", "Hedges that fired after their budget reservation was released."),
		inFlight:      d("in_flight", "Hedges sent whose attempt has not ended."),
		delay:         d("delay_seconds", "Current hedge delay."),
		deferredDelay: d("deferred_delay_seconds", "Current delay of a hedge the load rule deferred."),
		quantile:      d("quantile", "Latency quantile the delay follows now (raised under budget pressure)."),
		winReq:        d("window_requests", "Executions counted in the budget window."),
		winHedges:     d("window_hedges", "Hedges counted in the budget window."),
		reserved:      d("reserved", "Budget reservations held by armed executions."),
		targetWait:    d("target_wait_seconds", "Load rule: expected response time of the host a hedge would go to."),
		busy:          d("busy", "Load rule: share of its workers the median host has taken, now or on average over about a second (1 where unknown)."),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.executions, c.eligible, c.armed, c.fired, c.won, c.lost, c.suppressed,
		c.deferred, c.noTarget, c.unreserved, c.lifted, c.inFlight, c.delay, c.deferredDelay, c.quantile, c.winReq,
		c.winHedges, c.reserved, c.targetWait, c.busy} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.h.Stats()
	ct, g := prometheus.CounterValue, prometheus.GaugeValue
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	m(c.executions, ct, float64(s.Executions))
	m(c.eligible, ct, float64(s.Eligible))
	m(c.armed, ct, float64(s.Armed))
	m(c.fired, ct, float64(s.Hedges))
	m(c.won, ct, float64(s.Won))
	m(c.lost, ct, float64(s.Lost))
	for _, r := range s.Suppressed() {
		m(c.suppressed, ct, float64(r.N), r.Reason)
	}
	for _, r := range s.Deferred() {
		m(c.deferred, ct, float64(r.N), r.Reason)
	}
	m(c.lifted, ct, float64(s.BurstLifted))
	m(c.noTarget, ct, float64(s.NoTarget))
	m(c.unreserved, ct, float64(s.Unreserved))
	m(c.inFlight, g, float64(s.InFlight))
	m(c.delay, g, s.Delay.Seconds())
	m(c.deferredDelay, g, s.DeferredDelay.Seconds())
	m(c.quantile, g, s.Quantile)
	m(c.winReq, g, float64(s.WindowRequests))
	m(c.winHedges, g, float64(s.WindowHedges))
	m(c.reserved, g, float64(s.Reserved))
	m(c.targetWait, g, s.TargetWait.Seconds())
	m(c.busy, g, s.Busy)
}
