package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tailroute/tailroute/internal/report"
)

func TestParseFlagsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string // in the message: flag and allowed range
	}{
		{[]string{"-seeds", "0"}, "-seeds 0: allowed 1..100"},
		{[]string{"-seeds", "101"}, "-seeds 101: allowed 1..100"},
		{[]string{"-ops", "10"}, "-ops 10: allowed 100..10000000"},
		{[]string{"-clients", "0"}, "-clients 0: allowed 1..64"},
		{[]string{"-clients", "65"}, "-clients 65: allowed 1..64"},
		{[]string{"-clients", "2"}, "cell demand-skew needs -clients >= 3"},
		{[]string{"-policies", "tailroute,tailroute"}, "tailroute is repeated"},
		{[]string{"-policies", " , "}, "-policies"},
		{[]string{"-scenarios", "steady,nope"}, `-scenarios: unknown cell "nope"`},
		{[]string{"-extra", "-seed 5"}, "-seed is set by the suite"},
		{[]string{"-extra", "-json=x.json"}, "-json is set by the suite"},
		{[]string{"-extra", "-target 500"}, "-target conflicts with cell bimodal-u45-t10ms"},
		{[]string{"-out", ""}, "-out"},
		{[]string{"-ycsb-lite", "/nonexistent/ycsb-lite"}, "-ycsb-lite /nonexistent/ycsb-lite"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"stray"}, `unexpected argument "stray"`},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		if code := run(c.args, &bytes.Buffer{}, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: stderr %q, want it to contain %q", c.args, stderr.String(), c.want)
		}
	}
}

// TestUnknownPolicyCheckedAgainstBinary: policy names are checked against
// the ycsb-lite binary's -list-policies (here a stand-in script), before
// anything runs.
func TestUnknownPolicyCheckedAgainstBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ycsb-lite")
	script := "#!/bin/sh\n[ \"$1\" = -list-policies ] || exit 3\necho tailroute\necho token-aware\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stderr bytes.Buffer
	code := run([]string{"-quick", "-scenarios", "steady", "-policies", "tailroute,fastest+hedge", "-ycsb-lite", bin, "-out", out}, &bytes.Buffer{}, &stderr)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (stderr %q)", code, stderr.String())
	}
	want := "-policies fastest+hedge: allowed tailroute, token-aware, each optionally with +hedge"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want it to contain %q", stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(out, "steady")); err == nil {
		t.Error("a cell ran despite the bad policy")
	}
}

