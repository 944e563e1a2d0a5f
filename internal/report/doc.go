// Package report turns ycsb-lite runs into a comparison: the human table
// (throughput, mean, p50, p90, p99, p99.9, max, per-node share of requests
// and the busiest node's p99/median requests per 100 ms, as in C3 Figure 8),
// a JSON report, and gonum/plot figures in PNG and SVG: latency by
// percentile per policy, latency over time (C3 Figure 11) and requests per
// 100 ms per node over time (C3 Figure 9).
package report
