package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/ycsb"
)

func sample(policy string, scale int64) PolicyResult {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := int64(1); i <= 10000; i++ {
		_ = h.RecordValue(i * scale)
	}
	r := PolicyResult{
		Policy: policy, Operations: 10000, Throughput: 1000,
		Latency:     ycsb.Stats(h, 10000, 0),
		Percentiles: Percentiles(h),
		Nodes: []NodeLoad{
			{Host: "127.0.0.2", Requests: 300, Windows: []uint64{10, 20, 30, 40}},
			{Host: "127.0.0.1", Requests: 100, Windows: []uint64{5, 5, 5, 50}},
		},
		Series: []ycsb.SeriesPoint{{Offset: 0, Operations: 5, P50Us: 1000, P99Us: 2000}, {Offset: time.Second, Operations: 5, P50Us: 1500, P99Us: 4000}},
	}
	r.FillShares()
	r.FillBusiest()
	return r
}

func TestWindowQuantiles(t *testing.T) {
	w := make([]uint64, 100)
	for i := range w {
		w[i] = uint64(100 - i) // 100..1
	}
	med, p99 := WindowQuantiles(w)
	if med != 50 || p99 != 99 {
		t.Fatalf("median %v p99 %v, want 50 99", med, p99)
	}
	if m, p := WindowQuantiles(nil); m != 0 || p != 0 {
		t.Fatal("empty windows")
	}
}

func TestTableAndJSON(t *testing.T) {
	rep := &Report{Scenario: "slow-node", Workload: "b", Cluster: "embedded sim, 2 nodes, RF 2", Threads: 4, Target: 1000,
		Operations: 10000, Seed: 1, Intended: true, Results: []PolicyResult{sample("tailroute", 1), sample("token-aware", 3)}}
	rep.Results[1].Interrupted = true
	r0 := rep.Results[0]
	if r0.Nodes[0].Share != 0.75 || r0.Busiest != "127.0.0.2" || r0.BusiestMedian != 20 || r0.BusiestP99 != 40 {
		t.Fatalf("shares/busiest wrong: %+v", r0)
	}
	var buf bytes.Buffer
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"tailroute", "token-aware*", "p99.9", "n1", "n2", "75.0%", "25.0%", "40/20", "intended start", "interrupted"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	// n1 column comes before n2 (hosts sorted numerically).
	if strings.Index(out, " n1") > strings.Index(out, " n2") {
		t.Errorf("host columns unsorted:\n%s", out)
	}
	buf.Reset()
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 2 || back.Results[1].Latency.P99Us != rep.Results[1].Latency.P99Us {
		t.Fatalf("JSON round trip: %+v", back)
	}
}

func TestWritePlots(t *testing.T) {
	rep := &Report{Scenario: "steady", Workload: "b", Results: []PolicyResult{sample("a", 1), sample("b", 2)}}
	dir := t.TempDir()
	paths, err := rep.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"latency-percentiles.png", "latency-percentiles.svg", "latency-over-time.png", "latency-over-time.svg", "node-load.png", "node-load.svg"}
	if len(paths) != len(want) {
		t.Fatalf("wrote %v", paths)
	}
	for i, p := range paths {
		if !strings.HasSuffix(p, want[i]) {
			t.Errorf("path %s, want %s", p, want[i])
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".png") && !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", p)
		}
		if strings.HasSuffix(p, ".svg") && !bytes.Contains(b, []byte("<svg")) {
			t.Errorf("%s is not an SVG", p)
		}
	}
	if _, err := (&Report{}).WritePlots(dir); err == nil {
		t.Error("empty report plotted")
	}
}

// HedgeStatsOf sums the clients' hedgers over the run (end minus start);
// the table prints one hedging line per hedged policy with every
// suppression reason.
func TestHedgeStats(t *testing.T) {
	start := []tailroute.Hedging{
		{Executions: 300, Armed: 200, Hedges: 3, Won: 1, Lost: 2, BudgetDenied: 10, TargetSlow: 4, Losing: 100},
		{}, // a client that sent nothing before the run
	}
	hs := HedgeStatsOf(start, []tailroute.Hedging{
		{Executions: 1300, Armed: 1100, Hedges: 33, Won: 11, Lost: 20, BudgetDenied: 60, TargetSlow: 44, Losing: 105},
		{Executions: 1000, Armed: 950, Hedges: 20, Won: 15, Lost: 5, Queueing: 7, BurstDenied: 3, TooFewHosts: 1, ManyClients: 2},
	})
	require.Equal(t, &HedgeStats{Executions: 2000, Armed: 1850, Fired: 50, Won: 25, Lost: 23, ExtraPct: 2.5,
		Suppressed: map[string]uint64{"budget": 50, "burst": 3, "too_few_hosts": 1, "many_clients": 2},
		Deferred:   map[string]uint64{"losing": 5, "queueing": 7, "target_slow": 40}}, hs)
	r := &Report{Results: []PolicyResult{{Policy: "tailroute"}, {Policy: "tailroute+hedge", HedgeStats: hs}}}
	var b strings.Builder
	require.NoError(t, r.WriteTable(&b))
	assert.Contains(t, b.String(), "tailroute+hedge hedging: armed 1850, fired 50 (2.50% extra requests), won 25, lost 23; suppressed: budget 50, burst 3, too_few_hosts 1, many_clients 2; deferred: queueing 7, target_slow 40, losing 5\n")
	assert.Equal(t, 1, strings.Count(b.String(), "hedging:"), "no line for the unhedged policy")
	assert.Equal(t, uint64(2300), HedgeStatsOf(nil, []tailroute.Hedging{{Executions: 1300}, {Executions: 1000}}).Executions, "no start: from zero")
}

// TestLogTicksReadable: the latency axes label 1, 2 and 5 times each power
// of ten, so a range within one decade shows several labels (gonum's
// LogTicks labelled only 10 between 2 and 40 ms).
func TestLogTicksReadable(t *testing.T) {
	labels := func(min, max float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(min, max) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got := labels(2, 40); strings.Join(got, " ") != "2 5 10 20" {
		t.Errorf("2..40 ms: labels %v", got)
	}
	if got := labels(0.3, 700); strings.Join(got, " ") != "0.5 1 2 5 10 20 50 100 200 500" {
		t.Errorf("0.3..700 ms: labels %v", got)
	}
	if got := labels(3, 4.5); len(got) < 2 {
		t.Errorf("3..4.5 ms: labels %v, want the default ticks' (at least 2)", got)
	}
	r := &Report{Scenario: "s", Workload: "b", Results: []PolicyResult{sample("a", 1)}}
	if p := r.LatencySeriesPlot(); p == nil {
		t.Fatal("no series plot")
	} else if _, ok := p.Y.Tick.Marker.(logTicks); !ok {
		t.Errorf("latency-over-time y ticks: %T", p.Y.Tick.Marker)
	}
}

// TestNodeColumnsNamed: the table's abbreviated node columns are named
// with their IPs in a legend line.
func TestNodeColumnsNamed(t *testing.T) {
	r := &Report{Scenario: "s", Workload: "b", Threads: 1, Results: []PolicyResult{sample("a", 1)}}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "nodes: n1 = 127.0.0.1, n2 = 127.0.0.2") {
		t.Errorf("no node legend:\n%s", b.String())
	}
}
