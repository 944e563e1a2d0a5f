package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tailroute/tailroute/sim"
)

// scenarioParams are the knobs the scenarios read (all have flags).
type scenarioParams struct {
	node        string        // IP of the node slow-node / node-down / error-node / flapping / recovering act on; "" = last node
	slowdown    float64       // slow-node: service time multiplier (5)
	fluctuation time.Duration // bimodal: T, how often each node re-draws its speed (C3 §6)
	fluctD      float64       // bimodal: D, slow speed is mu/D (3)
	pauseEvery  time.Duration // gc-pauses: each node pauses once per this period
	pauseFor    time.Duration // gc-pauses: pause length
	downAt      float64       // node-down: fraction of the run when the node stops
	upAt        float64       // node-down: fraction when it restarts (>= 1 = never)
	shiftAt     float64       // workload-shift: fraction when the update-heavy workload joins
	errorRate   float64       // error-node: fraction of the node's requests that fail (0.5)
	errorKind   string        // error-node: sim.ServiceModel.InjectedError (overloaded)
	faultUntil  float64       // error-node, recovering: fraction of the run when the fault ends; -1 = the scenario's default
	flapEvery   time.Duration // flapping: period of the stop/restart cycle (2s)
}

// scenarioEnv is what a running scenario acts on.
type scenarioEnv struct {
	cluster  *sim.Cluster
	params   scenarioParams
	progress func() float64 // 0..1 through the run phase
	// startShift launches the extra workload of workload-shift; it runs
	// until ctx ends.
	startShift func(ctx context.Context)
	logf       func(format string, args ...any)
	// fault is filled by the fault scenarios (error-node, recovering) for
	// the report's FaultStats.
	fault faultRecord
}

type scenarioSpec struct {
	name string
	help string
	// start applies the scenario when the run phase begins and returns a
	// function that stops whatever it started (waits for its goroutines).
	start func(ctx context.Context, env *scenarioEnv) (stop func(), err error)
}

var scenarios = map[string]scenarioSpec{}

func scenarioNames() []string {
	var n []string
	for k := range scenarios {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func lookupScenario(name string) (scenarioSpec, error) {
	s, ok := scenarios[name]
	if !ok {
		return scenarioSpec{}, fmt.Errorf("unknown scenario %q; allowed: %s", name, strings.Join(scenarioNames(), ", "))
	}
	return s, nil
}

// targetNode is the node a single-node scenario acts on.
func (e *scenarioEnv) targetNode() (*sim.Node, error) {
	nodes := e.cluster.Nodes()
	if e.params.node == "" {
		return nodes[len(nodes)-1], nil
	}
	if n := e.cluster.Node(e.params.node); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("-scenario-node %q is not a node of the cluster; allowed: %s", e.params.node, strings.Join(e.cluster.Hosts(), ", "))
}

// background runs fn in a goroutine and returns a stop func that cancels
// and waits for it.
func background(ctx context.Context, fn func(ctx context.Context)) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); fn(ctx) }()
	return func() { cancel(); wg.Wait() }
}

// staggeredPauses pauses each of nodes for -pause-for once every
// -pause-every, one node every -pause-every / len(nodes), until stopped.
func staggeredPauses(ctx context.Context, env *scenarioEnv, nodes []*sim.Node) func() {
	step := env.params.pauseEvery / time.Duration(len(nodes))
	return background(ctx, func(ctx context.Context) {
		t := time.NewTicker(step)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				nodes[i%len(nodes)].Pause(env.params.pauseFor)
			}
		}
	})
}

// atProgress polls progress and calls fn once it reaches frac (never if frac >= 1).
func atProgress(ctx context.Context, env *scenarioEnv, frac float64, fn func()) bool {
	if frac >= 1 {
		return false
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for env.progress() < frac {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	fn()
	return true
}

func init() {
	scenarios["steady"] = scenarioSpec{
		name: "steady", help: "every node healthy, default service model",
		start: func(context.Context, *scenarioEnv) (func(), error) { return func() {}, nil },
	}
	scenarios["slow-node"] = scenarioSpec{
		name: "slow-node", help: "one node serves -slowdown (5) times slower for the whole run",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			n, err := env.targetNode()
			if err != nil {
				return nil, err
			}
			m := n.Model()
			m.Slowdown = env.params.slowdown
			if err := n.SetModel(m); err != nil {
				return nil, fmt.Errorf("slow-node: %w", err)
			}
			env.logf("slow-node: %s serves %gx slower", n.IP(), env.params.slowdown)
			return func() {}, nil
		},
	}
	scenarios["gc-pauses"] = scenarioSpec{
		name: "gc-pauses", help: "each node stops the world for -pause-for once every -pause-every, staggered across nodes",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			nodes := env.cluster.Nodes()
			env.logf("gc-pauses: every node pauses %v every %v (one node every %v)", env.params.pauseFor, env.params.pauseEvery,
				env.params.pauseEvery/time.Duration(len(nodes)))
			return staggeredPauses(ctx, env, nodes), nil
		},
	}
	scenarios["bimodal"] = scenarioSpec{
		name: "bimodal", help: "C3 §6: every -fluctuation (T) each node independently serves at mu or mu/D (-fluctuation-d, 3)",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			for _, n := range env.cluster.Nodes() {
				m := n.Model()
				m.FluctuationInterval = env.params.fluctuation
				m.FluctuationD = env.params.fluctD
				if err := n.SetModel(m); err != nil {
					return nil, fmt.Errorf("bimodal: %w", err)
				}
			}
			env.logf("bimodal: T=%v D=%g on every node", env.params.fluctuation, env.params.fluctD)
			return func() {}, nil
		},
	}
	scenarios["node-down"] = scenarioSpec{
		name: "node-down", help: "one node goes down at -down-at of the run and comes back at -up-at",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			n, err := env.targetNode()
			if err != nil {
				return nil, err
			}
			return background(ctx, func(ctx context.Context) {
				if !atProgress(ctx, env, env.params.downAt, func() {
					if err := n.Stop(); err != nil {
						env.logf("node-down: stopping %s: %v", n.IP(), err)
						return
					}
					env.logf("node-down: %s stopped", n.IP())
				}) {
					return
				}
				atProgress(ctx, env, env.params.upAt, func() {
					if err := n.Restart(); err != nil {
						env.logf("node-down: restarting %s: %v", n.IP(), err)
						return
					}
					env.logf("node-down: %s restarted", n.IP())
				})
			}), nil
		},
	}
	scenarios["workload-shift"] = scenarioSpec{
		name: "workload-shift", help: "C3 Figure 11: an update-heavy workload (-shift-workload, a) joins at -shift-at of the run",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			return background(ctx, func(ctx context.Context) {
				atProgress(ctx, env, env.params.shiftAt, func() {
					env.logf("workload-shift: update-heavy workload joins")
					env.startShift(ctx)
				})
			}), nil
		},
	}
}
