package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tailroute/tailroute/internal/report"
)

// policyAgg is one policy in one cell, aggregated over the seeds that have
// it. Latencies are in µs; every figure is the median over seeds.
type policyAgg struct {
	Policy string
	Seeds  int     // seeds with a result for this policy
	P50    float64 // median over seeds of the run's p50
	P99    float64
	P999   float64
	// SlowShare is the median over seeds of the share (0..1) of operations
	// slower than the reports' SlowMs (report.PolicyResult.SlowOps): unlike
	// p99 it does not jump when about 1 % of operations are caught in
	// stalls (gc-pauses).
	SlowShare  float64
	Throughput float64 // ops/s
	MaxShare   float64 // largest share of requests one node coordinated (0..1): load spread
	Errors     float64
	P99Min     float64 // spread of p99 over seeds
	P99Max     float64
	// VsPeer is P99 / the best peer's P99, for tailroute policies; NaN otherwise.
	VsPeer float64
	// VsOracle is P99 / the oracle's P99; NaN without an oracle.
	VsOracle float64
	// FaultShare is the fault node's share of attempts while the fault
	// lasted and RecoveryMs the time until it got its fair share back
	// (report.FaultStats; fault cells only, NaN otherwise or when it did not
	// recover within the run).
	FaultShare, RecoveryMs float64
}

// cellAgg is one cell of the suite, aggregated.
type cellAgg struct {
	Name     string
	Header   string  // scenario line from the first report (cluster, threads, target...)
	SlowMs   float64 // the first report's SlowMs (ycsb-lite -slow); 0 when it has none
	Seeds    []int64 // seeds with a report
	Policies []policyAgg
	BestPeer string   // best non-tailroute, non-oracle policy by median p99; "" if none
	Missing  []string // missing seeds and policies, human-readable
	Commands []string // ycsb-lite command lines, one per seed found
	Oldest   time.Time
	Newest   time.Time
}

// isTailroute reports whether p is one of the product's variants.
func isTailroute(p string) bool { return strings.HasPrefix(p, "tailroute") }

// isOracle reports whether p is the oracle (hedged or not).
func isOracle(p string) bool { return strings.TrimSuffix(p, "+hedge") == "oracle" }

// isPeer reports whether p competes with tailroute: neither tailroute nor
// the oracle.
func isPeer(p string) bool { return !isTailroute(p) && !isOracle(p) }

// median of xs (mean of the two middle values for an even count); NaN if
// empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func maxShare(r report.PolicyResult) float64 {
	m := 0.0
	for _, n := range r.Nodes {
		m = max(m, n.Share)
	}
	return m
}

