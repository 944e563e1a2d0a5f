// Command ycsb-suite is the scripted benchmark suite of tailroute:
// one command runs ycsb-lite in compare mode over a fixed set of scenario
// cells × seeds, then aggregates the JSON reports into a markdown results
// fragment (RESULTS.md) and a plot of the median p99 per policy and cell.
//
//	go run ./cmd/ycsb-suite                 # the default suite into bench-out/ (tens of minutes; docs/RESULTS.md times one)
//	go run ./cmd/ycsb-suite -quick          # tiny cells, a smoke run
//	go run ./cmd/ycsb-suite -aggregate-only # redo RESULTS.md and the plot from existing JSON
//
// It builds ycsb-lite once (or uses -ycsb-lite), writes each run's report to
// <out>/<cell>/seed<k>.json and skips runs whose report already exists
// (resume) unless -force. Each run's output, with ycsb-lite's status lines,
// goes to <out>/<cell>/seed<k>.log; stderr gets a line when a run starts and
// one when it ends, with the suite's elapsed time and an ETA (the mean run
// time so far times the runs left). See docs/bench.md.
package main
