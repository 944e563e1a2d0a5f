package promstats

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/tracker"
)

func TestCollector(t *testing.T) {
	clk := tracker.NewManualClock(time.Second)
	p, err := policy.New(policy.WithClock(clk))
	require.NoError(t, err)
	h := &gocql.HostInfo{}
	h.SetConnectAddress(net.ParseIP("127.0.3.1"))
	h.SetHostID("a")
	p.AddHost(h)
	for i := 0; i < 30; i++ {
		p.Tracker().Host("a").Observe(2*time.Millisecond, tracker.Success)
	}
	a := p.Tracker().Host("a").Begin()
	defer p.Tracker().Host("a").End(a)
	p.Tracker().Host("a").Observe(time.Millisecond, tracker.Cancelled) // a losing hedge the host still serves

	c := New(p, prometheus.Labels{"strategy": "c3"})
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	n := 0
	for _, f := range fams {
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
			key := f.GetName()
			if q, ok := labels["quantile"]; ok {
				key += "{" + q + "}"
			}
			if g := m.GetGauge(); g != nil {
				got[key] = g.GetValue()
			} else {
				got[key] = m.GetCounter().GetValue()
			}
		}
	}
	assert.Equal(t, 11+2+5, n, "11 host gauges, 2 quantiles, 5 counters")
	assert.Equal(t, 1.0, got["tailroute_host_in_flight"])
	assert.Equal(t, 1.0, got["tailroute_host_orphaned"])
	assert.InDelta(t, 0.002, got["tailroute_host_response_time_seconds"], 1e-12)
	assert.InEpsilon(t, 0.002, got["tailroute_host_latency_seconds{0.99}"], 0.07)
	assert.Equal(t, 1.0, got["tailroute_host_up"])
	assert.Equal(t, 1.0, got["tailroute_host_success_ratio"])
	assert.Equal(t, 0.0, got["tailroute_host_busy"])
	assert.Equal(t, 0.0, got["tailroute_probes_total"])
	// Psi = R - S + (1 + os*w)^3 * S with S = R (no feedback), os = 1 in
	// flight + 1 orphaned: 27R
	assert.InDelta(t, 0.054, got["tailroute_host_score_seconds"], 1e-9)
}
