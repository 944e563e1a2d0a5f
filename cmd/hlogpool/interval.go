package main

import (
	"math/rand/v2"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// intervalLevel is the coverage of the ratio intervals -batch prints: the
// 5th to 95th percentile of the bootstrap ratios.
const intervalLevel = 0.90

// runGrid is a cell's runs of several policies on one grid of values (the
// histograms' bucket tops, as ValueAtQuantile reports them), so that a
// resample pools by adding count vectors instead of merging histograms.
type runGrid struct {
	values []int64     // sorted bucket tops (highest equivalent values)
	counts [][][]int64 // [policy][run][value index]
}

func newRunGrid(runs [][]*hdrhistogram.Histogram) runGrid {
	bars := make([][][]hdrhistogram.Bar, len(runs)) // each run's non-empty buckets, read once
	var values []int64
	for p, pr := range runs {
		bars[p] = make([][]hdrhistogram.Bar, len(pr))
		for r, h := range pr {
			bars[p][r] = slices.DeleteFunc(h.Distribution(), func(b hdrhistogram.Bar) bool { return b.Count == 0 })
			for _, b := range bars[p][r] {
				values = append(values, b.To)
			}
		}
	}
	slices.Sort(values)
	values = slices.Compact(values)
	g := runGrid{values: values, counts: make([][][]int64, len(runs))}
	for p, pr := range bars {
		g.counts[p] = make([][]int64, len(pr))
		for r, bs := range pr {
			c := make([]int64, len(values))
			for _, b := range bs {
				i, _ := slices.BinarySearch(values, b.To)
				c[i] += b.Count
			}
			g.counts[p][r] = c
		}
	}
	return g
}

// quantiles returns the percentiles (ascending) of the runs idx of policy
// p pooled, as hdrhistogram's ValueAtPercentile computes them; sum is
// scratch of len(values).
func (g runGrid) quantiles(p int, idx []int, percentiles []float64, sum []int64) []int64 {
	clear(sum)
	var total int64
	for _, r := range idx {
		for i, c := range g.counts[p][r] {
			sum[i] += c
			total += c
		}
	}
	out := make([]int64, len(percentiles))
	if total == 0 {
		return out
	}
	var cum int64
	i := 0
	for k, pc := range percentiles {
		rank := int64(max(1, min(float64(total), pc/100*float64(total)+0.5)))
		for ; i < len(sum); i++ {
			if cum+sum[i] >= rank {
				break
			}
			cum += sum[i]
		}
		out[k] = g.values[min(i, len(sum)-1)]
	}
	return out
}

// ratioIntervals returns, for each policy, the intervalLevel paired
// bootstrap interval of its pooled percentiles over the base's (policy 0):
// resamples draws of the runs with replacement, the same draw for every
// policy (runs[p][k] are the same seed for every p), each pooled. The
// random source is seeded, so a table is reproducible. lo and hi are
// [policy][percentile].
func ratioIntervals(runs [][]*hdrhistogram.Histogram, percentiles []float64, resamples int) (lo, hi [][]float64) {
	g := newRunGrid(runs)
	n := len(runs[0])
	rng := rand.New(rand.NewPCG(1, 2))
	idx := make([]int, n)
	sum := make([]int64, len(g.values))
	ratios := make([][][]float64, len(runs)) // [policy][percentile][resample]
	for p := range runs {
		ratios[p] = make([][]float64, len(percentiles))
	}
	for range resamples {
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		base := g.quantiles(0, idx, percentiles, sum)
		for p := range runs {
			q := g.quantiles(p, idx, percentiles, sum)
			for k := range percentiles {
				if base[k] > 0 {
					ratios[p][k] = append(ratios[p][k], float64(q[k])/float64(base[k]))
				}
			}
		}
	}
	lo, hi = make([][]float64, len(runs)), make([][]float64, len(runs))
	tail := (1 - intervalLevel) / 2
	for p := range runs {
		lo[p], hi[p] = make([]float64, len(percentiles)), make([]float64, len(percentiles))
		for k, r := range ratios[p] {
			if len(r) == 0 {
				continue
			}
			slices.Sort(r)
			lo[p][k] = r[int(tail*float64(len(r)-1)+0.5)]
			hi[p][k] = r[int((1-tail)*float64(len(r)-1)+0.5)]
		}
	}
	return lo, hi
}
