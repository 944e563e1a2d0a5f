package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"InFlight": "in_flight", "P99": "p99", "ID": "id", "HTTPServer": "http_server",
		"QuantilesOK": "quantiles_ok", "WindowHedges": "window_hedges", "Executions": "executions"} {
		assert.Equal(t, want, snake(in), in)
	}
}

// TestJSONView: the policies' and hedgers' statistics in the report are
// snake_case with units in the names, like the rest of the report.
func TestJSONView(t *testing.T) {
	hs := tailroute.HostStats{HostSnapshot: tracker.HostSnapshot{ID: "h1", InFlight: 2, ResponseTime: 1500 * time.Microsecond, QuantilesOK: true},
		Address: "127.0.0.1:9042", Score: 4e6, Stalled: true}
	b, err := json.Marshal(JSONView(map[string]any{"hosts": []tailroute.HostStats{hs}, "hedging": tailroute.Hedging{Hedges: 3, Delay: 2 * time.Millisecond}}))
	require.NoError(t, err)
	var got struct {
		Hosts   []map[string]any
		Hedging map[string]any
	}
	require.NoError(t, json.Unmarshal(b, &got))
	h := got.Hosts[0]
	assert.Equal(t, "h1", h["id"])
	assert.Equal(t, 2.0, h["in_flight"])
	assert.Equal(t, 1500.0, h["response_time_us"])
	assert.Equal(t, 4000.0, h["score_us"], "Score is in nanoseconds (unit tag)")
	assert.Equal(t, true, h["stalled"])
	assert.Equal(t, true, h["quantiles_ok"])
	assert.Equal(t, "127.0.0.1:9042", h["address"])
	assert.Equal(t, 3.0, got.Hedging["hedges"])
	assert.Equal(t, 2000.0, got.Hedging["delay_us"])
	for k := range h {
		assert.Equal(t, snake(k), k, "key %s is snake_case", k)
	}
}
