package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// machine describes where the suite ran, for RESULTS.md.
type machine struct {
	CPUs      int    // runtime.NumCPU, what nproc reports
	GoVersion string // `go version`, or the suite's runtime version
	Date      time.Time
}

func thisMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, Date: time.Now().UTC()}
	if b, err := exec.Command("go", "version").Output(); err == nil {
		m.GoVersion = strings.TrimPrefix(strings.TrimSpace(string(b)), "go version ")
	}
	return m
}

// summaryPolicies are the policies of the summary table of ratios.
var summaryPolicies = []string{"tailroute", "tailroute+poll", "tailroute+hedge"}

// slowHeader names the slow-operations column: "> 50 ms".
func slowHeader(slowMs float64) string {
	if slowMs <= 0 {
		return "slow"
	}
	return fmt.Sprintf("> %g ms", slowMs)
}

// pctStr formats a share (0..1) as a percentage; "–" for NaN (no report
// had the count).
func pctStr(share float64) string {
	if math.IsNaN(share) {
		return "–"
	}
	return fmt.Sprintf("%.2f %%", 100*share)
}

func msStr(us float64) string {
	if math.IsNaN(us) {
		return "–"
	}
	return fmt.Sprintf("%.2f", us/1000)
}

func ratioStr(r float64) string {
	if math.IsNaN(r) {
		return "–"
	}
	return fmt.Sprintf("%.2f", r)
}

// writeMarkdown writes the RESULTS.md fragment: setup, the summary of p99
// ratios, a table per cell, and the command lines.
func writeMarkdown(w io.Writer, c *config, cells []*cellAgg, notRun []string, m machine) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## Benchmark suite (`%s`)\n\n", c.command)
	fmt.Fprintf(&b, "Machine: %d CPUs (nproc), %s; aggregated %s", m.CPUs, m.GoVersion, m.Date.Format("2006-01-02 15:04 MST"))
	var oldest, newest time.Time
	for _, ca := range cells {
		if oldest.IsZero() || ca.Oldest.Before(oldest) {
			oldest = ca.Oldest
		}
		if ca.Newest.After(newest) {
			newest = ca.Newest
		}
	}
	if !oldest.IsZero() {
		fmt.Fprintf(&b, " from reports written %s – %s", oldest.UTC().Format("2006-01-02 15:04"), newest.UTC().Format("2006-01-02 15:04 MST"))
	}
	b.WriteString(".\n\n")
	b.WriteString("Every cell runs ycsb-lite in compare mode (each policy back to back on a fresh embedded cluster, same seed) once per seed. " +
		"Figures are medians over seeds; latency in ms from each operation's intended start; " +
		"p99 range = min–max of p99 over seeds; > 50 ms = the share of operations slower than ycsb-lite's -slow (50 ms unless set; unlike p99 no step where about 1 % are caught in stalls); max share = the largest share of requests one node coordinated (load spread; 0.20 is even on 5 nodes); " +
		"vs best peer = p99 / p99 of the best policy that is neither tailroute nor the oracle (by median p99 in that cell); vs oracle = p99 / the oracle's p99. " +
		"Server load signal: tailroute rows without a suffix poll each node's system_views.thread_pools within the default poll budget (the product's default); -nopoll rows have none (client-side estimates only); +poll rows poll at a fixed interval; " +
		"+payload rows read the simulator's payload feedback, which no real Cassandra sends; no other policy reads either.\n\n")

	b.WriteString("### Summary: p99 ratios\n\n| cell | best peer |")
	for _, p := range summaryPolicies {
		fmt.Fprintf(&b, " %s vs best peer | %s vs oracle |", p, p)
	}
	b.WriteString("\n|---|---|")
	for range summaryPolicies {
		b.WriteString("---:|---:|")
	}
	b.WriteString("\n")
	for _, ca := range cells {
		peer := ca.BestPeer
		if peer == "" {
			peer = "–"
		}
		fmt.Fprintf(&b, "| %s | %s |", ca.Name, peer)
		for _, p := range summaryPolicies {
			vp, vo := math.NaN(), math.NaN()
			if pa := ca.policy(p); pa != nil {
				vp, vo = pa.VsPeer, pa.VsOracle
			}
			fmt.Fprintf(&b, " %s | %s |", ratioStr(vp), ratioStr(vo))
		}
		b.WriteString("\n")
	}
	if len(notRun) > 0 {
		fmt.Fprintf(&b, "\nNot run (no report): %s.\n", strings.Join(notRun, ", "))
	}

	for _, ca := range cells {
		fmt.Fprintf(&b, "\n### %s\n\n%s; seeds %s.\n\n", ca.Name, ca.Header, joinSeeds(ca.Seeds))
		fmt.Fprintf(&b, "| policy | seeds | ops/s | p50 | p99 | p99 range | p99.9 | %s | max share | errors | vs best peer | vs oracle |\n", slowHeader(ca.SlowMs))
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, p := range ca.Policies {
			name := p.Policy
			if name == ca.BestPeer {
				name += " (best peer)"
			}
			fmt.Fprintf(&b, "| %s | %d | %.0f | %s | %s | %s–%s | %s | %s | %.2f | %g | %s | %s |\n",
				name, p.Seeds, p.Throughput, msStr(p.P50), msStr(p.P99), msStr(p.P99Min), msStr(p.P99Max),
				msStr(p.P999), pctStr(p.SlowShare), p.MaxShare, p.Errors, ratioStr(p.VsPeer), ratioStr(p.VsOracle))
		}
		writeFaultTable(&b, ca)
		if len(ca.Missing) > 0 {
			fmt.Fprintf(&b, "\nMissing: %s.\n", strings.Join(ca.Missing, "; "))
		}
	}

	b.WriteString("\n### Command lines\n\n```\n")
	for _, ca := range cells {
		for _, cmd := range ca.Commands {
			b.WriteString(cmd + "\n")
		}
	}
	b.WriteString("```\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func joinSeeds(s []int64) string {
	var p []string
	for _, k := range s {
		p = append(p, fmt.Sprint(k))
	}
	return strings.Join(p, ", ")
}

