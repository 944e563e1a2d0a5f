package promstats

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/promlabels"
)

// Source is what the collector reads: a *policy.Policy (gocql v1) or a
// policy of github.com/tailroute/tailroute/apache/policy (the Apache
// Cassandra Go driver v2). A Source that also has ServerLoadCounters (both
// adapters' policies do) exports the server-load polling counters.
type Source interface {
	Stats() []tailroute.HostStats
	Counters() tailroute.Counters
}

// serverLoadSource is a Source with server-load polling counters.
type serverLoadSource interface {
	ServerLoadCounters() tailroute.ServerLoadCounters
}

// Option configures a Collector's labels (WithSession, WithLabels; the
// same type as speculative/promstats' Option).
type Option = promlabels.Option

// WithSession sets the session label of every metric (default "default"):
// give each policy registered in one registry its own.
func WithSession(name string) Option { return promlabels.WithSession(name) }

// WithLabels adds constant labels to every metric, e.g. {"driver": "v2"};
// collectors registered together must use the same label names.
func WithLabels(l prometheus.Labels) Option { return promlabels.WithLabels(l) }

// Collector is a prometheus.Collector reading a policy's Stats, Counters
// and ServerLoadCounters at scrape time (see the package doc for the
// metrics).
type Collector struct {
	p Source

	inFlight, orphaned, respTime, svcTime, queue, score   *prometheus.Desc
	rate, rrate, success, busy, stalled, up, latency      *prometheus.Desc
	srvQueue, srvSvc, srvAge                              *prometheus.Desc
	requests, errors, outOfZone                           *prometheus.Desc
	waits, overRate, probes, demoted, abandoned, unrouted *prometheus.Desc
	outOfZoneAll                                          *prometheus.Desc
	polls, pollFailures, samples, skipped, qmax, weight   *prometheus.Desc
	pollRate, pollInterval                                *prometheus.Desc
}

