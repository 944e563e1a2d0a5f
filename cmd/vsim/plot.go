package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// writePlots writes, for each cell and strategy, each server's share of
// the requests per window over the first seed's run: <dir>/<cell>-<strategy>-share.png.
// A herd shows as servers whose share swings between windows far beyond
// the band the arrivals alone leave.
func writePlots(dir string, rep *report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range rep.Cells {
		for _, s := range c.Strategies {
			r := s.runs[0]
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s, %s (seed %d): each server's share of the requests per %v", c.Name, s.Strategy, r.Config.Seed, r.Config.Window)
			p.X.Label.Text = "time (s)"
			p.Y.Label.Text = "share of the window's requests (%)"
			windows := len(r.Windows[0])
			for _, w := range r.Windows {
				windows = max(windows, len(w))
			}
			totals := make([]float64, windows)
			for _, w := range r.Windows {
				for i, n := range w {
					totals[i] += float64(n)
				}
			}
			for k, w := range r.Windows {
				pts := make(plotter.XYs, 0, len(w))
				for i, n := range w {
					if totals[i] > 0 {
						pts = append(pts, plotter.XY{X: (float64(i) + 0.5) * r.Config.Window.Seconds(), Y: 100 * float64(n) / totals[i]})
					}
				}
				l, err := plotter.NewLine(pts)
				if err != nil {
					return err
				}
				l.Width = vg.Points(0.5)
				shade := uint8(40 + 160*k/max(1, len(r.Windows)-1))
				l.Color = color.RGBA{R: shade, G: 90, B: 255 - shade, A: 160}
				p.Add(l)
			}
			if err := p.Save(10*vg.Inch, 4*vg.Inch, filepath.Join(dir, c.Name+"-"+s.Strategy+"-share.png")); err != nil {
				return err
			}
		}
	}
	return nil
}
