package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/report"
	"github.com/tailroute/tailroute/sim"
	"github.com/tailroute/tailroute/ycsb"
)

// runner carries the command's I/O.
type runner struct {
	o      *options
	stdout io.Writer
	stderr io.Writer
}

func (r *runner) logf(format string, args ...any) {
	if !r.o.verbose && !r.o.progress {
		return
	}
	if r.o.progress {
		format = "\r\033[K" + format // clear the progress line first
	}
	fmt.Fprintf(r.stderr, format+"\n", args...)
}

func (r *runner) clusterConfig(hosts []string, port int) *gocql.ClusterConfig {
	cfg := gocql.NewCluster(hosts...)
	cfg.Port = port
	cfg.Consistency = r.o.consistency
	cfg.Timeout = r.o.timeout
	cfg.ConnectTimeout = 5 * time.Second
	cfg.ReconnectInterval = time.Second
	cfg.NumConns = 2
	cfg.Logger = log.New(io.Discard, "", 0)
	if r.o.verbose {
		cfg.Logger = log.New(r.stderr, "", log.LstdFlags)
	}
	return cfg
}

// compare runs every policy back to back and returns the report (partial
// when ctx is cancelled).
func (r *runner) compare(ctx context.Context) (*report.Report, error) {
	o := r.o
	rep := &report.Report{
		Command: o.command, Scenario: o.scenario.name, Workload: o.workload, Threads: o.cfg.Threads,
		Target: o.cfg.Target, Operations: o.cfg.OperationCount, Seed: o.seed, Intended: o.cfg.Target > 0,
		Clients: o.clients, DemandSkew: o.demandSkew, Utilization: o.utilization,
	}
	if o.hosts == nil {
		rep.Cluster = fmt.Sprintf("embedded sim, %d nodes, RF %d, W=%d, 1/mu=%v, %s", o.nodes, o.rf, o.workers, o.serviceTime, signalNote(o))
	} else {
		rep.Cluster = fmt.Sprintf("hosts %v, RF %d", o.hosts, o.rf)
	}
	loaded := false
	for i, name := range o.policies {
		if ctx.Err() != nil {
			break
		}
		// With given hosts the data is loaded once; an embedded cluster is
		// fresh (same seed) for every policy.
		load := o.load && (o.hosts == nil || !loaded)
		res, err := r.runPolicy(ctx, name, load, i)
		loaded = loaded || load
		if err != nil {
			if ctx.Err() != nil && res != nil {
				rep.Results = append(rep.Results, *res)
				break
			}
			return rep, fmt.Errorf("policy %s: %w", name, err)
		}
		if res != nil {
			rep.Results = append(rep.Results, *res)
		}
	}
	return rep, nil
}

