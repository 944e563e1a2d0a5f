package main

import (
	"fmt"
	"time"

	"github.com/tailroute/tailroute/internal/vsim"
)

// cell is one configuration of a preset, run for every strategy and seed.
type cell struct {
	Name   string
	Config vsim.Config
}

// preset is a built-in set of cells with the strategies and seeds it is
// run with by default.
type preset struct {
	doc        string
	cells      func() []cell
	strategies string
	seeds      string
}

// paperStrategies are the C3 paper's §6 strategies, C3 on the product's
// signal (c3-polls), and the product's two ways of running (with and
// without its server signal) and with the paper's payload.
const paperStrategies = "tailroute,tailroute-nopoll,tailroute+payload,c3,c3-polls,lor,rr,oracle"

// presets by name.
var presets = map[string]preset{
	"fig14": {doc: "the C3 paper's Figure 14: utilization 70 % and 45 %, T = 10, 100, 500 ms, 150 and 300 clients (50 servers, D = 3, read repair 10 %, 600,000 requests, the first 2 s not measured)",
		cells: fig14, strategies: paperStrategies, seeds: "1-5"},
	"fig15": {doc: "the C3 paper's Figure 15: demand skew (20 % and 50 % of the clients make 80 % of the requests) at utilization 70 %, T = 10, 100, 500 ms, 150 and 300 clients",
		cells: fig15, strategies: paperStrategies, seeds: "1-5"},
	"scale": {doc: "1000 clients x 100 servers (RF 3, vnode ring, 1,200,000 requests (24 s: the index of dispersion needs the windows), the first second not measured) at utilization 50 % and 80 %: one slow server (5x), two slow servers, a 150 ms pause of each server every 2 s, a cascade (a 5x slow server and its ring neighbour, which slows 2x while more than 8 requests wait or run on it)",
		cells: scale, strategies: "tailroute,tailroute-nopoll,c3,token-aware,datastax,latencyaware,peakewma,oracle", seeds: "1-2"},
	"crossval": {doc: "the real-time suite's cells that both simulators run (5 servers, 4 clients, W = 4, 1/mu = 4 ms, 5000 requests at 1000/s): slow-node, two-slow, recovering, bimodal 70 % / 100 ms, gc-pauses",
		cells: crossval, strategies: "tailroute,tailroute-nopoll,tailroute-wn,tailroute-wn-nopoll,oracle", seeds: "1-12"},
	"ablation": {doc: "tailroute with each of its rules removed in turn (the strategies named -<rule>) on the crossval cells and on steady (utilization 20 %), error-node-50 (one server fails half of its requests), error-node-100 (one server fails all of its requests for the first half of the run), node-down (one server down from 2 s), stalls (each server stops for 1 s every 5 s, 10,000 requests), recovering-85 (utilization 85 %, one server 10x slow for the first 2.5 s of about 9 s: past what four servers serve, so the cluster needs the recovered one back), error-node-100-85 (error-node-100 at utilization 85 %, 40,000 requests)",
		cells: ablationCells, strategies: "tailroute," + vsim.AblationNames() + ",oracle", seeds: "1-12"},
	"zones": {doc: "availability zones (issue 43), ycsb-lite's zone scenarios: 6 servers in 3 racks of dc1, NetworkTopologyStrategy dc1:3 (one replica per rack), one way 50 us within a rack and 500 us between racks (+-20 % jitter), 4 clients in rack1, crossval's load (5000 requests at 1000/s, 8 threads per client): zones (healthy), zone-slow (the clients' rack's servers 5x slow), zone-pause (they stop 150 ms every 2 s, staggered), zones-spread (client c in rack (c mod 3)+1)",
		cells: zoneCells, strategies: "tailroute-rack,tailroute,rack-aware,oracle", seeds: "1-12"},
	"quick": {doc: "one small cell (10 servers, 20 clients, one 5x slow server, 20,000 requests): a smoke test in about a second",
		cells: func() []cell {
			return []cell{{"quick", vsim.Config{Servers: 10, Clients: 20, Requests: 20000, Slow: []vsim.Slow{{Server: 0, Factor: 5}}}}}
		}, strategies: "tailroute,tailroute-nopoll,c3,lor,rr,oracle", seeds: "1"},
}

// paper is the §6 setup: 50 servers x 4 workers, 1/mu = 4 ms, D = 3, read
// repair 10 %, 600,000 requests, completions in the first 2 s left out.
func paper(clients int, util float64, t time.Duration) vsim.Config {
	return vsim.Config{Servers: 50, Clients: clients, Workers: 4, MeanService: 4 * time.Millisecond,
		Utilization: util, FluctuationT: t, FluctuationD: 3, ReadRepair: 0.1, Requests: 600000,
		Warmup: 2 * time.Second}
}

func fig14() []cell {
	var out []cell
	for _, u := range []float64{0.70, 0.45} {
		for _, t := range []time.Duration{10, 100, 500} {
			for _, n := range []int{150, 300} {
				out = append(out, cell{fmt.Sprintf("u%02.0f-T%d-c%d", u*100, t, n), paper(n, u, t*time.Millisecond)})
			}
		}
	}
	return out
}

func fig15() []cell {
	var out []cell
	for _, skew := range []float64{0.2, 0.5} {
		for _, t := range []time.Duration{10, 100, 500} {
			for _, n := range []int{150, 300} {
				c := paper(n, 0.70, t*time.Millisecond)
				c.SkewClients, c.SkewDemand = skew, 0.8
				out = append(out, cell{fmt.Sprintf("skew%02.0f-T%d-c%d", skew*100, t, n), c})
			}
		}
	}
	return out
}

