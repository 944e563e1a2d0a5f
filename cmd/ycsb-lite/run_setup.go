// Client setup and the load phase of one policy's run.

package main

import (
	"context"
	"sync"
	"time"

	"github.com/tailroute/tailroute/internal/ycsb"
	"github.com/tailroute/tailroute/sim"
)

// loadPhase inserts the workload's records through db.
func (r *runner) loadPhase(ctx context.Context, name string, w *ycsb.Workload, db *cqlDB) error {
	o := r.o
	lr, err := ycsb.Run(ctx, w, db, ycsb.RunOptions{Phase: ycsb.PhaseLoad, Threads: o.cfg.Threads, Target: -1, Seed: o.seed,
		Measurements: ycsb.NewMeasurements(min(o.cfg.Threads, 16), false)})
	if err != nil {
		return err
	}
	r.writeSummary(name, "load", lr)
	if lr.Summary.All.Latency.Errors > 0 {
		r.logf("[%s] load: %d of %d inserts failed", name, lr.Summary.All.Latency.Errors, lr.Operations)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// shiftResults collects the workload-shift runs of a scenario.
type shiftResults struct {
	mu  sync.Mutex
	res []ycsb.Result
}

func (s *shiftResults) add(r ycsb.Result) {
	s.mu.Lock()
	s.res = append(s.res, r)
	s.mu.Unlock()
}

func (s *shiftResults) get() []ycsb.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.res
}

// newScenarioEnv is what a scenario sees of one policy's run phase: the
// embedded cluster, the run's progress and the workload-shift starter.
func (r *runner) newScenarioEnv(name string, cl *sim.Cluster, run *clientRuns, db *cqlDB, runStart time.Time, shift *shiftResults) *scenarioEnv {
	o := r.o
	return &scenarioEnv{
		cluster: cl, params: o.params, logf: func(f string, a ...any) { r.logf("["+name+"] "+f, a...) },
		progress: func() float64 {
			if t := run.Total(); t > 0 {
				return float64(run.Done()) / float64(t)
			}
			if o.cfg.MaxExecutionTime > 0 {
				return float64(time.Since(runStart)) / float64(o.cfg.MaxExecutionTime)
			}
			return 0
		},
		startShift: func(ctx context.Context) {
			sw, err := ycsb.NewWorkload(o.shift)
			if err != nil {
				r.logf("[%s] workload-shift: %v", name, err)
				return
			}
			sres, err := ycsb.Run(ctx, sw, db, ycsb.RunOptions{Phase: ycsb.PhaseRun, Seed: o.seed + 1, Operations: -1})
			if err != nil {
				r.logf("[%s] workload-shift: %v", name, err)
			}
			shift.add(sres)
		},
	}
}
