package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// nines maps a percentile to the "number of nines" axis: 90 -> 1, 99 -> 2.
func nines(p float64) float64 {
	if p >= 100 {
		return math.Inf(1)
	}
	return -math.Log10(1 - p/100)
}

type ninesTicks struct{}

func (ninesTicks) Ticks(min, max float64) []plot.Tick {
	var t []plot.Tick
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}
	for i, l := range labels {
		if float64(i) >= min-1e-9 && float64(i) <= max+1e-9 {
			t = append(t, plot.Tick{Value: float64(i), Label: l})
		}
	}
	if len(t) < 2 {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	return t
}

// logTicks marks a log axis at 1, 2 and 5 times each power of ten, all
// labelled, and at the other integer multiples unlabelled, so a range
// within one decade (2 to 40 ms) still reads; a range narrower than two
// such marks gets gonum's default ticks.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0 && max > min) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	var t []plot.Tick
	labelled := 0
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		pow := math.Pow(10, e)
		for m := 1.0; m <= 9; m++ {
			v := m * pow
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			tick := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				tick.Label = strconv.FormatFloat(v, 'g', -1, 64)
				labelled++
			}
			t = append(t, tick)
		}
	}
	if labelled < 2 {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	return t
}

// LatencyPercentilePlot draws latency (ms, log scale) against percentile on
// a nines scale, one line per policy.
func (r *Report) LatencyPercentilePlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Latency by percentile · %s · workload %s", r.Scenario, r.Workload)
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms)"
	p.X.Tick.Marker = ninesTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	var args []any
	for _, res := range r.Results {
		var xys plotter.XYs
		for _, pt := range res.Percentiles {
			x := nines(pt.Percentile)
			if math.IsInf(x, 0) || pt.LatencyUs <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: float64(pt.LatencyUs) / 1000})
		}
		if len(xys) > 0 {
			args = append(args, res.Policy, xys)
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("report: no latency data to plot")
	}
	if err := plotutil.AddLines(p, args...); err != nil {
		return nil, err
	}
	p.X.Max += 0.3 // room for the last percentile label
	return p, nil
}

// LatencySeriesPlot draws the median and 99th percentile latency of the
// operations started in each interval, per policy (C3 Figure 11 shows the
// moving median); nil when no series was recorded.
func (r *Report) LatencySeriesPlot() *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Latency over time · %s · workload %s", r.Scenario, r.Workload)
	p.X.Label.Text = "time since run start (s)"
	p.Y.Label.Text = "latency (ms)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	lines := 0
	for i, res := range r.Results {
		var p50, p99 plotter.XYs
		for _, s := range res.Series {
			if s.Operations == 0 || s.P50Us <= 0 {
				continue
			}
			x := s.Offset.Seconds()
			p50 = append(p50, plotter.XY{X: x, Y: float64(s.P50Us) / 1000})
			p99 = append(p99, plotter.XY{X: x, Y: float64(s.P99Us) / 1000})
		}
		if len(p50) < 2 {
			continue
		}
		for j, xys := range []plotter.XYs{p50, p99} {
			l, err := plotter.NewLine(xys)
			if err != nil {
				continue
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.2)
			name := res.Policy + " p50"
			if j == 1 {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
				name = res.Policy + " p99"
			}
			p.Add(l)
			p.Legend.Add(name, l)
			lines++
		}
	}
	if lines == 0 {
		return nil
	}
	return p
}

// NodeLoadPlots draws, per policy, the requests each node served per
// 100 ms over the run (C3 Figure 9). Policies without windows are skipped.
func (r *Report) NodeLoadPlots() []*plot.Plot {
	var out []*plot.Plot
	for _, res := range r.Results {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s: requests per 100 ms per node (%s)", res.Policy, r.Scenario)
		p.X.Label.Text = "time (s)"
		p.Y.Label.Text = "requests / 100 ms"
		p.Legend.Top = true
		var args []any
		for _, n := range res.Nodes {
			if len(n.Windows) == 0 {
				continue
			}
			xys := make(plotter.XYs, len(n.Windows))
			for i, c := range n.Windows {
				xys[i] = plotter.XY{X: float64(i) / 10, Y: float64(c)}
			}
			args = append(args, n.Host, xys)
		}
		if len(args) == 0 {
			continue
		}
		if err := plotutil.AddLines(p, args...); err != nil {
			continue
		}
		p.Y.Min = 0
		out = append(out, p)
	}
	return out
}

// WritePlots writes latency-percentiles.{png,svg}, latency-over-time.{png,svg}
// (when series were recorded) and node-load.{png,svg} (all policies stacked)
// into dir and returns the paths written.
func (r *Report) WritePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	lp, err := r.LatencyPercentilePlot()
	if err != nil {
		return nil, err
	}
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, "latency-percentiles."+ext)
		if err := lp.Save(20*vg.Centimeter, 12*vg.Centimeter, path); err != nil {
			return paths, fmt.Errorf("report: writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	if sp := r.LatencySeriesPlot(); sp != nil {
		for _, ext := range []string{"png", "svg"} {
			path := filepath.Join(dir, "latency-over-time."+ext)
			if err := sp.Save(20*vg.Centimeter, 12*vg.Centimeter, path); err != nil {
				return paths, fmt.Errorf("report: writing %s: %w", path, err)
			}
			paths = append(paths, path)
		}
	}
	nps := r.NodeLoadPlots()
	if len(nps) == 0 {
		return paths, nil
	}
	// Same y range on every panel so the policies compare at a glance.
	ymax := 0.0
	for _, p := range nps {
		ymax = math.Max(ymax, p.Y.Max)
	}
	rows := make([][]*plot.Plot, len(nps))
	for i, p := range nps {
		p.Y.Max = ymax
		rows[i] = []*plot.Plot{p}
	}
	w, h := 24*vg.Centimeter, vg.Length(len(nps))*8*vg.Centimeter
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(dir, "node-load."+ext)
		c, err := draw.NewFormattedCanvas(w, h, ext)
		if err != nil {
			return paths, err
		}
		canvases := plot.Align(rows, draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Centimeter / 2}, draw.New(c))
		for i := range rows {
			rows[i][0].Draw(canvases[i][0])
		}
		f, err := os.Create(path)
		if err != nil {
			return paths, err
		}
		_, err = c.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("report: writing %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
