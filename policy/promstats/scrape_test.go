package promstats_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	policyprom "github.com/tailroute/tailroute/policy/promstats"
	hedgeprom "github.com/tailroute/tailroute/speculative/promstats"
	"github.com/tailroute/tailroute/tracker"
)

// fakePolicy is a policy with fixed statistics.
type fakePolicy struct {
	hosts []tailroute.HostStats
	c     tailroute.Counters
	sl    tailroute.ServerLoadCounters
}

func (f *fakePolicy) Stats() []tailroute.HostStats                     { return f.hosts }
func (f *fakePolicy) Counters() tailroute.Counters                     { return f.c }
func (f *fakePolicy) ServerLoadCounters() tailroute.ServerLoadCounters { return f.sl }

type fakeHedger tailroute.Hedging

func (f *fakeHedger) Stats() tailroute.Hedging { return tailroute.Hedging(*f) }

func host(addr string, stalled bool) tailroute.HostStats {
	return tailroute.HostStats{
		HostSnapshot: tracker.HostSnapshot{
			InFlight: 2, ResponseTime: 3 * time.Millisecond, Rate: 5, ReceiveRate: 4, SuccessRate: 1,
			TotalAttempts: 10, TotalMeasured: 9, TotalLatency: 27 * time.Millisecond,
			HasServerLoad: true, ServerQueue: 6, ServerServiceTime: 2 * time.Millisecond, ServerLoadAge: 500 * time.Millisecond,
			P50: time.Millisecond, P99: 8 * time.Millisecond, QuantilesOK: true,
		},
		Address: addr, DC: "dc1", Up: true, Stalled: stalled, Score: 4e6, RateInterval: 20 * time.Millisecond,
	}
}