func scale() []cell {
	var out []cell
	for _, u := range []float64{0.5, 0.8} {
		base := func() vsim.Config {
			return vsim.Config{Servers: 100, Clients: 1000, Workers: 4, MeanService: 4 * time.Millisecond,
				Utilization: u, Placement: vsim.Ring, Requests: 1200000, Warmup: time.Second}
		}
		name := func(s string) string { return fmt.Sprintf("u%02.0f-%s", u*100, s) }
		c := base()
		c.Slow = []vsim.Slow{{Server: 0, Factor: 5}}
		out = append(out, cell{name("slow1"), c})
		c = base()
		c.Slow = []vsim.Slow{{Server: 0, Factor: 5}, {Server: 1, Factor: 5}}
		out = append(out, cell{name("slow2"), c})
		c = base()
		c.PauseEvery, c.PauseFor = 2*time.Second, 150*time.Millisecond
		out = append(out, cell{name("pauses"), c})
		c = base()
		c.Slow = []vsim.Slow{{Server: 0, Factor: 5}}
		c.Overload = []vsim.Overload{{Server: 1, Queue: 8, Factor: 2}}
		c.Placement = vsim.Uniform // server 1 shares two of server 0's three replica groups: its load lands there
		out = append(out, cell{name("cascade"), c})
	}
	return out
}

// crossval mirrors ycsb-lite's suite cells (5 nodes, 4 clients, 5000
// operations, 32 threads; see cmd/ycsb-lite's scenarios): the 1000
// operations per second the suite sends is utilization 1000 / (5 x 4 /
// 4 ms) = 20 %. What differs: ycsb-lite's workload B has 5 % updates (written to every
// replica), its threads pace their operations evenly (vsim's arrivals are
// Poisson), and it runs through a driver on a real-time simulator.
func crossval() []cell {
	base := func() vsim.Config {
		return vsim.Config{Servers: 5, Clients: 4, Workers: 4, MeanService: 4 * time.Millisecond,
			Utilization: 0.2, Requests: 5000, Placement: vsim.Ring, Threads: 8}
	}
	var out []cell
	c := base()
	c.Slow = []vsim.Slow{{Server: 4, Factor: 5}}
	out = append(out, cell{"slow-node", c})
	c = base()
	c.Slow = []vsim.Slow{{Server: 3, Factor: 5}, {Server: 4, Factor: 5}}
	out = append(out, cell{"two-slow", c})
	c = base()
	c.Slow = []vsim.Slow{{Server: 4, Factor: 10, Until: 2500 * time.Millisecond}} // half of the run
	out = append(out, cell{"recovering", c})
	c = base()
	// ycsb-lite's bimodal: mu or mu/D around 1/mu = 4 ms, i.e. 12 ms or
	// 12/D ms here, at 70 % of (mu + mu/D)/2
	c.MeanService, c.Utilization, c.FluctuationT, c.FluctuationD = 12*time.Millisecond, 0.7, 100*time.Millisecond, 3
	out = append(out, cell{"bimodal-70-100ms", c})
	c = base()
	c.PauseEvery, c.PauseFor = 2*time.Second, 150*time.Millisecond
	out = append(out, cell{"gc-pauses", c})
	return out
}

// ablationCells are crossval's cells and the suite's healthy and failure
// cells that the model runs (an attempt that fails is not retried here).
func ablationCells() []cell {
	c := crossval()
	base := c[0].Config
	base.Slow = nil
	steady, half, all, down, stalls, recover, allHigh := base, base, base, base, base, base, base
	half.Failing = []vsim.Failing{{Server: 4, Rate: 0.5}}
	all.Failing = []vsim.Failing{{Server: 4, Rate: 1, Until: 2500 * time.Millisecond}} // half of the run, as the suite's
	down.Utilization = 0.6
	down.Down = []vsim.Down{{Server: 4, At: 2 * time.Second}}
	stalls.PauseEvery, stalls.PauseFor = 5*time.Second, time.Second
	stalls.Requests = 10000
	recover.Utilization, recover.Requests = 0.85, 40000
	recover.Slow = []vsim.Slow{{Server: 4, Factor: 10, Until: 2500 * time.Millisecond}}
	allHigh.Utilization, allHigh.Requests = 0.85, 40000
	allHigh.Failing = all.Failing
	return append(c, cell{"steady", steady}, cell{"error-node-50", half}, cell{"error-node-100", all}, cell{"node-down", down}, cell{"stalls", stalls}, cell{"recovering-85", recover}, cell{"error-node-100-85", allHigh})
}

// zoneCells mirror ycsb-lite's zone scenarios (cmd/ycsb-lite/zones.go):
// its embedded cluster places node i in rack (i mod 3)+1 with evenly
// spaced tokens (Uniform here), so with NetworkTopologyStrategy dc1:3 each
// replica group is one server of each rack, and servers 0 and 3 are the
// clients' rack (rack1). The load is crossval's: 1000 requests per second
// is utilization 1000 / (6 x 4 / 4 ms) = 1/6 here.
func zoneCells() []cell {
	base := func() vsim.Config {
		return vsim.Config{Servers: 6, Clients: 4, Workers: 4, MeanService: 4 * time.Millisecond,
			Utilization: 1.0 / 6, Requests: 5000, Placement: vsim.Uniform, Threads: 8, RF: 3, Racks: 3}
	}
	local := []int{0, 3} // rack1's servers
	healthy, slow, pause, spread := base(), base(), base(), base()
	for _, s := range local {
		slow.Slow = append(slow.Slow, vsim.Slow{Server: s, Factor: 5})
	}
	pause.PauseEvery, pause.PauseFor, pause.PauseServers = 2*time.Second, 150*time.Millisecond, local
	spread.ClientRacks = []int{1, 2, 3}
	return []cell{{"zones", healthy}, {"zone-slow", slow}, {"zone-pause", pause}, {"zones-spread", spread}}
}
