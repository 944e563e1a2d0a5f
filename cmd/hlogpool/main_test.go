package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeLog writes an interval log of latencies (µs) as ycsb-lite does: the
// values split over two intervals.
func writeLog(t *testing.T, dir, name string, values []int64) string {
	t.Helper()
	var buf bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&buf)
	require.NoError(t, w.OutputLogFormatVersion())
	require.NoError(t, w.OutputLegend())
	for half := 0; half < 2; half++ {
		h := hdrhistogram.New(1, 60_000_000, 3)
		for i := half; i < len(values); i += 2 {
			require.NoError(t, h.RecordValue(values[i]))
		}
		h.SetStartTimeMs(int64(1000 * half))
		h.SetEndTimeMs(int64(1000 * (half + 1)))
		require.NoError(t, w.OutputIntervalHistogram(h))
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	return p
}

func repeat(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// Two normal runs and one collapsed run pool into one histogram: the
// collapsed run's slow operations count in the pooled share and p99, and
// the median p99 of the runs kept leaves it out.
func TestPool(t *testing.T) {
	dir := t.TempDir()
	normal := append(repeat(5_000, 990), repeat(40_000, 10)...)  // p99 5 ms, none over 50 ms
	normal2 := append(repeat(5_000, 980), repeat(60_000, 20)...) // p99 60 ms, 20 over 50 ms
	collapsed := append(repeat(5_000, 800), repeat(200_000, 200)...)
	files := []string{writeLog(t, dir, "a.hlog", normal), writeLog(t, dir, "b.hlog", normal2), writeLog(t, dir, "c.hlog", collapsed)}
	s, err := pool(files, 50*time.Millisecond, 100*time.Millisecond, 100)
	require.NoError(t, err)
	assert.Equal(t, 3, s.Runs)
	assert.Equal(t, int64(3000), s.Ops)
	assert.Equal(t, int64(220), s.Slow, "20 at 60 ms and 200 at 200 ms")
	assert.Equal(t, 1, s.Collapsed)
	assert.InDelta(t, 200, s.P99.Seconds()*1000, 1, "pooled p99 inside the collapsed run's tail")
	assert.InDelta(t, (5+60)/2.0, s.MedianP99Kept.Seconds()*1000, 0.1, "median of the two runs kept")
	require.Len(t, s.RunP99, 3)
	assert.InDelta(t, 5, s.RunP99[0].Seconds()*1000, 0.01)

	var out bytes.Buffer
	assert.Equal(t, 0, run(files, &out, &out))
	assert.Contains(t, out.String(), "runs 3, operations 3000")
	assert.Contains(t, out.String(), "over 50ms 7.33 % (220)")
	assert.Contains(t, out.String(), "collapsed (over 100 operations above 100ms) 1 of 3; median p99 of the others 32.5 ms")
}

func TestBadInput(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run(nil, &out, &errb))
	assert.Contains(t, errb.String(), "no files")
	errb.Reset()
	assert.Equal(t, 1, run([]string{filepath.Join(t.TempDir(), "missing.hlog")}, &out, &errb))
	assert.Contains(t, errb.String(), "missing.hlog")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-slow", "0s", "x"}, "-slow 0s: allowed 1µs..1h"},
		{[]string{"-collapse", "-1s", "x"}, "-collapse -1s: allowed 1µs..1h"},
		{[]string{"-collapse-count", "-1", "x"}, "-collapse-count -1: allowed 0 or more"},
	} {
		errb.Reset()
		assert.Equal(t, 2, run(tc.args, &out, &errb), tc.args)
		assert.True(t, strings.Contains(errb.String(), tc.want), "%v: %s", tc.args, errb.String())
	}
	garbage := filepath.Join(t.TempDir(), "garbage.hlog")
	require.NoError(t, os.WriteFile(garbage, []byte("not,a,log\n1,2,3,###\n"), 0o644))
	errb.Reset()
	assert.NotEqual(t, 0, run([]string{garbage}, &out, &errb))
}