// TestScrapeBothCollectors scrapes the policy and hedger collectors of two
// sessions registered side by side in one registry: names, types, units
// (seconds, per second), help text and labels, as an exposition.
func TestScrapeBothCollectors(t *testing.T) {
	a := &fakePolicy{hosts: []tailroute.HostStats{host("10.0.0.1:9042", true)},
		c: tailroute.Counters{BackpressureWaits: 1, SentOverRate: 2, Probes: 3, Demoted: 4, Abandoned: 5, Unrouted: 6},
		sl: tailroute.ServerLoadCounters{Polls: 7, Failures: 1, Samples: 6, Skipped: []string{"x"}, QueueMax: 3.5, Weight: 2,
			PollsPerSecond: 2.5, Interval: 400 * time.Millisecond}}
	b := &fakePolicy{hosts: []tailroute.HostStats{host("10.0.0.2:9042", false)}, c: tailroute.Counters{Demoted: 9}}
	ha := &fakeHedger{Executions: 100, Eligible: 90, Armed: 80, Hedges: 5, Won: 3, Lost: 2, BudgetDenied: 4, Delay: 12 * time.Millisecond, Quantile: 0.95}
	hb := &fakeHedger{Executions: 1}

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(policyprom.New(a, policyprom.WithSession("a"))))
	require.NoError(t, reg.Register(policyprom.New(b, policyprom.WithSession("b"))), "a second policy registers beside the first")
	require.NoError(t, reg.Register(hedgeprom.New(ha, hedgeprom.WithSession("a"))))
	require.NoError(t, reg.Register(hedgeprom.New(hb, hedgeprom.WithSession("b"))))
	assert.Error(t, reg.Register(policyprom.New(b, policyprom.WithSession("b"))), "the same session twice is refused by the registry")

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems, "promlint: Prometheus naming conventions")

	const want = `
# HELP tailroute_demoted_total Replicas ranked last for being materially less healthy than the best, summed over picks.
# TYPE tailroute_demoted_total counter
tailroute_demoted_total{session="a"} 4
tailroute_demoted_total{session="b"} 9
# HELP tailroute_host_send_rate_per_second CUBIC sending rate (srate), requests per second.
# TYPE tailroute_host_send_rate_per_second gauge
tailroute_host_send_rate_per_second{dc="dc1",host="10.0.0.1:9042",session="a"} 250
tailroute_host_send_rate_per_second{dc="dc1",host="10.0.0.2:9042",session="b"} 250
# HELP tailroute_host_receive_rate_per_second Receive rate (rrate), responses per second.
# TYPE tailroute_host_receive_rate_per_second gauge
tailroute_host_receive_rate_per_second{dc="dc1",host="10.0.0.1:9042",session="a"} 200
tailroute_host_receive_rate_per_second{dc="dc1",host="10.0.0.2:9042",session="b"} 200
# HELP tailroute_host_stalled 1 if the host owes responses and has given none for longer than the stall threshold.
# TYPE tailroute_host_stalled gauge
tailroute_host_stalled{dc="dc1",host="10.0.0.1:9042",session="a"} 1
tailroute_host_stalled{dc="dc1",host="10.0.0.2:9042",session="b"} 0
# HELP tailroute_host_score_seconds C3 score of the host (Psi_s + k/mu_s).
# TYPE tailroute_host_score_seconds gauge
tailroute_host_score_seconds{dc="dc1",host="10.0.0.1:9042",session="a"} 0.004
tailroute_host_score_seconds{dc="dc1",host="10.0.0.2:9042",session="b"} 0.004
# HELP tailroute_host_server_service_time_seconds Polled, smoothed service time of the host; only with a sample.
# TYPE tailroute_host_server_service_time_seconds gauge
tailroute_host_server_service_time_seconds{dc="dc1",host="10.0.0.1:9042",session="a"} 0.002
tailroute_host_server_service_time_seconds{dc="dc1",host="10.0.0.2:9042",session="b"} 0.002
# HELP tailroute_host_latency_seconds Attempt latency of the host: quantiles over the recent window, count and sum since the host was added (cancelled attempts excluded).
# TYPE tailroute_host_latency_seconds summary
tailroute_host_latency_seconds{dc="dc1",host="10.0.0.1:9042",session="a",quantile="0.5"} 0.001
tailroute_host_latency_seconds{dc="dc1",host="10.0.0.1:9042",session="a",quantile="0.99"} 0.008
tailroute_host_latency_seconds_sum{dc="dc1",host="10.0.0.1:9042",session="a"} 0.027
tailroute_host_latency_seconds_count{dc="dc1",host="10.0.0.1:9042",session="a"} 9
tailroute_host_latency_seconds{dc="dc1",host="10.0.0.2:9042",session="b",quantile="0.5"} 0.001
tailroute_host_latency_seconds{dc="dc1",host="10.0.0.2:9042",session="b",quantile="0.99"} 0.008
tailroute_host_latency_seconds_sum{dc="dc1",host="10.0.0.2:9042",session="b"} 0.027
tailroute_host_latency_seconds_count{dc="dc1",host="10.0.0.2:9042",session="b"} 9
# HELP tailroute_server_load_polls_total Server-load poll queries sent (system_views.thread_pools).
# TYPE tailroute_server_load_polls_total counter
tailroute_server_load_polls_total{session="a"} 7
tailroute_server_load_polls_total{session="b"} 0
# HELP tailroute_server_load_concurrency_weight Concurrency weight in force, min(w, max(1, Qmax)).
# TYPE tailroute_server_load_concurrency_weight gauge
tailroute_server_load_concurrency_weight{session="a"} 2
tailroute_server_load_concurrency_weight{session="b"} 0
# HELP tailroute_server_load_polls_per_second Server-load polls per second per node polled, by this client, over about the last 5 seconds.
# TYPE tailroute_server_load_polls_per_second gauge
tailroute_server_load_polls_per_second{session="a"} 2.5
tailroute_server_load_polls_per_second{session="b"} 0
# HELP tailroute_server_load_poll_interval_seconds Server-load poll interval in force (WithPollBudget).
# TYPE tailroute_server_load_poll_interval_seconds gauge
tailroute_server_load_poll_interval_seconds{session="a"} 0.4
tailroute_server_load_poll_interval_seconds{session="b"} 0
# HELP tailroute_hedge_suppressed_total Eligible executions not armed, by reason: budget (long-run budget spent), burst (burst cap), too_few_hosts, many_clients (the load rule: one client of many).
# TYPE tailroute_hedge_suppressed_total counter
tailroute_hedge_suppressed_total{reason="budget",session="a"} 4
tailroute_hedge_suppressed_total{reason="burst",session="a"} 0
tailroute_hedge_suppressed_total{reason="too_few_hosts",session="a"} 0
tailroute_hedge_suppressed_total{reason="many_clients",session="a"} 0
tailroute_hedge_suppressed_total{reason="budget",session="b"} 0
tailroute_hedge_suppressed_total{reason="burst",session="b"} 0
tailroute_hedge_suppressed_total{reason="too_few_hosts",session="b"} 0
tailroute_hedge_suppressed_total{reason="many_clients",session="b"} 0
# HELP tailroute_hedge_deferred_total Armed executions whose hedge the load rule deferred to the deferred delay, by reason: queueing, target_slow, losing.
# TYPE tailroute_hedge_deferred_total counter
tailroute_hedge_deferred_total{reason="losing",session="a"} 0
tailroute_hedge_deferred_total{reason="queueing",session="a"} 0
tailroute_hedge_deferred_total{reason="target_slow",session="a"} 0
tailroute_hedge_deferred_total{reason="losing",session="b"} 0
tailroute_hedge_deferred_total{reason="queueing",session="b"} 0
tailroute_hedge_deferred_total{reason="target_slow",session="b"} 0
# HELP tailroute_hedge_delay_seconds Current hedge delay.
# TYPE tailroute_hedge_delay_seconds gauge
tailroute_hedge_delay_seconds{session="a"} 0.012
tailroute_hedge_delay_seconds{session="b"} 0
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"tailroute_demoted_total", "tailroute_host_send_rate_per_second", "tailroute_host_receive_rate_per_second",
		"tailroute_host_stalled", "tailroute_host_score_seconds", "tailroute_host_server_service_time_seconds",
		"tailroute_host_latency_seconds", "tailroute_server_load_polls_total", "tailroute_server_load_concurrency_weight",
		"tailroute_server_load_polls_per_second", "tailroute_server_load_poll_interval_seconds",
		"tailroute_hedge_suppressed_total", "tailroute_hedge_deferred_total", "tailroute_hedge_delay_seconds"))

	// Every family: help text, a type that fits its name, a unit in the
	// name where it has one, and both sessions.
	fams, err := reg.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range fams {
		name := f.GetName()
		names[name] = true
		assert.NotEmpty(t, f.GetHelp(), name)
		assert.True(t, strings.HasSuffix(f.GetHelp(), "."), "%s: help is a sentence", name)
		switch {
		case name == "tailroute_host_latency_seconds":
			assert.Equal(t, dto.MetricType_SUMMARY, f.GetType())
		case strings.HasSuffix(name, "_total"):
			assert.Equal(t, dto.MetricType_COUNTER, f.GetType(), name)
		default:
			assert.Equal(t, dto.MetricType_GAUGE, f.GetType(), name)
		}
		if strings.HasSuffix(name, "_rate") || strings.Contains(name, "_rate_") && !strings.HasSuffix(name, "_total") {
			assert.True(t, strings.HasSuffix(name, "_rate_per_second"), "%s: a rate is per second (no per-interval rates)", name)
		}
		sessions := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "session" {
					sessions[l.GetValue()] = true
				}
			}
		}
		assert.Equal(t, map[string]bool{"a": true, "b": true}, sessions, name)
	}
	for _, name := range []string{
		// every Counters field
		"tailroute_backpressure_waits_total", "tailroute_sent_over_rate_total", "tailroute_probes_total",
		"tailroute_demoted_total", "tailroute_abandoned_total", "tailroute_unrouted_total", "tailroute_out_of_zone_total",
		// server load and the stalled state
		"tailroute_server_load_polls_total", "tailroute_server_load_poll_failures_total", "tailroute_server_load_samples_total",
		"tailroute_server_load_skipped_hosts", "tailroute_server_load_queue_max", "tailroute_server_load_concurrency_weight",
		"tailroute_server_load_polls_per_second", "tailroute_server_load_poll_interval_seconds",
		"tailroute_host_server_queue_size", "tailroute_host_server_service_time_seconds", "tailroute_host_server_load_age_seconds",
		"tailroute_host_stalled",
		// the hedger's counters
		"tailroute_hedge_armed_total", "tailroute_hedge_fired_total", "tailroute_hedge_won_total", "tailroute_hedge_lost_total",
	} {
		assert.True(t, names[name], "%s is exported", name)
	}
}
