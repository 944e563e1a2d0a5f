package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tailroute/tailroute/internal/report"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// res is a synthetic policy result: p99 in ms, other latencies derived.
func res(policy string, p99ms float64, tput float64, shares ...float64) report.PolicyResult {
	r := report.PolicyResult{Policy: policy, Throughput: tput,
		Latency: ycsb.LatencyStats{P50Us: int64(p99ms * 100), P99Us: int64(p99ms * 1000), P999Us: int64(p99ms * 2000)}, Operations: 1000, SlowOps: int64(p99ms)}
	for _, s := range shares {
		r.Nodes = append(r.Nodes, report.NodeLoad{Host: "h", Share: s})
	}
	return r
}

func writeReport(t *testing.T, out, cell string, seed int64, results ...report.PolicyResult) {
	t.Helper()
	path := seedPath(out, cell, seed)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(report.Report{Scenario: "steady", Workload: "b", Seed: seed, Clients: 4, Target: 1000, Operations: 5000,
		Command: "ycsb-lite -seed " + string(rune('0'+seed)), Results: results})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestAggregateCellMediansSpreadAndRatios(t *testing.T) {
	out := t.TempDir()
	// Three seeds; token-aware is the best peer (median p99 20 < datastax 30),
	// host-pool has the lowest single p99 (5) but a worse median (40).
	writeReport(t, out, "c", 1,
		res("tailroute", 10, 990, 0.2, 0.3, 0.5), res("datastax", 30, 1000), res("token-aware", 18, 1000),
		res("host-pool", 5, 1000), res("oracle", 8, 1000))
	writeReport(t, out, "c", 2,
		res("tailroute", 16, 1000, 0.25, 0.25, 0.5), res("datastax", 30, 1000), res("token-aware", 20, 1000),
		res("host-pool", 40, 1000), res("oracle", 7, 1000))
	writeReport(t, out, "c", 3,
		res("tailroute", 12, 995, 0.4, 0.6), res("datastax", 31, 1000), res("token-aware", 25, 1000),
		res("host-pool", 50, 1000), res("oracle", 6, 1000))
	ca, err := aggregateCell(out, "c", []int64{1, 2, 3}, []string{"tailroute", "datastax", "token-aware", "host-pool", "oracle"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ca.Missing) != 0 {
		t.Errorf("Missing = %v, want none", ca.Missing)
	}
	if ca.BestPeer != "token-aware" {
		t.Errorf("BestPeer = %q, want token-aware (lowest median p99 among peers)", ca.BestPeer)
	}
	tr := ca.policy("tailroute")
	if tr == nil || tr.Seeds != 3 {
		t.Fatalf("tailroute = %+v", tr)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"p99", tr.P99, 12000},
		{"p50", tr.P50, 1200},
		{"p99.9", tr.P999, 24000},
		{"share over -slow", tr.SlowShare, 0.012},
		{"p99 min", tr.P99Min, 10000},
		{"p99 max", tr.P99Max, 16000},
		{"throughput", tr.Throughput, 995},
		{"max share", tr.MaxShare, 0.5},
		{"vs best peer", tr.VsPeer, 12.0 / 20},
		{"vs oracle", tr.VsOracle, 12.0 / 7},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("tailroute %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p := ca.policy("datastax"); !math.IsNaN(p.VsPeer) || !near(p.VsOracle, 30.0/7) {
		t.Errorf("datastax ratios = %v vs peer (want NaN: peers are not compared to peers), %v vs oracle", p.VsPeer, p.VsOracle)
	}
	if p := ca.policy("oracle"); !math.IsNaN(p.VsOracle) || !math.IsNaN(p.VsPeer) {
		t.Errorf("oracle ratios = %v, %v, want NaN", p.VsPeer, p.VsOracle)
	}
	if len(ca.Commands) != 3 {
		t.Errorf("Commands = %v, want one per seed", ca.Commands)
	}
}

func TestAggregateCellMissingSeedAndPolicy(t *testing.T) {
	out := t.TempDir()
	// Seed 2 has no report; seed 3 lacks tailroute; oracle never ran; a
	// policy not asked for (round-robin) still shows up.
	writeReport(t, out, "c", 1, res("tailroute", 10, 1000), res("token-aware", 20, 1000), res("round-robin", 30, 1000))
	writeReport(t, out, "c", 3, res("token-aware", 22, 1000))
	ca, err := aggregateCell(out, "c", []int64{1, 2, 3}, []string{"tailroute", "token-aware", "oracle"})
	if err != nil {
		t.Fatal(err)
	}
	if got := joinSeeds(ca.Seeds); got != "1, 3" {
		t.Errorf("Seeds = %s, want 1, 3", got)
	}
	miss := strings.Join(ca.Missing, "; ")
	for _, want := range []string{"seed 2: no report", "tailroute: in 1 of 2 reports", "oracle: in no report"} {
		if !strings.Contains(miss, want) {
			t.Errorf("Missing = %q, want it to mention %q", miss, want)
		}
	}
	if tr := ca.policy("tailroute"); tr == nil || tr.Seeds != 1 || !near(tr.P99, 10000) || !near(tr.VsPeer, 10000/21000.0) || !math.IsNaN(tr.VsOracle) {
		t.Errorf("tailroute = %+v; want p99 from its one seed, vs token-aware's median 21 ms, no oracle ratio", tr)
	}
	if ca.policy("round-robin") == nil {
		t.Error("round-robin (in the reports, not asked for) was dropped")
	}
	if ca.policy("oracle") != nil {
		t.Error("oracle has an aggregate without any result")
	}

	var md strings.Builder
	c := &config{command: "ycsb-suite -test", cells: []cell{{Name: "c"}, {Name: "absent"}}, seeds: []int64{1, 2, 3}, out: out}
	if err := writeMarkdown(&md, c, []*cellAgg{ca}, []string{"absent"}, machine{CPUs: 2, GoVersion: "go1.26"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| c | token-aware | 0.48 | – |", "Not run (no report): absent.", "Missing: seed 2: no report", "2 CPUs (nproc), go1.26", "ycsb-lite -seed 1"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md.String())
		}
	}
}

func TestAggregateCellEvenSeedsAndNoPeer(t *testing.T) {
	out := t.TempDir()
	writeReport(t, out, "c", 1, res("tailroute", 10, 1000), res("oracle", 5, 1000))
	writeReport(t, out, "c", 2, res("tailroute", 20, 1000), res("oracle", 5, 1000))
	ca, err := aggregateCell(out, "c", []int64{1, 2}, []string{"tailroute", "oracle"})
	if err != nil {
		t.Fatal(err)
	}
	tr := ca.policy("tailroute")
	if !near(tr.P99, 15000) || !near(tr.VsOracle, 3) {
		t.Errorf("tailroute p99 = %v (want the mean of the middle two, 15000), vs oracle %v (want 3)", tr.P99, tr.VsOracle)
	}
	if ca.BestPeer != "" || !math.IsNaN(tr.VsPeer) {
		t.Errorf("BestPeer = %q, VsPeer = %v; want none without a peer", ca.BestPeer, tr.VsPeer)
	}
}

// TestBestPeerOverAllPeers: every default policy that is neither
// tailroute nor the oracle competes for the best peer, the latency-aware
// peers of issue 42 included (here peakewma beats the drivers' defaults).
func TestBestPeerOverAllPeers(t *testing.T) {
	var peers []string
	for _, p := range strings.Split(defaultPolicies, ",") {
		if isPeer(p) {
			peers = append(peers, p)
		}
	}
	for _, want := range []string{"datastax", "token-aware", "host-pool", "latencyaware", "peakewma", "latency-sensitive", "latency-inflight", "rack-aware"} {
		if !slices.Contains(peers, want) {
			t.Errorf("default peers %v lack %s", peers, want)
		}
	}
	out := t.TempDir()
	writeReport(t, out, "c", 1, res("tailroute", 10, 1000), res("datastax", 30, 1000), res("latencyaware", 25, 1000),
		res("peakewma", 12, 1000), res("rack-aware", 40, 1000), res("oracle", 5, 1000))
	ca, err := aggregateCell(out, "c", []int64{1}, []string{"tailroute", "datastax", "latencyaware", "peakewma", "rack-aware", "oracle"})
	if err != nil {
		t.Fatal(err)
	}
	if ca.BestPeer != "peakewma" || !near(ca.policy("tailroute").VsPeer, 10.0/12) {
		t.Errorf("BestPeer = %q, tailroute vs peer %v; want peakewma, 10/12", ca.BestPeer, ca.policy("tailroute").VsPeer)
	}
}

func TestAggregateCellNoReportsAndBadJSON(t *testing.T) {
	out := t.TempDir()
	ca, err := aggregateCell(out, "c", []int64{1}, []string{"tailroute"})
	if ca != nil || err != nil {
		t.Errorf("no reports: got %v, %v; want nil, nil", ca, err)
	}
	path := seedPath(out, "c", 1)
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("{not json"), 0o644)
	if _, err := aggregateCell(out, "c", []int64{1}, []string{"tailroute"}); err == nil || !strings.Contains(err.Error(), "seed1.json") {
		t.Errorf("bad JSON: err = %v, want one naming the file", err)
	}
}

func TestP99PlotWritesFiles(t *testing.T) {
	out := t.TempDir()
	writeReport(t, out, "c", 1, res("tailroute", 10, 1000), res("token-aware", 20, 1000))
	ca, err := aggregateCell(out, "c", []int64{1}, []string{"tailroute", "token-aware"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := p99Plot([]*cellAgg{ca})
	if err != nil || p == nil {
		t.Fatalf("p99Plot = %v, %v", p, err)
	}
	for _, ext := range []string{"png", "svg"} {
		path := filepath.Join(out, "p."+ext)
		if err := savePlot(p, 1, path); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestAggregateFaultStats: a fault cell's reports yield the fault node's
// median share and recovery time per policy, and RESULTS.md shows them;
// a fault that lasted the run has no recovery time.
func TestAggregateFaultStats(t *testing.T) {
	out := t.TempDir()
	withFault := func(r report.PolicyResult, share, rec float64, ended bool) report.PolicyResult {
		r.Fault = &report.FaultStats{Node: "127.0.0.5", ShareDuringFault: share, Ended: ended, RecoveryMs: rec}
		return r
	}
	for seed, v := range []struct{ share, rec float64 }{{0.03, 800}, {0.05, 1200}, {0.04, 900}} {
		writeReport(t, out, "f", int64(seed+1),
			withFault(res("tailroute", 10, 1000), v.share, v.rec, true),
			withFault(res("token-aware", 20, 1000), 0.2, -1, false))
	}
	ca, err := aggregateCell(out, "f", []int64{1, 2, 3}, []string{"tailroute", "token-aware"})
	if err != nil {
		t.Fatal(err)
	}
	tr, ta := ca.policy("tailroute"), ca.policy("token-aware")
	if !near(tr.FaultShare, 0.04) || !near(tr.RecoveryMs, 900) {
		t.Errorf("tailroute fault share %v recovery %v, want 0.04 and 900", tr.FaultShare, tr.RecoveryMs)
	}
	if !near(ta.FaultShare, 0.2) || !math.IsNaN(ta.RecoveryMs) {
		t.Errorf("token-aware fault share %v recovery %v, want 0.2 and none", ta.FaultShare, ta.RecoveryMs)
	}
	var b strings.Builder
	writeFaultTable(&b, ca)
	if s := b.String(); !strings.Contains(s, "| tailroute | 0.040 | 900 |") || !strings.Contains(s, "| token-aware | 0.200 | – |") {
		t.Errorf("fault table:\n%s", s)
	}
	// a cell without faults gets no table
	writeReport(t, out, "g", 1, res("tailroute", 10, 1000))
	cg, err := aggregateCell(out, "g", []int64{1}, []string{"tailroute"})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	writeFaultTable(&b, cg)
	if b.Len() != 0 {
		t.Errorf("fault table for a cell without faults: %q", b.String())
	}
}
