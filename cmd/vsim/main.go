package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tailroute/tailroute/internal/vsim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(2)
	}
}

// options are the command's flags.
type options struct {
	preset     string
	strategies []string
	seeds      []uint64
	out        string
	plot       string
	parallel   int
	requests   int
	generators int
	cells      string
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("vsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var strategies, seeds string
	list := fs.Bool("list", false, "list the presets and the strategies, and exit")
	fs.StringVar(&o.preset, "preset", "quick", "the built-in cells to run (-list)")
	fs.StringVar(&o.cells, "cells", "", "run only the preset's cells whose names contain one of these comma-separated strings")
	fs.StringVar(&strategies, "strategies", "", "comma-separated strategies (default: the preset's)")
	fs.StringVar(&seeds, "seeds", "", "seeds, as 1-5 or 1,3,7 (default: the preset's)")
	fs.IntVar(&o.requests, "requests", 0, "requests per run (default: the preset's)")
	fs.IntVar(&o.generators, "generators", 0, "arrivals from this many generators of whole-millisecond Poisson gaps, as the C3 paper's simulator (200); 0: one Poisson process (vsim.Config.Generators)")
	fs.StringVar(&o.out, "out", "", "directory for report.json and one HdrHistogram log per run (<cell>/seed<k>/<strategy>-run.hlog, what cmd/hlogpool -batch pools)")
	fs.StringVar(&o.plot, "plot", "", "directory for a plot of each server's share of requests per 100 ms window, per strategy, of each cell's first seed")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once (each run is single-threaded; the output does not depend on it)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vsim [-preset name] [-strategies a,b] [-seeds 1-5] [-out dir] [-plot dir]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("vsim: unexpected argument %q", fs.Arg(0))
	}
	if *list {
		printList(stdout)
		return nil
	}
	p, ok := presets[o.preset]
	if !ok {
		return fmt.Errorf("vsim: -preset %q, allowed one of %s", o.preset, strings.Join(sortedKeys(presets), ", "))
	}
	if strategies == "" {
		strategies = p.strategies
	}
	o.strategies = strings.Split(strategies, ",")
	for _, s := range o.strategies {
		if vsim.StrategyDoc(s) == "" {
			return fmt.Errorf("vsim: -strategies: %q, allowed %s", s, vsim.StrategyNames())
		}
	}
	if seeds == "" {
		seeds = p.seeds
	}
	var err error
	if o.seeds, err = parseSeeds(seeds); err != nil {
		return err
	}
	if o.parallel < 1 {
		return fmt.Errorf("vsim: -parallel = %d, allowed >= 1", o.parallel)
	}
	if o.generators < 0 {
		return fmt.Errorf("vsim: -generators = %d, allowed >= 0 (0: one Poisson process)", o.generators)
	}
	if o.requests < 0 {
		return fmt.Errorf("vsim: -requests = %d, allowed >= 1 (0: the preset's)", o.requests)
	}
	cells := p.cells()
	if o.cells != "" {
		cells = slices.DeleteFunc(cells, func(c cell) bool {
			for _, s := range strings.Split(o.cells, ",") {
				if strings.Contains(c.Name, s) {
					return false
				}
			}
			return true
		})
		if len(cells) == 0 {
			return fmt.Errorf("vsim: -cells %q matches no cell of preset %s", o.cells, o.preset)
		}
	}
	for i := range cells {
		if o.requests > 0 {
			cells[i].Config.Requests = o.requests
		}
		if o.generators > 0 {
			cells[i].Config.Generators = o.generators
		}
	}
	rep, err := runCells(cells, o, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# vsim -preset %s: %s\n", o.preset, p.doc)
	fmt.Fprintf(stdout, "# strategies %s; seeds %s, pooled\n", strings.Join(o.strategies, ","), seeds)
	for _, c := range rep.Cells {
		writeTable(stdout, c)
	}
	if o.out != "" {
		if err := writeOut(o.out, rep); err != nil {
			return err
		}
	}
	if o.plot != "" {
		if err := writePlots(o.plot, rep); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func printList(w io.Writer) {
	fmt.Fprintln(w, "presets:")
	for _, k := range sortedKeys(presets) {
		fmt.Fprintf(w, "  %-10s %s\n", k, presets[k].doc)
	}
	fmt.Fprintln(w, "strategies:")
	for _, s := range strings.Split(vsim.StrategyNames(), ", ") {
		fmt.Fprintf(w, "  %-18s %s\n", s, vsim.StrategyDoc(s))
	}
}

// parseSeeds reads "1-5" or "1,3,7" (or a mix).
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("vsim: -seeds %q: %q is not a seed (allowed: 1-5 or 1,3,7)", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a || b-a > 10000 {
				return nil, fmt.Errorf("vsim: -seeds %q: %q is not a range (allowed: a-b with a <= b, at most 10000 seeds)", s, part)
			}
		}
		for k := a; k <= b; k++ {
			out = append(out, k)
		}
	}
	return out, nil
}

// report is what a preset's runs measured (report.json).
type report struct {
	Preset string       `json:"preset"`
	Cells  []cellReport `json:"cells"`
}

type cellReport struct {
	Name       string           `json:"name"`
	Config     vsim.Config      `json:"config"`
	Strategies []strategyReport `json:"strategies"`
}

// strategyReport is one strategy's runs of a cell, pooled over the seeds.
type strategyReport struct {
	Strategy string  `json:"strategy"`
	Seeds    int     `json:"seeds"`
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p999_ms"`
	Over50   float64 `json:"over_50ms"`
	// MaxShare is the largest share of the requests one server received.
	MaxShare float64 `json:"max_server_share"`
	// Dispersion is each server's index of dispersion of its requests per
	// window (after the first second), the mean over the seeds.
	Dispersion jsonFloats `json:"dispersion"`
	// PollsPerServerSecond: the server-load polls each server received per
	// second over the run, SteadyPolls after its first pollSteadyFrom (the
	// clients' warm-up polls done), PeakPolls the most one server received
	// in a window, per second; BacklogRetries: a Selector's backpressure
	// deferrals per request.
	PollsPerServerSecond float64 `json:"polls_per_server_second"`
	SteadyPolls          float64 `json:"steady_polls_per_server_second"`
	PeakPolls            float64 `json:"peak_polls_per_server_second"`
	BacklogRetries       float64 `json:"backlog_retries_per_request"`
	// Hedges is the hedges sent per request, over every request of the
	// runs (measured or not; strategies with hedging).
	Hedges float64 `json:"hedges_per_request"`
	// OutOfZone is the share of the requests sent to a server out of their
	// client's rack, pooled over the seeds (zone cells only).
	OutOfZone *float64 `json:"out_of_zone,omitempty"`

	runs []*vsim.Result
	hist *hdrhistogram.Histogram
}

// runCells runs every cell x strategy x seed, parallel runs at once.
func runCells(cells []cell, o options, progress io.Writer) (*report, error) {
	type job struct{ c, s, k int }
	rep := &report{Preset: o.preset, Cells: make([]cellReport, len(cells))}
	var jobs []job
	for ci, c := range cells {
		rep.Cells[ci] = cellReport{Name: c.Name, Config: c.Config, Strategies: make([]strategyReport, len(o.strategies))}
		for si := range o.strategies {
			rep.Cells[ci].Strategies[si].runs = make([]*vsim.Result, len(o.seeds))
			for k := range o.seeds {
				jobs = append(jobs, job{ci, si, k})
			}
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan job)
	)
	for w := 0; w < o.parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				cfg := cells[j.c].Config
				cfg.Strategy, cfg.Seed = o.strategies[j.s], o.seeds[j.k]
				t0 := time.Now()
				res, err := vsim.Run(cfg)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("%s %s seed %d: %w", cells[j.c].Name, cfg.Strategy, cfg.Seed, err)
				}
				if err == nil {
					rep.Cells[j.c].Strategies[j.s].runs[j.k] = res
					fmt.Fprintf(progress, "%s %s seed %d: p99 %.2f ms (%.1fs)\n", cells[j.c].Name, cfg.Strategy, cfg.Seed,
						ms(res.Quantile(0.99)), time.Since(t0).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	for ci := range rep.Cells {
		for si := range rep.Cells[ci].Strategies {
			rep.Cells[ci].Strategies[si].pool(o.strategies[si])
		}
	}
	return rep, nil
}

// pool fills the report from the runs.
func (s *strategyReport) pool(name string) {
	s.Strategy, s.Seeds = name, len(s.runs)
	s.hist = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	var served []int64
	var polls, retries, hedges, dur float64
	var sent, out int64
	for _, r := range s.runs {
		sent += r.Sent
		out += r.OutOfZone
		s.hist.Merge(r.Histogram())
		s.Requests += r.Requests
		s.Errors += r.Errors
		if served == nil {
			served = make([]int64, len(r.Served))
			s.Dispersion = make([]float64, len(r.Served))
		}
		for i, n := range r.Served {
			served[i] += n
		}
		for i, d := range r.Dispersion() {
			s.Dispersion[i] += d / float64(len(s.runs))
		}
		polls += float64(r.Polls)
		retries += float64(r.Retries)
		hedges += float64(r.Hedges)
		mean, peak := r.PollRates(pollSteadyFrom)
		s.SteadyPolls += mean / float64(len(s.runs))
		s.PeakPolls = max(s.PeakPolls, peak)
		dur += r.Duration.Seconds()
	}
	q := func(p float64) float64 { return float64(s.hist.ValueAtQuantile(p)) / 1000 }
	s.P50Ms, s.P99Ms, s.P999Ms = q(50), q(99), q(99.9)
	var total, top int64
	for _, n := range served {
		total += n
		top = max(top, n)
	}
	if total > 0 {
		s.MaxShare = float64(top) / float64(total)
	}
	s.Over50 = vsim.OverShare(s.hist, 50*time.Millisecond)
	if dur > 0 {
		s.PollsPerServerSecond = polls / float64(len(served)) / dur
	}
	if s.Requests > 0 {
		s.BacklogRetries = retries / float64(s.Requests)
	}
	if sent > int64(hedges) {
		s.Hedges = hedges / (float64(sent) - hedges) // per request sent, measured or not
	}
	if len(s.runs) > 0 && s.runs[0].Config.Racks > 0 && sent > 0 {
		share := float64(out) / float64(sent)
		s.OutOfZone = &share
	}
}

// jsonFloats writes NaN (a server that received nothing) as null.
type jsonFloats []float64

func (f jsonFloats) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', 6, 64)
	}
	return append(b, ']'), nil
}

