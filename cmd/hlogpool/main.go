// Command hlogpool pools ycsb-lite's interval logs (<policy>-run.hlog, one
// per run) into one latency histogram and prints what a batch of runs
// shows: the pooled quantiles, the share of operations over -slow, how many
// runs collapsed and the median p99 of the others. Compare variants of a
// policy as pooled batches of runs with alternating seeds: a cell whose runs
// spread widely (bimodal 70 %) is judged on many runs pooled, not on a
// median of three p99s.
//
//	hlogpool out/A/seed*/tailroute-run.hlog
//	hlogpool -slow 50ms -collapse 100ms -collapse-count 100 FILE...
//	hlogpool -batch out/c4 -policies tailroute,tailroute+hedge,oracle
//
// With -batch, the directory is one client count of a batch
// (docs/experiments/batch.sh: <dir>/<cell>/seed<k>/<policy>-run.hlog) and
// the output is a Markdown table, one row per cell and policy, each cell
// pooled over the seeds in which every policy ran, with each policy's
// pooled p99 and p99.9 divided by the first policy's (the base). Each ratio
// carries a 90 % paired bootstrap interval: the seeds are drawn with
// replacement -resamples times (default 2000; 0 = none), the same draw for
// every policy, each draw pooled and divided again; the interval runs from
// the 5th to the 95th percentile of those ratios. It says how much the
// ratio depends on which seeds were run, not how far the machine's load
// moves it between batches run at different times. The draws come from a
// seeded source, so a table is the same every time. (Written by hand: a
// percentile bootstrap is a few lines over the histograms' buckets.)
//
// Latencies are in microseconds, as ycsb-lite writes them. A run counts as
// collapsed when more than -collapse-count of its operations took longer
// than -collapse (every policy, the oracle included, collapses in some
// bimodal 70 % / 500 ms runs: docs/RESULTS.md).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// maxLatencyUs bounds the pooled histogram: 1 h in microseconds.
const maxLatencyUs = 3_600_000_000

// summary is what a batch of runs shows.
type summary struct {
	Runs, Collapsed    int
	Ops, Slow, Dropped int64
	P50, P99, P999     time.Duration // pooled
	MedianP99Kept      time.Duration // median p99 of the runs that did not collapse; 0 when all did
	RunP99             []time.Duration
	SlowAt, CollapseAt time.Duration
	CollapseCount      int64
}

