package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// writeBatch writes the -batch table: for every cell directory under dir,
// the seeds in which every policy has a run (so each row pools the same
// seeds), one row per policy with its pooled figures and its p99 and p99.9
// over the first policy's, each ratio with its paired bootstrap interval
// over the seeds (ratioIntervals; none when resamples is 0 or the cell has
// one seed). A cell without such a seed has no rows.
func writeBatch(w io.Writer, dir string, policies []string, slow, collapse time.Duration, collapseCount int64, resamples int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("hlogpool: -batch: %w", err)
	}
	fmt.Fprintf(w, "| cell | policy | runs | p99 ms | / %[1]s | p99.9 ms | / %[1]s | over %[2]v | collapsed |\n", policies[0], slow)
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	rows := 0
	for _, e := range entries { // sorted by name
		if !e.IsDir() {
			continue
		}
		seeds, err := pairedSeeds(filepath.Join(dir, e.Name()), policies)
		if err != nil {
			return err
		}
		if len(seeds) == 0 {
			continue
		}
		runs := make([][]*hdrhistogram.Histogram, len(policies))
		sums := make([]summary, len(policies))
		for i, p := range policies {
			files := make([]string, len(seeds))
			for k, s := range seeds {
				files[k] = filepath.Join(s, p+"-run.hlog")
			}
			if runs[i], err = readLogs(files); err != nil {
				return err
			}
			if sums[i], err = poolRuns(runs[i], slow, collapse, collapseCount); err != nil {
				return err
			}
		}
		var lo, hi [][]float64
		if resamples > 0 && len(seeds) > 1 {
			lo, hi = ratioIntervals(runs, []float64{99, 99.9}, resamples)
		}
		band := func(i, k int) string {
			if i == 0 || lo == nil {
				return ""
			}
			return fmt.Sprintf(" (%.2f-%.2f)", lo[i][k], hi[i][k])
		}
		base := sums[0]
		for i, s := range sums {
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s%s | %s | %s%s | %.2f %% | %d |\n", e.Name(), policies[i], s.Runs,
				ms(s.P99), ratio(s.P99, base.P99), band(i, 0), ms(s.P999), ratio(s.P999, base.P999), band(i, 1),
				s.slowPct(), s.Collapsed)
			rows++
		}
	}
	if rows == 0 {
		return fmt.Errorf("hlogpool: -batch %s: no <cell>/seed*/ directory holds a <policy>-run.hlog of every policy in -policies", dir)
	}
	return nil
}

// pairedSeeds returns the seed directories of cell in which every policy
// has a run log.
func pairedSeeds(cell string, policies []string) ([]string, error) {
	seeds, err := filepath.Glob(filepath.Join(cell, "seed*"))
	if err != nil {
		return nil, fmt.Errorf("hlogpool: -batch: %w", err)
	}
	return slices.DeleteFunc(seeds, func(s string) bool {
		for _, p := range policies {
			if _, err := os.Stat(filepath.Join(s, p+"-run.hlog")); err != nil {
				return true
			}
		}
		return false
	}), nil
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}