func TestParseFlagsDefaultsAndCellArgs(t *testing.T) {
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.cells) != 21 || len(c.seeds) != 3 || c.ops != defaultOps || c.clients != 4 || len(c.policies) != 16 {
		t.Errorf("defaults: %d cells, %d seeds, %d ops, %d clients, %d policies; want 21, 3, %d, 4, 16",
			len(c.cells), len(c.seeds), c.ops, c.clients, len(c.policies), defaultOps)
	}
	// -target is fine once no utilization cell is selected
	c, err = parseFlags([]string{"-scenarios", "steady,slow-node", "-extra", "-target 500 -threads 8"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(c.cellArgs(c.cells[1], 2, "x.json"), " ")
	want := "-compare " + defaultPolicies + " -scenario slow-node -seed 2 -ops " + strconv.Itoa(defaultOps) + " -clients 4 -target 500 -threads 8 -plots=false -out " +
		filepath.Join("bench-out", "slow-node", "seed2") + " -json x.json"
	if args != want {
		t.Errorf("cell args\n got %s\nwant %s", args, want)
	}
	// a zone cell adds tailroute-rack to -policies, once, and leaves
	// -policies as it was for the other cells
	c, err = parseFlags([]string{"-scenarios", "zone-slow,steady", "-policies", "tailroute,rack-aware"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(c.cellArgs(c.cells[1], 1, "x.json"), " "); !strings.HasPrefix(args, "-compare tailroute,rack-aware,tailroute-rack -scenario zone-slow ") {
		t.Errorf("zone-slow cell args: %s", args)
	}
	if args := strings.Join(c.cellArgs(c.cells[0], 1, "x.json"), " "); !strings.HasPrefix(args, "-compare tailroute,rack-aware -scenario steady ") {
		t.Errorf("steady cell args after a zone cell: %s", args)
	}
	c, err = parseFlags([]string{"-scenarios", "zones", "-policies", "tailroute-rack,tailroute"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(c.cellArgs(c.cells[0], 1, "x.json"), " "); !strings.HasPrefix(args, "-compare tailroute-rack,tailroute -scenario zones ") {
		t.Errorf("zones cell with tailroute-rack in -policies: %s", args)
	}
	// demand skew is C3 Figure 15's: bimodal at 70 % utilization
	c, err = parseFlags([]string{"-scenarios", "demand-skew"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	args = strings.Join(c.cellArgs(c.cells[0], 1, "x.json"), " ")
	if !strings.Contains(args, "-scenario bimodal -utilization 0.70 -fluctuation 100ms -threads 64 -demand-skew 20/80") {
		t.Errorf("demand-skew cell args: %s", args)
	}
	if _, err := parseFlags([]string{"-scenarios", "node-down", "-extra", "-target 500"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "conflicts with cell node-down") {
		t.Errorf("-target with a utilization cell: %v", err)
	}
	c, err = parseFlags([]string{"-scenarios", "bimodal", "-quick", "-clients", "1"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if names := cellNames(c.cells); len(names) != 6 || names[0] != "bimodal-u45-t10ms" || names[5] != "bimodal-u70-t500ms" {
		t.Errorf("-scenarios bimodal selected %v", names)
	}
	args = strings.Join(c.cellArgs(c.cells[4], 1, "x.json"), " ")
	if !strings.Contains(args, "-scenario bimodal -utilization 0.70 -fluctuation 100ms") || !strings.Contains(args, "-ops 300 ") ||
		!strings.Contains(args, "-records 200") || strings.Contains(args, "-clients") || len(c.seeds) != 1 {
		t.Errorf("quick bimodal cell, one client: %s, %d seeds", args, len(c.seeds))
	}
}

// TestSmokeSuite builds ycsb-lite and runs one tiny cell end to end, then
// checks resume and -aggregate-only.
func TestSmokeSuite(t *testing.T) {
	out := t.TempDir()
	args := []string{"-quick", "-scenarios", "steady", "-seeds", "1", "-policies", "tailroute,token-aware", "-clients", "1", "-out", out}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "steady", "seed1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var pols []string
	for _, res := range r.Results {
		pols = append(pols, res.Policy)
		if res.Operations == 0 || res.Latency.P99Us <= 0 {
			t.Errorf("%s: %d operations, p99 %d µs", res.Policy, res.Operations, res.Latency.P99Us)
		}
	}
	if r.Scenario != "steady" || r.Seed != 1 || !slices.Equal(pols, []string{"tailroute", "token-aware"}) {
		t.Errorf("report: scenario %s, seed %d, policies %v", r.Scenario, r.Seed, pols)
	}
	md, err := os.ReadFile(filepath.Join(out, "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| steady | token-aware |", "### steady", "ycsb-lite -compare tailroute,token-aware -scenario steady -seed 1 -ops 300 -records 200"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"p99-by-cell.png", "p99-by-cell.svg", "steady/seed1.log", "steady/seed1.cmd"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// ycsb-lite's stderr is a file here, so its log has status lines.
	if log, err := os.ReadFile(filepath.Join(out, "steady", "seed1.log")); err != nil || !strings.Contains(string(log), "[token-aware]") ||
		!strings.Contains(string(log), "operations, done") {
		t.Errorf("seed1.log lacks ycsb-lite's status lines (%v):\n%s", err, log)
	}
	if !strings.Contains(stderr.String(), "[1/1] steady seed 1: running") {
		t.Errorf("stderr %q lacks the running line", stderr.String())
	}
	// Resume: the cell exists, so nothing runs; -aggregate-only rewrites RESULTS.md.
	stderr.Reset()
	bin := filepath.Join(out, "no-such-binary-needed")
	// a stand-in that knows the policies but fails every run
	os.WriteFile(bin, []byte("#!/bin/sh\nif [ \"$1\" = -list-policies ]; then echo tailroute; echo token-aware; exit 0; fi\nexit 1\n"), 0o755)
	if code := run(append(args, "-ycsb-lite", bin), &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "exists, skipped") {
		t.Errorf("resume: exit %d, stderr %q; want the cell skipped", code, stderr.String())
	}
	// A failing run is reported (exit 1) and leaves no report behind, so a
	// later run retries it.
	stderr.Reset()
	if code := run(append(args, "-ycsb-lite", bin, "-force", "-scenarios", "slow-node"), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "slow-node seed 1: FAILED") {
		t.Errorf("failing ycsb-lite: exit %d, stderr %q; want 1 and the cell named", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "slow-node", "seed1.json")); err == nil {
		t.Error("a failed run left its JSON report")
	}
	os.Remove(filepath.Join(out, "RESULTS.md"))
	if code := run([]string{"-aggregate-only", "-scenarios", "steady", "-seeds", "1", "-clients", "1", "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("-aggregate-only: exit %d, %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "RESULTS.md")); err != nil {
		t.Error(err)
	}
}

// The ETA is the mean duration of the runs so far times the runs left.
func TestETA(t *testing.T) {
	var e etaEstimate
	if got := e.left(3); got != "" {
		t.Errorf("no run yet: %q", got)
	}
	e.add(10 * time.Second)
	e.add(20 * time.Second)
	if got := e.left(4); got != ", ETA 1m0s for 4 more" {
		t.Errorf("two runs of 15s mean, 4 left: %q", got)
	}
	if got := e.left(0); got != "" {
		t.Errorf("nothing left: %q", got)
	}
}