func us(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// pool reads every interval log and pools it.
func pool(files []string, slow, collapse time.Duration, collapseCount int64) (summary, error) {
	runs, err := readLogs(files)
	if err != nil {
		return summary{}, err
	}
	return poolRuns(runs, slow, collapse, collapseCount)
}

// readLogs reads the interval logs, one histogram per run.
func readLogs(files []string) ([]*hdrhistogram.Histogram, error) {
	runs := make([]*hdrhistogram.Histogram, len(files))
	for i, f := range files {
		run, err := readLog(f)
		if err != nil {
			return nil, err
		}
		runs[i] = run
	}
	return runs, nil
}

// poolRuns pools runs into one histogram and summarizes them.
func poolRuns(runs []*hdrhistogram.Histogram, slow, collapse time.Duration, collapseCount int64) (summary, error) {
	s := summary{SlowAt: slow, CollapseAt: collapse, CollapseCount: collapseCount}
	all := hdrhistogram.New(1, maxLatencyUs, 3)
	var kept []time.Duration
	for _, run := range runs {
		s.Runs++
		s.Dropped += all.Merge(run)
		p99 := us(run.ValueAtQuantile(99))
		s.RunP99 = append(s.RunP99, p99)
		if ycsb.CountAbove(run, collapse.Microseconds()) > collapseCount {
			s.Collapsed++
		} else {
			kept = append(kept, p99)
		}
	}
	if s.Runs == 0 {
		return s, errors.New("hlogpool: no files; give one or more <policy>-run.hlog files")
	}
	s.Ops = all.TotalCount()
	s.Slow = ycsb.CountAbove(all, slow.Microseconds())
	s.P50, s.P99, s.P999 = us(all.ValueAtQuantile(50)), us(all.ValueAtQuantile(99)), us(all.ValueAtQuantile(99.9))
	if len(kept) > 0 {
		slices.Sort(kept)
		s.MedianP99Kept = kept[len(kept)/2]
		if len(kept)%2 == 0 {
			s.MedianP99Kept = (kept[len(kept)/2-1] + kept[len(kept)/2]) / 2
		}
	}
	return s, nil
}

// readLog merges the interval histograms of one log.
func readLog(name string) (*hdrhistogram.Histogram, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := hdrhistogram.New(1, maxLatencyUs, 3)
	r := hdrhistogram.NewHistogramLogReader(f)
	for {
		ih, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("hlogpool: %s: %w", name, err)
		}
		if ih == nil {
			return h, nil
		}
		h.Merge(ih)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// slowPct is the share of operations over SlowAt, in per cent.
func (s summary) slowPct() float64 { return 100 * float64(s.Slow) / float64(max(s.Ops, 1)) }

func (s summary) write(w io.Writer) {
	fmt.Fprintf(w, "runs %d, operations %d: pooled p50 %s ms, p99 %s ms, p99.9 %s ms; over %v %.2f %% (%d)\n",
		s.Runs, s.Ops, ms(s.P50), ms(s.P99), ms(s.P999), s.SlowAt, s.slowPct(), s.Slow)
	kept := "none"
	if s.MedianP99Kept > 0 {
		kept = ms(s.MedianP99Kept) + " ms"
	}
	fmt.Fprintf(w, "collapsed (over %d operations above %v) %d of %d; median p99 of the others %s\n",
		s.CollapseCount, s.CollapseAt, s.Collapsed, s.Runs, kept)
	p := make([]string, len(s.RunP99))
	for i, d := range s.RunP99 {
		p[i] = ms(d)
	}
	fmt.Fprintf(w, "p99 per run (ms): %s\n", strings.Join(p, " "))
	if s.Dropped > 0 {
		fmt.Fprintf(w, "dropped %d values above %v\n", s.Dropped, us(maxLatencyUs))
	}
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hlogpool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	slow := fs.Duration("slow", 50*time.Millisecond, "report the share of operations slower than this (ycsb-lite's -slow)")
	collapse := fs.Duration("collapse", 100*time.Millisecond, "a run collapsed when more than -collapse-count operations took longer than this")
	count := fs.Int64("collapse-count", 100, "see -collapse")
	batch := fs.String("batch", "", "a batch directory <dir>/<cell>/seed<k>/<policy>-run.hlog (docs/experiments/batch.sh's OUT/cN): print a table of every cell, with -policies")
	policies := fs.String("policies", "", "with -batch: comma-separated policies; the first is the base of the ratios")
	resamples := fs.Int("resamples", 2000, "with -batch: bootstrap resamples of the seeds for each ratio's 90 % interval; 0 = no intervals")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	resamplesSet := false
	fs.Visit(func(f *flag.Flag) { resamplesSet = resamplesSet || f.Name == "resamples" })
	var names []string
	if *policies != "" {
		names = strings.Split(*policies, ",")
	}
	switch {
	case *batch != "" && len(fs.Args()) > 0:
		fmt.Fprintf(stderr, "hlogpool: -batch %s and files given: allowed one or the other\n", *batch)
		return 2
	case *batch != "" && (len(names) == 0 || slices.Contains(names, "")):
		fmt.Fprintf(stderr, "hlogpool: -policies %q: allowed one or more policy names, comma-separated, with -batch\n", *policies)
		return 2
	case *batch == "" && *policies != "":
		fmt.Fprintf(stderr, "hlogpool: -policies %q: allowed only with -batch\n", *policies)
		return 2
	case *slow < time.Microsecond || *slow > time.Hour:
		fmt.Fprintf(stderr, "hlogpool: -slow %v: allowed 1µs..1h\n", *slow)
		return 2
	case *collapse < time.Microsecond || *collapse > time.Hour:
		fmt.Fprintf(stderr, "hlogpool: -collapse %v: allowed 1µs..1h\n", *collapse)
		return 2
	case *batch == "" && resamplesSet:
		fmt.Fprintf(stderr, "hlogpool: -resamples %d: allowed only with -batch\n", *resamples)
		return 2
	case *resamples < 0 || *resamples > 1_000_000:
		fmt.Fprintf(stderr, "hlogpool: -resamples %d: allowed 0..1000000\n", *resamples)
		return 2
	case *count < 0:
		fmt.Fprintf(stderr, "hlogpool: -collapse-count %d: allowed 0 or more\n", *count)
		return 2
	}
	if *batch != "" {
		if err := writeBatch(stdout, *batch, names, *slow, *collapse, *count, *resamples); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		return 0
	}
	s, err := pool(fs.Args(), *slow, *collapse, *count)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	s.write(stdout)
	return 0
}
