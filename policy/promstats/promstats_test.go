package promstats

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/tracker"
)

func TestCollector(t *testing.T) {
	clk := tracker.NewManualClock(time.Second)
	p, err := policy.New(tailroute.WithClock(clk), tailroute.WithLocalRack("1c")) // the host's rack is ""
	require.NoError(t, err)
	h := &gocql.HostInfo{}
	h.SetConnectAddress(net.ParseIP("127.0.3.1"))
	h.SetHostID("a")
	p.AddHost(h)
	require.NoError(t, policy.Wire(gocql.NewCluster(), p)) // attempts are measured by the observer alone
	obs := p.Observer()
	attempt := func(d time.Duration, err error) {
		start := time.Unix(0, 0).Add(clk.Now())
		obs.ObserveQuery(context.Background(), gocql.ObservedQuery{Host: h, Start: start, End: start.Add(d), Err: err})
	}
	for i := 0; i < 30; i++ {
		attempt(2*time.Millisecond, nil)
	}
	attempt(10*time.Millisecond, gocql.ErrTimeoutNoResponse)    // Lost
	attempt(6*time.Millisecond, &gocql.RequestErrUnavailable{}) // Failure
	p.HostDown(h)                                               // counters survive the reset of a host that goes down
	p.HostUp(h)
	for i := 0; i < 30; i++ {
		attempt(2*time.Millisecond, nil)
	}
	inFlight := p.Pick(nil)()
	require.NotNil(t, inFlight)
	defer inFlight.Mark(context.Canceled)
	attempt(time.Millisecond, context.Canceled) // a losing hedge the host still serves

	c := New(p, WithLabels(prometheus.Labels{"strategy": "c3"}))
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	types := map[string]dto.MetricType{}
	n := 0
	for _, f := range fams {
		types[f.GetName()] = f.GetType()
		for _, m := range f.GetMetric() {
			n++
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			assert.Equal(t, "c3", labels["strategy"], f.GetName())
			if strings.HasPrefix(f.GetName(), "tailroute_host_") {
				assert.Equal(t, "127.0.3.1:0", labels["host"], f.GetName())
			}
			assert.NotContains(t, labels, "quantile", "quantile is a summary's own label, not a metric label")
			key := f.GetName()
			switch {
			case m.GetGauge() != nil:
				got[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				got[key] = m.GetCounter().GetValue()
			case m.GetSummary() != nil:
				sm := m.GetSummary()
				got[key+"_count"] = float64(sm.GetSampleCount())
				got[key+"_sum"] = sm.GetSampleSum()
				for _, q := range sm.GetQuantile() {
					got[key+"{"+strconv.FormatFloat(q.GetQuantile(), 'f', -1, 64)+"}"] = q.GetValue()
				}
			}
		}
	}
	assert.Equal(t, 12+1+3+7+8, n, "12 host gauges (no server-load sample), 1 host summary, 3 host counters, 7 policy counters, 8 server-load metrics")
	for name, typ := range types {
		switch {
		case name == "tailroute_host_latency_seconds":
			assert.Equal(t, dto.MetricType_SUMMARY, typ, name)
		case strings.HasSuffix(name, "_total"):
			assert.Equal(t, dto.MetricType_COUNTER, typ, name)
		default:
			assert.Equal(t, dto.MetricType_GAUGE, typ, name)
		}
	}
	assert.Equal(t, 63.0, got["tailroute_host_requests_total"], "60 answered, 1 lost, 1 failed, 1 cancelled, across the reset")
	assert.Equal(t, 2.0, got["tailroute_host_errors_total"])
	assert.Equal(t, 62.0, got["tailroute_host_latency_seconds_count"], "cancelled attempts have no latency")
	assert.InDelta(t, 60*0.002+0.010+0.006, got["tailroute_host_latency_seconds_sum"], 1e-9)
	assert.InEpsilon(t, 0.002, got["tailroute_host_latency_seconds{0.5}"], 0.07)
	assert.Equal(t, 1.0, got["tailroute_host_in_flight"])
	assert.Equal(t, 1.0, got["tailroute_host_orphaned"])
	assert.InDelta(t, 0.002, got["tailroute_host_response_time_seconds"], 1e-12)
	assert.InEpsilon(t, 0.002, got["tailroute_host_latency_seconds{0.99}"], 0.07)
	assert.Equal(t, 1.0, got["tailroute_host_up"])
	assert.Equal(t, 1.0, got["tailroute_host_success_ratio"])
	assert.Equal(t, 0.0, got["tailroute_host_busy"])
	assert.Equal(t, 0.0, got["tailroute_probes_total"])
	assert.Equal(t, 1.0, got["tailroute_host_out_of_zone_total"], "the one attempt handed out left the client's zone")
	assert.Equal(t, 1.0, got["tailroute_out_of_zone_total"])
	// Psi + k*S = R - S + (1 + os*w)^3 * S + 2S with S = R (no feedback),
	// os = 1 in flight + 1 orphaned: 29R
	assert.InDelta(t, 0.058, got["tailroute_host_score_seconds"], 1e-9)
}
