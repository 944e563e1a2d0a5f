package promstats

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tailroute/tailroute"
)

// Source is what the collector reads: a *policy.Policy (gocql v1) or a
// policy of github.com/tailroute/tailroute/apache/policy (the Apache
// Cassandra Go driver v2). This package imports neither driver.
type Source interface {
	Stats() []tailroute.HostStats
	Counters() tailroute.Counters
}

// Collector is a prometheus.Collector reading policy.Stats and
// policy.Counters at scrape time (no background goroutine, nothing on the
// request path). Per-host metrics carry the labels host (address:port) and
// dc. Names and types follow the Prometheus conventions: base units
// (seconds), _total for counters, latency as a summary
// (tailroute_host_latency_seconds: quantiles 0.5 and 0.99 over the
// tracker's recent window, _count and _sum since the host was added, as a
// client_golang Summary with MaxAge).
type Collector struct {
	p Source

	inFlight, orphaned, respTime, svcTime, queue, score *prometheus.Desc
	rate, rrate, success, busy, up, latency             *prometheus.Desc
	requests, errors                                    *prometheus.Desc
	waits, overRate, probes, abandoned, unrouted        *prometheus.Desc
}

// New returns a collector for p. constLabels (may be nil) are added to every
// metric, e.g. {"strategy": "c3"}.
func New(p Source, constLabels prometheus.Labels) *Collector {
	host := []string{"host", "dc"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc("tailroute_"+name, help, labels, constLabels)
	}
	return &Collector{
		p:         p,
		inFlight:  d("host_in_flight", "Requests in flight to the host (os_s).", host),
		orphaned:  d("host_orphaned", "Requests the client gave up on (losing hedges, expired contexts) that the host presumably still serves.", host),
		respTime:  d("host_response_time_seconds", "EWMA of the host's response time (R_s).", host),
		svcTime:   d("host_service_time_seconds", "EWMA of the server-reported service time (1/mu_s); 0 without feedback.", host),
		queue:     d("host_queue_size", "EWMA of the server-reported queue size (q_s); 0 without feedback.", host),
		score:     d("host_score_seconds", "C3 score of the host (Psi_s + k/mu_s).", host),
		rate:      d("host_send_rate", "CUBIC sending rate (srate), requests per rate interval.", host),
		rrate:     d("host_receive_rate", "Receive rate (rrate), responses per rate interval.", host),
		success:   d("host_success_ratio", "Weighted success ratio of the rolling buckets.", host),
		busy:      d("host_busy", "1 if the host meets the busy-node condition.", host),
		up:        d("host_up", "1 if the host is up.", host),
		latency:   d("host_latency_seconds", "Attempt latency of the host: quantiles over the recent window, count and sum since the host was added (cancelled attempts excluded).", host),
		requests:  d("host_requests_total", "Attempts sent to the host and finished, with any outcome (cancelled ones included).", host),
		errors:    d("host_errors_total", "Attempts on the host that ended with a server error signalling trouble (overloaded, unavailable, server-side timeout...) or without an answer (client timeout, connection error); errors of the query itself count as answered.", host),
		waits:     d("backpressure_waits_total", "Requests that waited because every eligible replica was over its rate.", nil),
		overRate:  d("sent_over_rate_total", "Requests sent to the best replica although over its rate.", nil),
		probes:    d("probes_total", "Requests sent first to a stale replica (recovery probing).", nil),
		abandoned: d("abandoned_total", "Hosts handed out that the driver skipped without Mark.", nil),
		unrouted:  d("unrouted_total", "Picks without token information.", nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.inFlight, c.orphaned, c.respTime, c.svcTime, c.queue, c.score, c.rate, c.rrate,
		c.success, c.busy, c.up, c.latency, c.requests, c.errors, c.waits, c.overRate, c.probes, c.abandoned, c.unrouted} {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	g := prometheus.GaugeValue
	for _, s := range c.p.Stats() {
		l := []string{s.Address, s.DC}
		ch <- prometheus.MustNewConstMetric(c.inFlight, g, float64(s.InFlight), l...)
		ch <- prometheus.MustNewConstMetric(c.orphaned, g, float64(s.Orphaned), l...)
		ch <- prometheus.MustNewConstMetric(c.respTime, g, s.ResponseTime.Seconds(), l...)
		ch <- prometheus.MustNewConstMetric(c.svcTime, g, s.ServiceTime.Seconds(), l...)
		ch <- prometheus.MustNewConstMetric(c.queue, g, s.QueueSize, l...)
		ch <- prometheus.MustNewConstMetric(c.score, g, s.Score/1e9, l...)
		ch <- prometheus.MustNewConstMetric(c.rate, g, s.Rate, l...)
		ch <- prometheus.MustNewConstMetric(c.rrate, g, s.ReceiveRate, l...)
		ch <- prometheus.MustNewConstMetric(c.success, g, s.SuccessRate, l...)
		ch <- prometheus.MustNewConstMetric(c.busy, g, b2f(s.Busy), l...)
		ch <- prometheus.MustNewConstMetric(c.up, g, b2f(s.Up), l...)
		var qs map[float64]float64
		if s.QuantilesOK {
			qs = map[float64]float64{0.5: s.P50.Seconds(), 0.99: s.P99.Seconds()}
		}
		ch <- prometheus.MustNewConstSummary(c.latency, s.TotalMeasured, s.TotalLatency.Seconds(), qs, l...)
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(s.TotalAttempts), l...)
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(s.TotalErrors), l...)
	}
	k := c.p.Counters()
	ct := prometheus.CounterValue
	ch <- prometheus.MustNewConstMetric(c.waits, ct, float64(k.BackpressureWaits))
	ch <- prometheus.MustNewConstMetric(c.overRate, ct, float64(k.SentOverRate))
	ch <- prometheus.MustNewConstMetric(c.probes, ct, float64(k.Probes))
	ch <- prometheus.MustNewConstMetric(c.abandoned, ct, float64(k.Abandoned))
	ch <- prometheus.MustNewConstMetric(c.unrouted, ct, float64(k.Unrouted))
}