// pollSteadyFrom is when the polls are counted as steady: every client's
// warm-up (at most tailroute's 8 polls per server, one per 100 ms) is over.
const pollSteadyFrom = 2 * time.Second

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// writeTable prints one cell: every strategy pooled over the seeds, its
// p99 over the Oracle's and over the paper's C3 (where they ran), and its
// worst server's index of dispersion over round robin's on that server
// (token-aware, else rr).
func writeTable(w io.Writer, c cellReport) {
	find := func(names ...string) *strategyReport {
		for _, n := range names {
			for i := range c.Strategies {
				if c.Strategies[i].Strategy == n {
					return &c.Strategies[i]
				}
			}
		}
		return nil
	}
	ora, c3, rr := find("oracle"), find("c3"), find("token-aware", "rr")
	fmt.Fprintf(w, "\n## %s\n\n", c.Name)
	zones := c.Config.Racks > 0 // a column: the share of requests out of the client's zone
	zoneHead, zoneRule := "", ""
	if zones {
		zoneHead, zoneRule = " out of zone |", "---:|"
	}
	fmt.Fprintf(w, "| strategy | p50 ms | p99 ms | p99.9 ms | > 50 ms |%s p99 / oracle | p99 / c3 | max share | dispersion / %s | polls /server/s: run, after %v, peak | hedges | errors |\n", zoneHead, name(rr), pollSteadyFrom)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|"+zoneRule+"---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range c.Strategies {
		zone := ""
		if zones && s.OutOfZone != nil {
			zone = fmt.Sprintf(" %.2f %% |", 100**s.OutOfZone)
		}
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.3f %% |%s %s | %s | %.3f | %s | %.1f, %.1f, %.0f | %.2f %% | %d |\n", s.Strategy, s.P50Ms, s.P99Ms, s.P999Ms,
			100*s.Over50, zone, ratio(s.P99Ms, ora), ratio(s.P99Ms, c3), s.MaxShare, dispersionRatio(s, rr), s.PollsPerServerSecond, s.SteadyPolls, s.PeakPolls, 100*s.Hedges, s.Errors)
	}
}

