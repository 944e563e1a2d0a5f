package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// writeBatch writes the -batch table: for every cell directory under dir,
// the seeds in which every policy has a run (so each row pools the same
// seeds), one row per policy with its pooled figures and its p99 and p99.9
// over the first policy's. A cell without such a seed has no rows.
func writeBatch(w io.Writer, dir string, policies []string, slow, collapse time.Duration, collapseCount int64) error {
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
		var base summary
		for i, p := range policies {
			files := make([]string, len(seeds))
			for k, s := range seeds {
				files[k] = filepath.Join(s, p+"-run.hlog")
			}
			s, err := pool(files, slow, collapse, collapseCount)
			if err != nil {
				return err
			}
			if i == 0 {
				base = s
			}
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %.2f %% | %d |\n", e.Name(), p, s.Runs,
				ms(s.P99), ratio(s.P99, base.P99), ms(s.P999), ratio(s.P999, base.P999),
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