// aggregateCell reads <out>/<name>/seed<k>.json for the given seeds and
// aggregates the policies: those in want first (in that order), then any
// other the reports hold. A missing seed file or a policy absent from a
// report is listed in Missing, not an error; an unreadable or invalid
// report is an error. It returns nil, nil when no seed file exists.
func aggregateCell(out, name string, seeds []int64, want []string) (*cellAgg, error) {
	ca := &cellAgg{Name: name}
	type sample struct{ p50, p99, p999, slow, tput, share, errs, fshare, rec []float64 }
	by := map[string]*sample{}
	order := append([]string(nil), want...)
	known := map[string]bool{}
	for _, p := range want {
		known[p] = true
	}
	var missingSeeds []string
	perPolicySeeds := map[string]int{}
	for _, seed := range seeds {
		path := seedPath(out, name, seed)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			missingSeeds = append(missingSeeds, fmt.Sprint(seed))
			continue
		}
		if err != nil {
			return nil, err
		}
		var r report.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: not a ycsb-lite JSON report: %v", path, err)
		}
		ca.Seeds = append(ca.Seeds, seed)
		if st, err := os.Stat(path); err == nil {
			if ca.Oldest.IsZero() || st.ModTime().Before(ca.Oldest) {
				ca.Oldest = st.ModTime()
			}
			if st.ModTime().After(ca.Newest) {
				ca.Newest = st.ModTime()
			}
		}
		if ca.Header == "" {
			ca.Header, ca.SlowMs = header(&r), r.SlowMs
		}
		cmd := r.Command
		if b, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".cmd"); err == nil {
			cmd = strings.TrimSpace(string(b))
		}
		if cmd != "" {
			ca.Commands = append(ca.Commands, cmd)
		}
		for _, res := range r.Results {
			if res.Interrupted {
				continue
			}
			if !known[res.Policy] {
				known[res.Policy] = true
				order = append(order, res.Policy)
			}
			s := by[res.Policy]
			if s == nil {
				s = &sample{}
				by[res.Policy] = s
			}
			perPolicySeeds[res.Policy]++
			l := res.Latency
			s.p50 = append(s.p50, float64(l.P50Us))
			s.p99 = append(s.p99, float64(l.P99Us))
			s.p999 = append(s.p999, float64(l.P999Us))
			if res.Operations > 0 {
				s.slow = append(s.slow, float64(res.SlowOps)/float64(res.Operations))
			}
			s.tput = append(s.tput, res.Throughput)
			s.share = append(s.share, maxShare(res))
			s.errs = append(s.errs, float64(res.Errors))
			if f := res.Fault; f != nil {
				s.fshare = append(s.fshare, f.ShareDuringFault)
				if f.Ended && f.RecoveryMs >= 0 {
					s.rec = append(s.rec, f.RecoveryMs)
				}
			}
		}
	}
	if len(ca.Seeds) == 0 {
		return nil, nil
	}
	if len(missingSeeds) > 0 {
		ca.Missing = append(ca.Missing, "seed "+strings.Join(missingSeeds, ", ")+": no report")
	}
	for _, p := range order {
		s := by[p]
		if s == nil {
			ca.Missing = append(ca.Missing, p+": in no report")
			continue
		}
		if n := perPolicySeeds[p]; n < len(ca.Seeds) {
			ca.Missing = append(ca.Missing, fmt.Sprintf("%s: in %d of %d reports", p, n, len(ca.Seeds)))
		}
		pa := policyAgg{Policy: p, Seeds: perPolicySeeds[p],
			P50: median(s.p50), P99: median(s.p99), P999: median(s.p999), SlowShare: median(s.slow),
			Throughput: median(s.tput), MaxShare: median(s.share), Errors: median(s.errs),
			P99Min: s.p99[0], P99Max: s.p99[0], VsPeer: math.NaN(), VsOracle: math.NaN(),
			FaultShare: median(s.fshare), RecoveryMs: median(s.rec)}
		for _, v := range s.p99 {
			pa.P99Min, pa.P99Max = min(pa.P99Min, v), max(pa.P99Max, v)
		}
		ca.Policies = append(ca.Policies, pa)
	}
	ca.ratios()
	return ca, nil
}

// ratios picks the best peer and fills VsPeer (tailroute policies) and
// VsOracle (all but the oracle).
func (ca *cellAgg) ratios() {
	best, oracle := -1, -1
	for i, p := range ca.Policies {
		if isPeer(p.Policy) && (best < 0 || p.P99 < ca.Policies[best].P99) {
			best = i
		}
		if p.Policy == "oracle" {
			oracle = i
		}
	}
	if best >= 0 {
		ca.BestPeer = ca.Policies[best].Policy
	}
	for i := range ca.Policies {
		p := &ca.Policies[i]
		if best >= 0 && isTailroute(p.Policy) {
			p.VsPeer = ratio(p.P99, ca.Policies[best].P99)
		}
		if oracle >= 0 && i != oracle {
			p.VsOracle = ratio(p.P99, ca.Policies[oracle].P99)
		}
	}
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

// policy returns the aggregate of p in the cell, or nil.
func (ca *cellAgg) policy(p string) *policyAgg {
	for i := range ca.Policies {
		if ca.Policies[i].Policy == p {
			return &ca.Policies[i]
		}
	}
	return nil
}

// header describes a run's setup in one line, as ycsb-lite's table does.
func header(r *report.Report) string {
	parts := []string{"scenario " + r.Scenario, "workload " + r.Workload, r.Cluster, fmt.Sprintf("%d threads", r.Threads)}
	if r.Clients > 1 {
		c := fmt.Sprintf("%d clients", r.Clients)
		if r.DemandSkew != "" {
			c += " (demand skew " + r.DemandSkew + ")"
		}
		parts = append(parts, c)
	}
	t := "unthrottled"
	if r.Target > 0 {
		t = fmt.Sprintf("target %.0f ops/s", r.Target)
		if r.Utilization > 0 {
			t += fmt.Sprintf(" (utilization %.2f)", r.Utilization)
		}
	}
	parts = append(parts, t, fmt.Sprintf("%d ops per policy", r.Operations))
	return strings.Join(parts, " · ")
}

// aggregate reads every selected cell of c; cells without any report are
// returned in notRun.
func aggregate(c *config) (cells []*cellAgg, notRun []string, err error) {
	for _, cl := range c.cells {
		ca, err := aggregateCell(c.out, cl.Name, c.seeds, c.policies)
		if err != nil {
			return nil, nil, err
		}
		if ca == nil {
			notRun = append(notRun, cl.Name)
			continue
		}
		cells = append(cells, ca)
	}
	return cells, notRun, nil
}
