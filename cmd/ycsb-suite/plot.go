package main

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// errPoints are points with asymmetric vertical error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// cellTicks labels the x axis with the cell names at 0, 1, 2...
type cellTicks []string

func (t cellTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for i, n := range t {
		ts = append(ts, plot.Tick{Value: float64(i), Label: n})
	}
	return ts
}

// logTicks labels 1, 2 and 5 times each power of ten in range, with
// unlabelled minor ticks at the other integers.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		d := math.Pow(10, e)
		for m := 1.0; m <= 9; m++ {
			v := m * d
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// p99Plot draws the median p99 (ms, log scale) of each policy in each
// cell, policies side by side within a cell, with the min–max of p99 over
// seeds as error bars. nil when there is nothing to draw.
func p99Plot(cells []*cellAgg) (*plot.Plot, error) {
	var policies []string
	seen := map[string]bool{}
	var names []string
	for _, ca := range cells {
		names = append(names, ca.Name)
		for _, p := range ca.Policies {
			if !seen[p.Policy] {
				seen[p.Policy] = true
				policies = append(policies, p.Policy)
			}
		}
	}
	pl := plot.New()
	pl.Title.Text = "p99 by cell (median over seeds, bars min–max; +poll: polled load, +payload: sim payload)"
	pl.Y.Label.Text = "p99 (ms)"
	pl.Y.Scale = plot.LogScale{}
	pl.Y.Tick.Marker = logTicks{}
	pl.X.Tick.Marker = cellTicks(names)
	pl.X.Tick.Label.Rotation = math.Pi / 6
	pl.X.Tick.Label.XAlign = draw.XRight
	pl.X.Tick.Label.YAlign = draw.YCenter
	pl.X.Min, pl.X.Max = -0.6, float64(len(cells))-0.4
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	width := 0.7 // of a cell's slot, shared by the policies
	drawn := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pol := range policies {
		var pts errPoints
		for ci, ca := range cells {
			p := ca.policy(pol)
			if p == nil || !(p.P99 > 0) || !(p.P99Min > 0) {
				continue
			}
			x := float64(ci) - width/2 + width*(float64(i)+0.5)/float64(len(policies))
			y := p.P99 / 1000
			pts.XYs = append(pts.XYs, plotter.XY{X: x, Y: y})
			lo, hi = math.Min(lo, p.P99Min/1000), math.Max(hi, p.P99Max/1000)
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{y - p.P99Min/1000, p.P99Max/1000 - y})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts.XYs)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = plotutil.Color(i)
		sc.GlyphStyle.Shape = plotutil.Shape(i)
		sc.GlyphStyle.Radius = vg.Points(3)
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = plotutil.Color(i)
		eb.CapWidth = vg.Points(3)
		pl.Add(eb, sc)
		pl.Legend.Add(pol, sc)
		drawn++
	}
	if drawn == 0 {
		return nil, nil
	}
	// Leave the top ~40 % (on the log scale) to the legend.
	span := math.Max(hi/lo, 2)
	pl.Y.Min, pl.Y.Max = lo/math.Pow(span, 0.05), hi*math.Pow(span, 0.7)
	return pl, nil
}

// savePlot writes p sized for n cells; the format follows path's extension.
func savePlot(p *plot.Plot, n int, path string) error {
	w := vg.Length(max(16, 2.2*float64(n))) * vg.Centimeter
	return p.Save(w, 13*vg.Centimeter, path)
}