func name(s *strategyReport) string {
	if s == nil {
		return "round robin"
	}
	return s.Strategy
}

func ratio(v float64, base *strategyReport) string {
	if base == nil || base.P99Ms <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", v/base.P99Ms)
}

// dispersionRatio is the largest, over the servers, of s's index of
// dispersion over base's on the same server.
func dispersionRatio(s strategyReport, base *strategyReport) string {
	if base == nil {
		return "–"
	}
	worst := math.NaN()
	for i, d := range s.Dispersion {
		if b := base.Dispersion[i]; b > 0 && !math.IsNaN(d) && (math.IsNaN(worst) || d/b > worst) {
			worst = d / b
		}
	}
	if math.IsNaN(worst) {
		return "–"
	}
	return fmt.Sprintf("%.2f", worst)
}

// writeOut writes report.json and the runs' HdrHistogram logs.
func writeOut(dir string, rep *report) error {
	for _, c := range rep.Cells {
		for _, s := range c.Strategies {
			for k, r := range s.runs {
				d := filepath.Join(dir, c.Name, fmt.Sprintf("seed%d", r.Config.Seed))
				if err := os.MkdirAll(d, 0o755); err != nil {
					return err
				}
				f, err := os.Create(filepath.Join(d, s.Strategy+"-run.hlog"))
				if err != nil {
					return err
				}
				lw := hdrhistogram.NewHistogramLogWriter(f)
				err = errors.Join(lw.OutputLogFormatVersion(), lw.OutputLegend(), lw.OutputIntervalHistogram(s.runs[k].Histogram()), f.Close())
				if err != nil {
					return err
				}
			}
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644)
}