// New returns a collector for p.
func New(p Source, opts ...Option) *Collector {
	constLabels := promlabels.Const(opts)
	host := []string{"host", "dc"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc("tailroute_"+name, help, labels, constLabels)
	}
	return &Collector{
		p:            p,
		inFlight:     d("host_in_flight", "Requests in flight to the host (os_s).", host),
		orphaned:     d("host_orphaned", "Requests the client gave up on (losing hedges, expired contexts) that the host presumably still serves.", host),
		respTime:     d("host_response_time_seconds", "EWMA of the host's response time (R_s).", host),
		svcTime:      d("host_service_time_seconds", "EWMA of the service time reported in response payloads (1/mu_s); 0 without payload feedback.", host),
		queue:        d("host_queue_size", "EWMA of the queue size reported in response payloads (q_s); 0 without payload feedback.", host),
		score:        d("host_score_seconds", "C3 score of the host (Psi_s + k/mu_s).", host),
		rate:         d("host_send_rate_per_second", "CUBIC sending rate (srate), requests per second.", host),
		rrate:        d("host_receive_rate_per_second", "Receive rate (rrate), responses per second.", host),
		success:      d("host_success_ratio", "Weighted success ratio of the rolling buckets (0..1).", host),
		busy:         d("host_busy", "1 if the host meets the busy-node condition.", host),
		stalled:      d("host_stalled", "1 if the host owes responses and has given none for longer than the stall threshold.", host),
		up:           d("host_up", "1 if the host is up.", host),
		srvQueue:     d("host_server_queue_size", "Polled server queue of the host (pending + active requests, system_views.thread_pools); only with a sample.", host),
		srvSvc:       d("host_server_service_time_seconds", "Polled, smoothed service time of the host; only with a sample.", host),
		srvAge:       d("host_server_load_age_seconds", "Age of the host's latest polled server-load sample; only with a sample.", host),
		latency:      d("host_latency_seconds", "Attempt latency of the host: quantiles over the recent window, count and sum since the host was added (cancelled attempts excluded).", host),
		requests:     d("host_requests_total", "Attempts sent to the host and finished, with any outcome (cancelled ones included).", host),
		errors:       d("host_errors_total", "Attempts on the host that ended with a server error signalling trouble (overloaded, unavailable, server-side timeout...) or without an answer (client timeout, connection error); errors of the query itself count as answered.", host),
		outOfZone:    d("host_out_of_zone_total", "Attempts sent to the host while it was out of the client's zone (WithLocalRack).", host),
		outOfZoneAll: d("out_of_zone_total", "Attempts sent to a host outside the client's zone (WithLocalRack).", nil),
		waits:        d("backpressure_waits_total", "Requests that waited because every eligible replica was over its rate.", nil),
		overRate:     d("sent_over_rate_total", "Requests sent to the best replica although over its rate.", nil),
		probes:       d("probes_total", "Requests sent first to a replica ranked last for its health (recovery probing).", nil),
		demoted:      d("demoted_total", "Replicas ranked last for being materially less healthy than the best, summed over picks.", nil),
		abandoned:    d("abandoned_total", "Hosts handed out that the driver skipped without Mark.", nil),
		unrouted:     d("unrouted_total", "Picks without token information.", nil),
		polls:        d("server_load_polls_total", "Server-load poll queries sent (system_views.thread_pools).", nil),
		pollFailures: d("server_load_poll_failures_total", "Server-load polls that failed or timed out.", nil),
		samples:      d("server_load_samples_total", "Server-load samples recorded.", nil),
		skipped:      d("server_load_skipped_hosts", "Hosts not polled (no system_views.thread_pools, or not allowed).", nil),
		qmax:         d("server_load_queue_max", "Longest smoothed polled queue over the hosts (Qmax).", nil),
		weight:       d("server_load_concurrency_weight", "Concurrency weight in force, min(w, max(1, Qmax)).", nil),
		pollRate:     d("server_load_polls_per_second", "Server-load polls per second per node polled, by this client, over about the last 5 seconds.", nil),
		pollInterval: d("server_load_poll_interval_seconds", "Server-load poll interval in force (WithPollBudget).", nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.inFlight, c.orphaned, c.respTime, c.svcTime, c.queue, c.score, c.rate, c.rrate,
		c.success, c.busy, c.stalled, c.up, c.srvQueue, c.srvSvc, c.srvAge, c.latency, c.requests, c.errors, c.outOfZone,
		c.waits, c.overRate, c.probes, c.demoted, c.abandoned, c.unrouted, c.outOfZoneAll,
		c.polls, c.pollFailures, c.samples, c.skipped, c.qmax, c.weight, c.pollRate, c.pollInterval} {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// perSecond converts a count per rate interval into a count per second.
func perSecond(v float64, s tailroute.HostStats) float64 {
	if s.RateInterval <= 0 {
		return 0
	}
	return v / s.RateInterval.Seconds()
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	g, ct := prometheus.GaugeValue, prometheus.CounterValue
	for _, s := range c.p.Stats() {
		l := []string{s.Address, s.DC}
		m := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
			ch <- prometheus.MustNewConstMetric(d, t, v, l...)
		}
		m(c.inFlight, g, float64(s.InFlight))
		m(c.orphaned, g, float64(s.Orphaned))
		m(c.respTime, g, s.ResponseTime.Seconds())
		m(c.svcTime, g, s.ServiceTime.Seconds())
		m(c.queue, g, s.QueueSize)
		m(c.score, g, s.Score/1e9)
		m(c.rate, g, perSecond(s.Rate, s))
		m(c.rrate, g, perSecond(s.ReceiveRate, s))
		m(c.success, g, s.SuccessRate)
		m(c.busy, g, b2f(s.Busy))
		m(c.stalled, g, b2f(s.Stalled))
		m(c.up, g, b2f(s.Up))
		if s.HasServerLoad {
			m(c.srvQueue, g, s.ServerQueue)
			m(c.srvSvc, g, s.ServerServiceTime.Seconds())
			m(c.srvAge, g, s.ServerLoadAge.Seconds())
		}
		var qs map[float64]float64
		if s.QuantilesOK {
			qs = map[float64]float64{0.5: s.P50.Seconds(), 0.99: s.P99.Seconds()}
		}
		ch <- prometheus.MustNewConstSummary(c.latency, s.TotalMeasured, s.TotalLatency.Seconds(), qs, l...)
		m(c.requests, ct, float64(s.TotalAttempts))
		m(c.errors, ct, float64(s.TotalErrors))
		m(c.outOfZone, ct, float64(s.OutOfZone))
	}
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
		ch <- prometheus.MustNewConstMetric(d, t, v)
	}
	k := c.p.Counters()
	m(c.waits, ct, float64(k.BackpressureWaits))
	m(c.overRate, ct, float64(k.SentOverRate))
	m(c.probes, ct, float64(k.Probes))
	m(c.demoted, ct, float64(k.Demoted))
	m(c.abandoned, ct, float64(k.Abandoned))
	m(c.unrouted, ct, float64(k.Unrouted))
	m(c.outOfZoneAll, ct, float64(k.OutOfZone))
	if sl, ok := c.p.(serverLoadSource); ok {
		n := sl.ServerLoadCounters()
		m(c.polls, ct, float64(n.Polls))
		m(c.pollFailures, ct, float64(n.Failures))
		m(c.samples, ct, float64(n.Samples))
		m(c.skipped, g, float64(len(n.Skipped)))
		m(c.qmax, g, n.QueueMax)
		m(c.weight, g, n.Weight)
		m(c.pollRate, g, n.PollsPerSecond)
		m(c.pollInterval, g, n.Interval.Seconds())
	}
}
