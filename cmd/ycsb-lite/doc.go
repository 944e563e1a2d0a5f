// Command ycsb-lite is a YCSB-like load generator that compares gocql
// host-selection policies side by side on the same workload, scenario and
// seed.
//
// It runs YCSB core workloads (package ycsb; built-in A–F or a .properties
// file) through the real gocql driver, either against given hosts or, with
// no -hosts, against an embedded simulated cluster (package sim; default 5
// nodes, RF 3) on which a scenario is applied: steady, slow-node, gc-pauses,
// bimodal (C3 §6), node-down, workload-shift (C3 Figure 11), and the fault
// mixes error-node (-error-rate, -error-kind, -fault-until), two-slow,
// flapping (-flap-every) and recovering (reports the time until the node
// gets its fair share again). -retries N installs gocql's SimpleRetryPolicy
// (default none, so failures reach the client and show); the table and
// report.json count failed operations by error kind.
//
// Policies: tailroute (C3), tailroute-p2c, token-aware (gocql token-aware
// round robin), round-robin, host-pool (go-hostpool epsilon greedy),
// datastax (a port of the DataStax Java driver's DefaultLoadBalancingPolicy)
// and oracle (simulated clusters only: true queue x service time).
//
// Server load signal: the simulator's payload feedback (queue length and
// service time in every response, which no real Cassandra sends) is off
// unless -payload-feedback is given. A tailroute policy's name says what it
// had: tailroute (the product's default: each node's
// system_views.thread_pools polled through the session within the default
// poll budget, tailroute.WithPollBudget), tailroute-nopoll (none:
// client-side estimates, tailroute.WithServerLoad(false)), tailroute+poll
// (+poll100ms, +poll1s: polled at a fixed 250 ms, 100 ms, 1 s),
// tailroute+payload (the simulator's payload, on for that policy's runs
// only; no polling); tailroute-norate has the same variants. -payload-feedback turns the payload on for every
// run and runs tailroute policies as their +payload variant. Polls are not
// counted as node requests. -tail-term k sets k of every tailroute policy's
// score Psi_s + k/mu_s (tailroute.WithTailTerm; default the policy's 2).
//
// -clients N runs N independent clients (each its own session and policy
// instance) against the cluster, -demand-skew P/Q lets P % of them issue
// Q % of the requests, and -utilization U derives the target rate from the
// embedded cluster's capacity (C3 §6).
//
// Zones (zones.go): -racks K puts the embedded cluster's nodes in racks
// rack1..rackK of each DC (round robin) and turns on the simulator's
// network between zones (sim.Network, one-way -zone-latency within a rack,
// between racks and between DCs, default 50us,500us,30ms); each client
// binds its connections to its zone's address (sim.Cluster.ClientAddr),
// -client-rack (default rack1, or spread over the racks). The scenarios
// zones, zone-slow, zone-pause and zones-spread set 6 nodes, 3 racks and
// NetworkTopologyStrategy dc1:3 unless those flags are given. Every
// policy's run reports the share of its data requests and bytes that
// crossed zones (the table's zones line, report.json's zones); the
// tailroute-rack policy is tailroute told the client's rack
// (tailroute.WithLocalRack).
//
// With no flags it compares tailroute, token-aware and tailroute-p2c on the
// slow-node scenario (10000 operations of workload B at 1000 ops/s, 32
// threads per policy, a fresh cluster each), prints the table and writes
// ycsb-out/report.json, the YCSB summaries, per policy an HdrHistogram
// percentile distribution (<policy>-run.hgrm) and interval log
// (<policy>-run.hlog), and PNG/SVG plots. Progress is a redrawn line on a
// terminal, else a status line every -status-interval. Ctrl-C stops the run
// and still reports what was measured.
//
// Flags are declared per topic (flags_run.go: policies, workload, scenario,
// clients; flags_cluster.go: cluster, connection, output) and -h lists them
// by topic. -hosts with the connection flags (-local-dc, -username,
// -password, -tls-*, -protocol-version, -connect-timeout, -timeout) reaches
// a real cluster.
package main
