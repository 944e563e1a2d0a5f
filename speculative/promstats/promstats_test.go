package promstats

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/speculative"
)

type fixedSource time.Duration

func (s fixedSource) LatencyQuantile(float64) (time.Duration, bool) { return time.Duration(s), true }

func TestCollector(t *testing.T) {
	h, err := speculative.New(tailroute.WithSource(fixedSource(5 * time.Millisecond)))
	require.NoError(t, err)
	p := h.Wrap(gocql.RoundRobinHostPolicy())
	for i := 1; i <= 3; i++ {
		hi := &gocql.HostInfo{}
		hi.SetConnectAddress(net.ParseIP("127.0.4." + string(rune('0'+i))))
		hi.SetHostID("h" + string(rune('0'+i)))
		p.AddHost(hi)
	}
	for i := 0; i < 100; i++ { // not idempotent: counted, never hedged
		p.Pick(&gocql.Query{})().Mark(nil)
	}
	q := (&gocql.Query{}).Idempotent(true)
	next := p.Pick(q)
	first := next()
	hedge := next() // the delay passed with the first attempt in flight
	require.NotNil(t, hedge)
	hedge.Mark(nil) // the hedge wins
	first.Mark(nil) // the loser, cancelled

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(New(h, WithSession("s1"))))
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range fams {
		name := f.GetName()
		if f.GetType() == dto.MetricType_COUNTER {
			assert.True(t, strings.HasSuffix(name, "_total"), "counter %s ends in _total", name)
		} else {
			assert.False(t, strings.HasSuffix(name, "_total"), "gauge %s does not end in _total", name)
		}
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					key += "{" + l.GetValue() + "}"
				}
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			got[key] = v
		}
	}
	assert.Equal(t, 101.0, got["tailroute_hedge_executions_total"])
	assert.Equal(t, 1.0, got["tailroute_hedge_eligible_total"])
	assert.Equal(t, 1.0, got["tailroute_hedge_armed_total"])
	assert.Equal(t, 1.0, got["tailroute_hedge_fired_total"])
	assert.Equal(t, 1.0, got["tailroute_hedge_won_total"])
	assert.Equal(t, 0.0, got["tailroute_hedge_lost_total"])
	assert.Equal(t, 0.0, got["tailroute_hedge_in_flight"])
	for _, k := range []string{"suppressed_total{budget}", "suppressed_total{burst}", "suppressed_total{too_few_hosts}", "suppressed_total{many_clients}",
		"deferred_total{queueing}", "deferred_total{target_slow}", "deferred_total{losing}"} {
		require.Contains(t, got, "tailroute_hedge_"+k)
		assert.Zero(t, got["tailroute_hedge_"+k], k)
	}
	assert.Equal(t, 0.015, got["tailroute_hedge_deferred_delay_seconds"], "3 x the delay")
	assert.Equal(t, 0.005, got["tailroute_hedge_delay_seconds"])
	assert.Equal(t, 0.95, got["tailroute_hedge_quantile"])
	assert.Equal(t, 0.0, got["tailroute_hedge_burst_lifted_total"])
	require.Contains(t, got, "tailroute_hedge_busy")
	assert.Len(t, got, 25)
}
