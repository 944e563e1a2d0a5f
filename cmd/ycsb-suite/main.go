package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// defaultPolicies are the policies every cell compares: the product's
// variants (tailroute as it ships, polling within the default budget;
// without a server signal, with fixed-interval polling and with the
// simulator's payload feedback as rows of their own), the peers it must
// beat (the drivers' defaults and the latency-aware peers of issue 42:
// LatencyAwarePolicy, Peak-EWMA with P2C, autodeskcloud's two Java 4.x
// policies, gocql's rack-aware round robin) and the oracle that bounds what
// is possible. The best peer of a cell is the best of all of them
// (aggregate.go, isPeer).
const defaultPolicies = "tailroute,tailroute-nopoll,tailroute+poll,tailroute+payload,tailroute+hedge,tailroute-norate,tailroute-p2c," +
	"datastax,token-aware,host-pool,latencyaware,peakewma,latency-sensitive,latency-inflight,rack-aware,oracle"

// Defaults and -quick sizes. defaultOps is sized so the default suite (every
// cell × defaultSeeds, one run per policy at ycsb-lite's rates) took about
// half an hour on a 2-core machine with 11 default policies; with the 16 of
// today (issue 42's peers added) expect about 16/11 of it (not re-measured);
// docs/bench.md has the wall time per cell.
const (
	defaultOps     = 8000
	defaultSeeds   = 3
	defaultClients = 4
	quickOps       = 300
	quickRecords   = 200
)

// suiteOwned are the ycsb-lite flags the suite sets itself; -extra may not
// override them.
var suiteOwned = []string{"compare", "policy", "hedge", "seed", "ops", "json", "out", "plots", "scenario", "clients"}

// config is the validated command line.
type config struct {
	out           string
	seeds         []int64
	policies      []string
	cells         []cell
	ops           int
	clients       int // 1 = do not pass -clients (ycsb-lite's default of one client)
	quick         bool
	extra         []string
	force         bool
	aggregateOnly bool
	ycsbLite      string // prebuilt binary; "" = build one
	command       string // this suite's command line, for RESULTS.md
}

// usageError is a bad command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func badFlag(name string, v any, allowed string) error {
	return &usageError{fmt.Sprintf("-%s %v: allowed %s", name, v, allowed)}
}

// parseFlags validates args into a config.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("ycsb-suite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out      = fs.String("out", "bench-out", "output directory: <out>/<cell>/seed<k>.json, RESULTS.md, p99-by-cell.png/.svg")
		seeds    = fs.Int("seeds", defaultSeeds, "number of seeds per cell (1..100); seeds are 1..N; -quick: 1 unless set")
		policies = fs.String("policies", defaultPolicies, "comma-separated ycsb-lite policies to compare in every cell (any may end in +hedge)")
		scen     = fs.String("scenarios", "", "comma-separated cells to run (default all): "+strings.Join(cellNames(defaultCells()), ", ")+"; bimodal = all bimodal cells")
		ops      = fs.Int("ops", defaultOps, "operations per policy per run (100..10000000); -quick: 300 unless set")
		clients  = fs.Int("clients", defaultClients, "independent clients per run (1..64); 1 = ycsb-lite's single client (-clients not passed)")
		quick    = fs.Bool("quick", false, "smoke run: 300 ops and 200 records per run, one seed, unless -ops/-seeds are set")
		extra    = fs.String("extra", "", "more ycsb-lite flags, split on spaces (no quoting), e.g. \"-threads 16 -workload a\"")
		force    = fs.Bool("force", false, "re-run cells whose JSON report already exists (default: skip them, i.e. resume)")
		aggOnly  = fs.Bool("aggregate-only", false, "do not run anything: rebuild RESULTS.md and the plot from the JSON reports in -out")
		bin      = fs.String("ycsb-lite", "", "path of a ycsb-lite binary; empty = go build one from this module")
	)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ycsb-suite [flags]\n\nRuns ycsb-lite in compare mode over scenario cells x seeds and aggregates the reports into <out>/RESULTS.md and <out>/p99-by-cell.png.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, &usageError{fmt.Sprintf("unexpected argument %q: ycsb-suite takes flags only", fs.Arg(0))}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	c := &config{out: *out, quick: *quick, force: *force, aggregateOnly: *aggOnly, ycsbLite: *bin,
		command: strings.TrimSpace("ycsb-suite " + strings.Join(args, " "))}
	if strings.TrimSpace(c.out) == "" {
		return nil, badFlag("out", `""`, "a directory path")
	}
	if c.quick && !set["seeds"] {
		*seeds = 1
	}
	if *seeds < 1 || *seeds > 100 {
		return nil, badFlag("seeds", *seeds, "1..100")
	}
	for k := 1; k <= *seeds; k++ {
		c.seeds = append(c.seeds, int64(k))
	}
	var err error
	if c.policies, err = parsePolicies(*policies); err != nil {
		return nil, err
	}
	if c.cells, err = selectCells(defaultCells(), *scen); err != nil {
		return nil, &usageError{err.Error()}
	}
	c.ops = *ops
	if c.quick && !set["ops"] {
		c.ops = quickOps
	}
	if c.ops < 100 || c.ops > 10_000_000 {
		return nil, badFlag("ops", c.ops, "100..10000000")
	}
	if *clients < 1 || *clients > 64 {
		return nil, badFlag("clients", *clients, "1..64 (1 = a single client)")
	}
	c.clients = *clients
	for _, cl := range c.cells {
		if cl.MinClients > c.clients {
			return nil, &usageError{fmt.Sprintf("-clients %d: cell %s needs -clients >= %d (20/80 demand skew needs a heavy and a light group); raise -clients or leave the cell out with -scenarios",
				c.clients, cl.Name, cl.MinClients)}
		}
	}
	c.extra = strings.Fields(*extra)
	for _, a := range c.extra {
		name, ok := flagName(a)
		if !ok {
			continue
		}
		for _, own := range suiteOwned {
			if name == own {
				return nil, &usageError{fmt.Sprintf("-extra %q: -%s is set by the suite; use the suite's own flag (-policies, -seeds, -ops, -out, -scenarios, -clients)", *extra, name)}
			}
		}
		if name == "target" {
			for _, cl := range c.cells {
				if cl.Utilization {
					return nil, &usageError{fmt.Sprintf("-extra %q: -target conflicts with cell %s, which sets -utilization; select cells without it (steady, slow-node, gc-pauses) with -scenarios", *extra, cl.Name)}
				}
			}
		}
	}
	if c.ycsbLite != "" {
		if st, err := os.Stat(c.ycsbLite); err != nil || st.IsDir() {
			return nil, badFlag("ycsb-lite", c.ycsbLite, "the path of an existing ycsb-lite binary")
		}
	}
	return c, nil
}

