// Command vsim runs the virtual-time simulator (internal/vsim): the
// product's own engine, the C3 paper's strategies and the peers, at the
// paper's scale (50 servers, 300 clients) and beyond (1000 clients x 100
// servers), in seconds per run and with the same output for the same
// flags. Each cell of a preset runs every strategy over every seed; the
// table pools the seeds' histograms:
//
//	go run ./cmd/vsim                          # the quick preset: one small cell, a second
//	go run ./cmd/vsim -preset fig14 -out out/fig14 -plot out/fig14/plots
//	go run ./cmd/vsim -preset scale -cells u50-slow1 -seeds 1-3
//	go run ./cmd/hlogpool -batch out/fig14 -policies c3,tailroute,oracle   # paired intervals over the seeds
//	go run ./cmd/vsim -list                    # presets and strategies
//
// Columns: p50, p99, p99.9 and the share over 50 ms of the pooled
// latency (from each request's arrival at its client), p99 over the
// Oracle's and over the paper's C3 in the same cell, the largest share of
// the requests one server got, the worst server's index of dispersion of
// its requests per 100 ms window (after the first second) over round
// robin's on the same server (token-aware, else the paper's rr: a herd
// shows as a ratio well above 1; the largest of 100 ratios of two
// estimates is about 2 between two round robin runs of 300,000 requests
// and 1.4-1.5 at the scale preset's 1,200,000), the server-load polls each server
// received per second, the hedges sent per request (the strategies
// "+hedge"; hedges_per_request in report.json), and errors; in a zone cell (preset zones) also the
// share of the requests sent out of their client's zone (out_of_zone in
// report.json). Progress goes to stderr, the tables to
// stdout. -out writes report.json and <cell>/seed<k>/<strategy>-run.hlog;
// -plot each server's share per window of each cell's first seed.
package main