// runPolicy starts a fresh embedded cluster (or uses the given hosts),
// loads, runs the scenario and measures one policy.
func (r *runner) runPolicy(ctx context.Context, name string, load bool, idx int) (*report.PolicyResult, error) {
	o := r.o
	spec, err := lookupPolicy(name)
	if err != nil {
		return nil, err
	}
	hosts, port := o.hosts, o.port
	var cl *sim.Cluster
	if o.hosts == nil {
		cl, err = sim.Start(ctx, sim.Config{
			Nodes: o.nodes, Feedback: o.payloadFeedback || spec.payload, Seed: o.seed,
			Model: sim.ServiceModel{Workers: o.workers, MeanService: o.serviceTime},
		})
		if err != nil {
			return nil, fmt.Errorf("starting the embedded cluster: %w", err)
		}
		defer cl.Close()
		hosts, port = cl.Hosts(), cl.Port()
	}
	w, err := ycsb.NewWorkload(o.cfg)
	if err != nil {
		return nil, err
	}
	fields := w.FieldNames()

	if load || o.hosts == nil {
		s, err := r.clusterConfig(hosts, port).CreateSession()
		if err != nil {
			return nil, fmt.Errorf("connecting to %v: %w", hosts, err)
		}
		err = createSchema(s, o.keyspace, o.cfg.Table, o.rf, fields)
		s.Close()
		if err != nil {
			return nil, err
		}
	}

	// One session, policy instance and host counter per client (C3 §6:
	// independent clients sharing the cluster).
	clients := make([]*client, o.clients)
	for c := range clients {
		cfg := r.clusterConfig(hosts, port)
		cfg.Keyspace = o.keyspace
		inst, err := spec.install(policyEnv{cluster: cl, seed: o.seed + int64(c), rf: o.rf, clients: o.clients, client: c}, cfg)
		if err != nil {
			return nil, err
		}
		if inst.release != nil {
			defer inst.release()
		}
		counter := newHostCounter(cfg.QueryObserver)
		cfg.QueryObserver = counter
		sess, err := cfg.CreateSession()
		if err != nil {
			return nil, fmt.Errorf("connecting to %v with policy %s: %w", hosts, name, err)
		}
		defer sess.Close()
		db := newCQLDB(sess, o.keyspace, o.cfg.Table, fields, o.consistency)
		db.feedback = inst.feedback
		clients[c] = &client{inst: inst, counter: counter, db: db}
	}
	db := clients[0].db

	if load {
		lr, err := ycsb.Run(ctx, w, db, ycsb.RunOptions{Phase: ycsb.PhaseLoad, Threads: o.cfg.Threads, Target: -1, Seed: o.seed,
			Measurements: ycsb.NewMeasurements(min(o.cfg.Threads, 16), false)})
		if err != nil {
			return nil, err
		}
		r.writeSummary(name, "load", lr)
		if lr.Summary.All.Latency.Errors > 0 {
			r.logf("[%s] load: %d of %d inserts failed", name, lr.Summary.All.Latency.Errors, lr.Operations)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if !o.run {
		return nil, nil
	}

	// Run phase: every client's runner records into the same measurements,
	// so the histograms come out merged.
	m := ycsb.NewMeasurements(min(o.cfg.Threads, 16), o.cfg.Target > 0)
	run, err := newClientRuns(w, clients, o, m)
	if err != nil {
		return nil, err
	}
	var lastDone int64
	var lastAt time.Duration
	if o.progress {
		run.progress = func(done int64, elapsed time.Duration) {
			p99 := m.Combined(m.Intended()).ValueAtQuantile(99)
			rate := float64(done-lastDone) / (elapsed - lastAt).Seconds()
			lastDone, lastAt = done, elapsed
			fmt.Fprintf(r.stderr, "\r\033[K[%s] %5.1fs %d ops, now %.0f ops/s, p99 so far %.2f ms", name, elapsed.Seconds(), done,
				rate, float64(p99)/1000)
		}
	}
	startWin := map[string]int{}
	if cl != nil {
		for _, n := range cl.Nodes() {
			startWin[n.IP()] = len(n.Stats().Windows)
		}
	}
	var (
		shiftMu  sync.Mutex
		shiftRes []ycsb.Result
	)
	runStart := time.Now()
	env := &scenarioEnv{
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
			shiftMu.Lock()
			shiftRes = append(shiftRes, sres)
			shiftMu.Unlock()
		},
	}
	m.EnableSeries(runStart, o.series)
	for _, c := range clients {
		c.counter.on.Store(true)
	}
	stopScenario := func() {}
	if cl != nil {
		stopScenario, err = o.scenario.start(ctx, env)
		if err != nil {
			return nil, err
		}
	}
	res, runErr := run.Run(ctx)
	stopScenario()
	for _, c := range clients {
		c.counter.on.Store(false)
	}
	if o.progress {
		fmt.Fprint(r.stderr, "\r\033[K")
	}
	if runErr != nil {
		return nil, runErr
	}
	r.writeSummary(name, "run", res)

	pr := &report.PolicyResult{
		Policy: name, Operations: res.Operations, Throughput: res.Throughput, Run: res,
		Errors: res.Summary.All.Latency.Errors, Series: m.Series(), Interrupted: res.Interrupted,
	}
	pr.Latency = res.Summary.All.Latency
	if res.Summary.All.Intended != nil {
		pr.Latency = *res.Summary.All.Intended
	}
	pr.Percentiles = report.Percentiles(m.Combined(m.Intended()))
	if res.TimedOut {
		pr.Note = fmt.Sprintf("stopped at the %v time limit after %d of %d operations", o.cfg.MaxExecutionTime, res.Operations, run.Total())
	}
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
	shiftMu.Lock()
	pr.Extra = shiftRes
	shiftMu.Unlock()
	pr.ClientOps = run.clientOps()
	if len(clients) == 1 {
		if st := clients[0].inst.stats; st != nil {
			pr.PolicyStats = st()
		}
	} else if clients[0].inst.stats != nil {
		all := make([]any, len(clients))
		for i, c := range clients {
			all[i] = c.inst.stats()
		}
		pr.PolicyStats = all
	}
	_ = idx
	return pr, nil
}

// signalNote says which server load signal the policies had.
func signalNote(o *options) string {
	if o.payloadFeedback {
		return "payload feedback on (-payload-feedback; read by +payload policies), +poll = polled system_views.thread_pools"
	}
	return "payload feedback off except for +payload policies, +poll = polled system_views.thread_pools, other policies no server signal"
}

// writeSummary writes YCSB's summary lines to <out>/<policy>-<phase>.txt,
// and to stdout when a single policy runs.
func (r *runner) writeSummary(policy, phase string, res ycsb.Result) {
	if err := os.MkdirAll(r.o.out, 0o755); err == nil {
		if f, err := os.Create(filepath.Join(r.o.out, policy+"-"+phase+".txt")); err == nil {
			_ = ycsb.WriteSummary(f, res.Elapsed, res.Operations, res.Summary)
			f.Close()
		}
	}
	if len(r.o.policies) == 1 {
		fmt.Fprintf(r.stdout, "# %s phase, policy %s\n", phase, policy)
		_ = ycsb.WriteSummary(r.stdout, res.Elapsed, res.Operations, res.Summary)
		fmt.Fprintln(r.stdout)
	}
}