// flagName returns the name of a -flag or -flag=value argument.
func flagName(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return "", false
	}
	n := strings.TrimLeft(a, "-")
	n, _, _ = strings.Cut(n, "=")
	return n, n != ""
}

// parsePolicies splits a comma-separated policy list; the names are
// checked against the ycsb-lite binary's own list (checkPolicies) once it is
// built.
func parsePolicies(list string) ([]string, error) {
	var ps []string
	seen := map[string]bool{}
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if seen[p] {
			return nil, badFlag("policies", list, "each policy once; "+p+" is repeated")
		}
		seen[p] = true
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, badFlag("policies", `"`+list+`"`, "at least one ycsb-lite policy (ycsb-lite -list-policies)")
	}
	return ps, nil
}

// checkPolicies checks the policies against `bin -list-policies`, ycsb-lite's
// own list, so the suite keeps no copy of it.
func checkPolicies(ctx context.Context, bin string, policies []string) error {
	out, err := exec.CommandContext(ctx, bin, "-list-policies").Output()
	if err != nil {
		return fmt.Errorf("%s -list-policies: %w", bin, err)
	}
	known := strings.Fields(string(out))
	for _, p := range policies {
		if base, _, _ := strings.Cut(p, "+hedge"); !slices.Contains(known, base) {
			return badFlag("policies", p, strings.Join(known, ", ")+", each optionally with +hedge or a +hedge variant (ycsb-lite -h)")
		}
	}
	return nil
}

// seedPath is the JSON report of one cell and seed.
func seedPath(out, cellName string, seed int64) string {
	return filepath.Join(out, cellName, fmt.Sprintf("seed%d.json", seed))
}

// cellPolicies are the policies cell cl compares: -policies, then those
// the cell adds (cell.Policies) that -policies does not name.
func (c *config) cellPolicies(cl cell) []string {
	pol := slices.Clip(c.policies)
	for _, p := range cl.Policies {
		if !slices.Contains(pol, p) {
			pol = append(pol, p)
		}
	}
	return pol
}

// allPolicies are the policies of every selected cell, each once.
func (c *config) allPolicies() []string {
	pol := slices.Clip(c.policies)
	for _, cl := range c.cells {
		for _, p := range c.cellPolicies(cl) {
			if !slices.Contains(pol, p) {
				pol = append(pol, p)
			}
		}
	}
	return pol
}

// cellArgs is the ycsb-lite command line of one cell and seed; jsonPath is
// where ycsb-lite writes its report.
func (c *config) cellArgs(cl cell, seed int64, jsonPath string) []string {
	a := []string{"-compare", strings.Join(c.cellPolicies(cl), ",")}
	a = append(a, cl.Args...)
	a = append(a, "-seed", strconv.FormatInt(seed, 10), "-ops", strconv.Itoa(c.ops))
	if c.clients > 1 {
		a = append(a, "-clients", strconv.Itoa(c.clients))
	}
	if c.quick {
		a = append(a, "-records", strconv.Itoa(quickRecords))
	}
	a = append(a, c.extra...)
	a = append(a, "-plots=false",
		"-out", filepath.Join(c.out, cl.Name, fmt.Sprintf("seed%d", seed)),
		"-json", jsonPath)
	return a
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the whole command; it returns the exit status: 0 ok, 1 a run or
// the aggregation failed, 2 bad flags, 130 interrupted.
func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "ycsb-suite:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	status := 0
	if !c.aggregateOnly {
		status = runCells(ctx, c, stdout, stderr)
		switch status {
		case 130:
			fmt.Fprintln(stderr, "ycsb-suite: interrupted; finished runs are kept, run the same command again to resume")
			return status
		case 2: // a policy ycsb-lite does not know: nothing ran
			return status
		}
	}
	if err := writeResults(c, stdout); err != nil {
		fmt.Fprintln(stderr, "ycsb-suite:", err)
		return 1
	}
	return status
}

