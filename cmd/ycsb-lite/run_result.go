// The report of one policy's run phase: latency, per-node load, fault
// statistics and the policies' own statistics.

package main

import (
	"sort"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/report"
	"github.com/tailroute/tailroute/internal/ycsb"
	"github.com/tailroute/tailroute/sim"
)

// policyRun is one policy's finished run phase, as resultOf reports it.
type policyRun struct {
	name       string
	cl         *sim.Cluster // nil against external hosts
	clients    []*client
	run        *clientRuns
	res        ycsb.Result
	m          *ycsb.Measurements
	startWin   map[string]int      // each node's served-window count when the run started
	hedgeStart []tailroute.Hedging // each client's hedger when the run started (hedged policies)
	runStart   time.Time
	env        *scenarioEnv
	extra      []ycsb.Result // workload-shift results
}

// resultOf builds the report of a run phase.
func (r *runner) resultOf(p policyRun) *report.PolicyResult {
	o := r.o
	name, cl, clients, run, res, m, startWin, runStart, env := p.name, p.cl, p.clients, p.run, p.res, p.m, p.startWin, p.runStart, p.env
	pr := &report.PolicyResult{
		Policy: name, Operations: res.Operations, Throughput: res.Throughput, Run: res,
		Errors: res.Summary.All.Latency.Errors, Series: m.Series(), Interrupted: res.Interrupted,
		OperationsAsked: max(run.Total(), 0),
	}
	pr.Truncated = res.TimedOut && !res.Interrupted && (run.Total() <= 0 || res.Operations < run.Total())
	pr.Latency = res.Summary.All.Latency
	if res.Summary.All.Intended != nil {
		pr.Latency = *res.Summary.All.Intended
	}
	combined := m.Combined(m.Intended())
	pr.Percentiles = report.Percentiles(combined)
	pr.SlowOps = ycsb.CountAbove(combined, o.slow.Microseconds())
	counts := map[string]int64{}
	for _, c := range clients {
		for h, n := range c.counter.snapshot() {
			counts[h] += n
		}
	}
	hostSet := map[string]bool{}
	for h := range counts {
		hostSet[h] = true
	}
	if cl != nil {
		for _, n := range cl.Nodes() {
			hostSet[n.IP()] = true
		}
	}
	var hs []string
	for h := range hostSet {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		nl := report.NodeLoad{Host: h, Requests: counts[h]}
		if cl != nil {
			if n := cl.Node(h); n != nil {
				win := n.Stats().Windows
				from, to := startWin[h], len(win)-1 // drop the window still filling
				if from < to {
					nl.Windows = append([]uint64(nil), win[from:to]...)
				}
			}
		}
		pr.Nodes = append(pr.Nodes, nl)
	}
	pr.FillShares()
	pr.FillBusiest()
	pr.Extra = p.extra
	pr.ClientOps = run.clientOps()
	for _, c := range clients {
		for k, v := range c.db.errs.snapshot() {
			if pr.ErrorsByKind == nil {
				pr.ErrorsByKind = map[string]int64{}
			}
			pr.ErrorsByKind[k] += v
		}
	}
	if node, fStart, fEnd := env.fault.get(); node != "" && cl != nil {
		wins := map[string][]uint64{}
		for _, nl := range pr.Nodes {
			wins[nl.Host] = nil // every node counts toward the fair share
		}
		for _, c := range clients {
			c.attempts.merge(wins)
		}
		pr.Fault = faultStats(node, fStart, fEnd, runStart, wins)
	}
	if end := hedgingOf(clients); end != nil {
		pr.HedgeStats = report.HedgeStatsOf(p.hedgeStart, end)
	}
	if len(clients) == 1 {
		if st := clients[0].inst.stats; st != nil {
			pr.PolicyStats = report.JSONView(st())
		}
	} else if clients[0].inst.stats != nil {
		all := make([]any, len(clients))
		for i, c := range clients {
			all[i] = c.inst.stats()
		}
		pr.PolicyStats = report.JSONView(all)
	}
	return pr
}

// hedgingOf reads every client's hedger; nil for an unhedged policy.
func hedgingOf(clients []*client) []tailroute.Hedging {
	if clients[0].inst.hedging == nil {
		return nil
	}
	hs := make([]tailroute.Hedging, len(clients))
	for i, c := range clients {
		hs[i] = c.inst.hedging()
	}
	return hs
}
