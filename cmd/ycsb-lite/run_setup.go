// Client setup and the load phase of one policy's run.

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tailroute/tailroute/internal/ycsb"
	"github.com/tailroute/tailroute/sim"
)

// openClients opens one session, policy instance and host counter per client
// (C3 §6: independent clients sharing the cluster). closeAll closes the
// sessions and releases the policies, last client first.
func (r *runner) openClients(spec policySpec, name string, cl *sim.Cluster, hosts []string, port int, fields []string) (clients []*client, closeAll func(), err error) {
	o := r.o
	if o.driver == driverV2 {
		return r.openClientsV2(name, cl, hosts, port, fields)
	}
	var cleanup []func()
	closeAll = func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	clients = make([]*client, o.clients)
	for c := range clients {
		cfg := r.clusterConfig(hosts, port)
		cfg.Keyspace = o.keyspace
		inst, err := spec.install(policyEnv{cluster: cl, seed: o.seed + int64(c), rf: o.rf, clients: o.clients, client: c, localDC: o.localDC, tailTerm: o.tailTerm}, cfg)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		if inst.release != nil {
			cleanup = append(cleanup, inst.release)
		}
		counter := newHostCounter(cfg.QueryObserver)
		attempts := &attemptWindows{next: counter}
		cfg.QueryObserver = attempts
		sess, err := cfg.CreateSession()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connecting to %v with policy %s: %w", hosts, name, err)
		}
		cleanup = append(cleanup, sess.Close)
		db := newCQLDB(sess, o.keyspace, o.cfg.Table, fields, o.consistency)
		db.feedback = inst.feedback
		clients[c] = &client{inst: inst, counter: counter, db: db, attempts: attempts}
	}
	return clients, closeAll, nil
}

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