// runCells builds ycsb-lite (unless given) and runs every missing cell and
// seed, seeds in the outer loop so a stopped suite has every cell at the
// first seeds.
func runCells(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fmt.Fprintln(stderr, "ycsb-suite: -out:", err)
		return 1
	}
	bin := c.ycsbLite
	if bin == "" {
		tmp, err := os.MkdirTemp("", "ycsb-suite-")
		if err != nil {
			fmt.Fprintln(stderr, "ycsb-suite:", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		bin = filepath.Join(tmp, "ycsb-lite")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/tailroute/tailroute/cmd/ycsb-lite")
		build.Stdout, build.Stderr = stderr, stderr
		fmt.Fprintln(stderr, "ycsb-suite: building ycsb-lite")
		if err := build.Run(); err != nil {
			fmt.Fprintf(stderr, "ycsb-suite: go build ycsb-lite: %v (run inside the tailroute module, or pass -ycsb-lite)\n", err)
			return 1
		}
	}
	if err := checkPolicies(ctx, bin, c.allPolicies()); err != nil {
		fmt.Fprintln(stderr, "ycsb-suite:", err)
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	total := len(c.cells) * len(c.seeds)
	pending := 0 // runs still to do (not skipped)
	for _, seed := range c.seeds {
		for _, cl := range c.cells {
			if _, err := os.Stat(seedPath(c.out, cl.Name, seed)); err != nil || c.force {
				pending++
			}
		}
	}
	n, failed := 0, 0
	start := time.Now()
	var eta etaEstimate
	for _, seed := range c.seeds {
		for _, cl := range c.cells {
			n++
			path := seedPath(c.out, cl.Name, seed)
			if _, err := os.Stat(path); err == nil && !c.force {
				fmt.Fprintf(stderr, "[%d/%d] %s seed %d: %s exists, skipped (-force re-runs)\n", n, total, cl.Name, seed, path)
				continue
			}
			fmt.Fprintf(stderr, "[%d/%d] %s seed %d: running (log %s)\n", n, total, cl.Name, seed, strings.TrimSuffix(path, ".json")+".log")
			t0 := time.Now()
			err := runOne(ctx, c, bin, cl, seed, path)
			if ctx.Err() != nil {
				return 130
			}
			pending--
			eta.add(time.Since(t0))
			if err != nil {
				failed++
				fmt.Fprintf(stderr, "[%d/%d] %s seed %d: FAILED: %v\n", n, total, cl.Name, seed, err)
				continue
			}
			fmt.Fprintf(stderr, "[%d/%d] %s seed %d: %.0fs (suite %.0fs%s)\n", n, total, cl.Name, seed,
				time.Since(t0).Seconds(), time.Since(start).Seconds(), eta.left(pending))
		}
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "ycsb-suite: %d of %d runs failed; see <cell>/seed<k>.log under %s\n", failed, total, c.out)
		return 1
	}
	return 0
}

// etaEstimate estimates the time the suite still needs from the runs done
// so far: their mean duration times the runs left.
type etaEstimate struct {
	runs int
	sum  time.Duration
}

func (e *etaEstimate) add(d time.Duration) { e.runs, e.sum = e.runs+1, e.sum+d }

// left is ", ETA <duration>" for pending runs left, or "" when nothing is
// known or left.
func (e *etaEstimate) left(pending int) string {
	if e.runs == 0 || pending <= 0 {
		return ""
	}
	d := e.sum / time.Duration(e.runs) * time.Duration(pending)
	return ", ETA " + d.Round(time.Second).String() + " for " + strconv.Itoa(pending) + " more"
}

// runOne runs ycsb-lite for one cell and seed. Its table and messages go
// to <cell>/seed<k>.log, its command line to <cell>/seed<k>.cmd; the JSON
// report is written to a temporary name and renamed on success, so an
// interrupted or failed run is re-run on resume.
func runOne(ctx context.Context, c *config, bin string, cl cell, seed int64, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".partial"
	args := c.cellArgs(cl, seed, tmp)
	base := strings.TrimSuffix(path, ".json")
	if err := os.WriteFile(base+".cmd", []byte("ycsb-lite "+strings.Join(args, " ")+"\n"), 0o644); err != nil {
		return err
	}
	logf, err := os.Create(base + ".log")
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// On Ctrl-C let ycsb-lite stop its run cleanly rather than kill it.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("ycsb-lite %s: %v (log %s)", strings.Join(args, " "), err, base+".log")
	}
	return os.Rename(tmp, path)
}