// -batch pools, per cell, the seeds in which every policy ran (the same
// runs for every row) and divides by the first policy's pooled figures.
func TestBatch(t *testing.T) {
	dir := t.TempDir()
	mk := func(cell string, seed int, policy string, values []int64) {
		d := filepath.Join(dir, cell, "seed"+string(rune('0'+seed)))
		require.NoError(t, os.MkdirAll(d, 0o755))
		writeLog(t, d, policy+"-run.hlog", values)
	}
	fast := append(repeat(5_000, 980), repeat(20_000, 20)...) // p99 20 ms
	slow := append(repeat(5_000, 980), repeat(40_000, 20)...) // p99 40 ms
	for seed := 1; seed <= 2; seed++ {
		mk("a-cell", seed, "base", slow)
		mk("a-cell", seed, "variant", fast)
	}
	mk("a-cell", 3, "base", append(repeat(5_000, 800), repeat(200_000, 200)...)) // seed 3 unpaired: left out
	mk("b-cell", 1, "variant", fast)                                             // no base: no rows
	require.NoError(t, os.WriteFile(filepath.Join(dir, "commands.txt"), nil, 0o644))

	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"-batch", dir, "-policies", "base,variant"}, &out, &errb), errb.String())
	assert.Equal(t, `| cell | policy | runs | p99 ms | / base | p99.9 ms | / base | over 50ms | collapsed |
|---|---|---:|---:|---:|---:|---:|---:|---:|
| a-cell | base | 2 | 40.0 | 1.00 | 40.0 | 1.00 | 0.00 % | 0 |
| a-cell | variant | 2 | 20.0 | 0.50 (0.50-0.50) | 20.0 | 0.50 (0.50-0.50) | 0.00 % | 0 |
`, out.String())
	out.Reset()
	require.Equal(t, 0, run([]string{"-batch", dir, "-policies", "base,variant", "-resamples", "0"}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "| a-cell | variant | 2 | 20.0 | 0.50 | 20.0 | 0.50 | 0.00 % | 0 |\n", "-resamples 0: no intervals")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-batch", dir}, `-policies "": allowed one or more policy names`},
		{[]string{"-batch", dir, "-policies", "a,,b"}, `-policies "a,,b": allowed one or more`},
		{[]string{"-policies", "a", "x.hlog"}, `-policies "a": allowed only with -batch`},
		{[]string{"-batch", dir, "-policies", "a", "x.hlog"}, "and files given: allowed one or the other"},
		{[]string{"-batch", dir, "-policies", "a", "-resamples", "-1"}, "-resamples -1: allowed 0..1000000"},
		{[]string{"-resamples", "10", "x.hlog"}, "-resamples 10: allowed only with -batch"},
	} {
		errb.Reset()
		assert.Equal(t, 2, run(tc.args, &out, &errb), tc.args)
		assert.Contains(t, errb.String(), tc.want, tc.args)
	}
	errb.Reset()
	assert.Equal(t, 1, run([]string{"-batch", dir, "-policies", "base,nobody"}, &out, &errb))
	assert.Contains(t, errb.String(), "no <cell>/seed*/ directory holds a <policy>-run.hlog of every policy")
	errb.Reset()
	assert.Equal(t, 1, run([]string{"-batch", filepath.Join(dir, "missing"), "-policies", "base"}, &out, &errb))
	assert.Contains(t, errb.String(), "missing")
}

// The pooled quantiles of a resample are hdrhistogram's: with every run
// drawn once, they equal ValueAtQuantile of the merged histogram.
func TestGridQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var runs []*hdrhistogram.Histogram
	all := hdrhistogram.New(1, maxLatencyUs, 3)
	for r := 0; r < 5; r++ {
		h := hdrhistogram.New(1, maxLatencyUs, 3)
		for i := 0; i < 3000; i++ {
			require.NoError(t, h.RecordValue(1000+int64(rng.ExpFloat64()*float64(4000*(r+1)))))
		}
		all.Merge(h)
		runs = append(runs, h)
	}
	g := newRunGrid([][]*hdrhistogram.Histogram{runs})
	pcts := []float64{0, 50, 99, 99.9, 100}
	got := g.quantiles(0, []int{0, 1, 2, 3, 4}, pcts, make([]int64, len(g.values)))
	for k, p := range pcts[1:] {
		assert.Equal(t, all.ValueAtQuantile(p), got[k+1], "p%v", p)
	}
}

// The interval is a paired bootstrap over the seeds: a variant twice as
// fast in every seed has a point interval; one whose gain depends on the
// seed has an interval around its pooled ratio, as wide as the seeds
// disagree.
func TestRatioIntervals(t *testing.T) {
	hist := func(p99 int64) *hdrhistogram.Histogram {
		h := hdrhistogram.New(1, maxLatencyUs, 3)
		for _, v := range append(repeat(5_000, 980), repeat(p99, 20)...) {
			require.NoError(t, h.RecordValue(v))
		}
		return h
	}
	var base, steady, mixed []*hdrhistogram.Histogram
	for s := 0; s < 8; s++ {
		base = append(base, hist(40_000))
		steady = append(steady, hist(20_000))
		mixed = append(mixed, hist([]int64{20_000, 60_000}[s%2]))
	}
	lo, hi := ratioIntervals([][]*hdrhistogram.Histogram{base, steady, mixed}, []float64{99}, 500)
	assert.InDelta(t, 1, lo[0][0], 1e-9)
	assert.InDelta(t, 1, hi[0][0], 1e-9)
	assert.InDelta(t, 0.5, lo[1][0], 0.01)
	assert.InDelta(t, 0.5, hi[1][0], 0.01)
	assert.Less(t, lo[2][0], 0.9, "mixed: the draws with mostly fast seeds")
	assert.Greater(t, hi[2][0], 1.1, "mixed: the draws with mostly slow seeds")
	lo2, hi2 := ratioIntervals([][]*hdrhistogram.Histogram{base, steady, mixed}, []float64{99}, 500)
	assert.Equal(t, lo, lo2, "seeded: the same table every time")
	assert.Equal(t, hi, hi2)
}
