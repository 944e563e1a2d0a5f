package main

import (
	"fmt"
	"strings"
)

// cell is one scenario configuration of the suite: ycsb-lite runs it once
// per seed in compare mode with every policy.
type cell struct {
	Name string   // directory name under -out and the name -scenarios selects
	Args []string // ycsb-lite flags that make this cell (scenario and its knobs)
	// MinClients is the smallest -clients the cell can run with (0 = any):
	// demand skew 20/80 needs at least one heavy and one light client.
	MinClients int
	// Utilization marks cells that set -utilization (so -target may not be
	// passed through -extra).
	Utilization bool
	// Policies are compared in this cell beside -policies: the zone cells
	// add tailroute-rack, which runs only where the simulator has zones.
	Policies []string
}

// bimodalUtilizations and bimodalPeriods span the bimodal cells: C3 §6's
// fluctuating service rate at a moderate and a high load, with the
// fluctuation interval T from faster than a latency EWMA can follow to
// slower than the tracker's window.
var (
	bimodalUtilizations = []float64{0.45, 0.70}
	bimodalPeriods      = []string{"10ms", "100ms", "500ms"}
)

// defaultCells is the suite: steady, slow-node, gc-pauses, six bimodal
// cells (utilization 0.45 and 0.70 × T = 10, 100, 500 ms), demand-skew
// (bimodal at 0.70, 20 % of the clients make 80 % of the requests),
// node-down and workload-shift (both loaded), the fault cells
// error-node-50, error-node-100, two-slow, flapping and recovering, and
// the zone cells zones, zone-slow, zone-pause and zones-spread.
func defaultCells() []cell {
	cs := []cell{
		{Name: "steady", Args: []string{"-scenario", "steady"}},
		{Name: "slow-node", Args: []string{"-scenario", "slow-node"}},
		{Name: "gc-pauses", Args: []string{"-scenario", "gc-pauses"}},
	}
	for _, u := range bimodalUtilizations {
		for _, t := range bimodalPeriods {
			cs = append(cs, cell{
				Name: fmt.Sprintf("bimodal-u%02.0f-t%s", 100*u, t),
				// 64 threads: at 70 % utilisation 32 closed-loop threads
				// run short when a policy queues requests on slow nodes.
				Args:        []string{"-scenario", "bimodal", "-utilization", fmt.Sprintf("%.2f", u), "-fluctuation", t, "-threads", "64"},
				Utilization: true,
			})
		}
	}
	// At the default 1000 ops/s (20 % of the cluster's capacity) skew, a
	// lost node or a joining workload change nothing measurable, so these
	// cells run loaded: demand skew as in C3 Figure 15 (bimodal, 70 %,
	// T = 100 ms), node-down at 60 % (75 % on the four nodes left), the
	// workload shift on a 45 % base.
	cs = append(cs,
		cell{Name: "demand-skew", Args: []string{"-scenario", "bimodal", "-utilization", "0.70", "-fluctuation", "100ms", "-threads", "64", "-demand-skew", "20/80"},
			MinClients: 3, Utilization: true},
		cell{Name: "node-down", Args: []string{"-scenario", "node-down", "-utilization", "0.60", "-threads", "64"}, Utilization: true},
		cell{Name: "workload-shift", Args: []string{"-scenario", "workload-shift", "-utilization", "0.45", "-threads", "64"}, Utilization: true},
	)
	// Fault mixes: one node failing half or all of its requests
	// at once (all: with two retries, for the second half of the run only,
	// so the report shows how fast it gets its share back), two slow nodes,
	// a flapping node and one recovering from a 10x slowdown.
	cs = append(cs,
		cell{Name: "error-node-50", Args: []string{"-scenario", "error-node", "-error-rate", "0.5"}},
		cell{Name: "error-node-100", Args: []string{"-scenario", "error-node", "-error-rate", "1", "-retries", "2", "-fault-until", "0.5"}},
		cell{Name: "two-slow", Args: []string{"-scenario", "two-slow"}},
		cell{Name: "flapping", Args: []string{"-scenario", "flapping", "-retries", "2"}},
		cell{Name: "recovering", Args: []string{"-scenario", "recovering"}},
	)
	// Availability zones (issue 43): 6 nodes in 3 racks, one replica per
	// rack, the clients in rack1 (zones-spread: over the three); healthy,
	// the in-zone replicas 5x slow, pausing. Each adds tailroute-rack
	// (tailroute told its client's rack).
	for _, z := range []string{"zones", "zone-slow", "zone-pause", "zones-spread"} {
		cs = append(cs, cell{Name: z, Args: []string{"-scenario", z}, Policies: []string{"tailroute-rack"}})
	}
	return cs
}

// selectCells returns the cells named in list (comma-separated), in suite
// order. A name is a cell name or "bimodal" for every bimodal cell; ""
// selects all.
func selectCells(all []cell, list string) ([]cell, error) {
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		found := false
		for _, c := range all {
			if c.Name == n || (n == "bimodal" && strings.HasPrefix(c.Name, "bimodal-")) {
				want[c.Name] = true
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("-scenarios: unknown cell %q; allowed: bimodal (all bimodal cells), %s", n, strings.Join(cellNames(all), ", "))
		}
	}
	var out []cell
	for _, c := range all {
		if want[c.Name] {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-scenarios: %q selects no cell; allowed: %s", list, strings.Join(cellNames(all), ", "))
	}
	return out, nil
}

func cellNames(cs []cell) []string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return n
}