// writeResults aggregates the reports under c.out into RESULTS.md and
// p99-by-cell.png/.svg, and prints the summary to stdout.
func writeResults(c *config, stdout io.Writer) error {
	cells, notRun, err := aggregate(c)
	if err != nil {
		return err
	}
	if len(cells) == 0 {
		return fmt.Errorf("no JSON report under %s for the selected cells and seeds; nothing to aggregate", c.out)
	}
	var md strings.Builder
	if err := writeMarkdown(&md, c, cells, notRun, thisMachine()); err != nil {
		return err
	}
	path := filepath.Join(c.out, "RESULTS.md")
	if err := os.WriteFile(path, []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "results: %s\n", path)
	p, err := p99Plot(cells)
	if err != nil {
		return err
	}
	if p != nil {
		for _, ext := range []string{"png", "svg"} {
			path := filepath.Join(c.out, "p99-by-cell."+ext)
			if err := savePlot(p, len(cells), path); err != nil {
				return fmt.Errorf("plot %s: %v", path, err)
			}
			fmt.Fprintf(stdout, "plot: %s\n", path)
		}
	}
	return nil
}

// writeFaultTable adds, for a fault cell (error-node, recovering), the
// fault node's median share of attempts during the fault and the median
// time until it got its fair share back.
func writeFaultTable(b *strings.Builder, ca *cellAgg) {
	any := false
	for _, p := range ca.Policies {
		any = any || !math.IsNaN(p.FaultShare)
	}
	if !any {
		return
	}
	b.WriteString("\nFault node: share of attempts during the fault; fair share back = time from the end of the fault to the end of the first 500 ms with at least 75 % of 1/nodes (– = the fault lasted the run, or no recovery within it).\n\n")
	b.WriteString("| policy | share during fault | fair share back (ms) |\n|---|---:|---:|\n")
	for _, p := range ca.Policies {
		rec := "–"
		if !math.IsNaN(p.RecoveryMs) {
			rec = fmt.Sprintf("%.0f", p.RecoveryMs)
		}
		fmt.Fprintf(b, "| %s | %.3f | %s |\n", p.Policy, p.FaultShare, rec)
	}
}
