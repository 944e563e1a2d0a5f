package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/report"
	"github.com/tailroute/tailroute/internal/ycsb"
	"github.com/tailroute/tailroute/sim"
)

// runner carries the command's I/O.
type runner struct {
	o      *options
	stdout io.Writer
	stderr io.Writer
	// createdKeyspace: the keyspace did not exist before this run created
	// it (with -hosts; what -drop-keyspace drops).
	createdKeyspace bool
}

func (r *runner) logf(format string, args ...any) {
	if !r.o.verbose && !r.o.progress && !r.o.statusLines {
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
	cfg.ConnectTimeout = r.o.connectTimeout
	cfg.ProtoVersion = r.o.protoVersion
	if r.o.username != "" {
		cfg.Authenticator = gocql.PasswordAuthenticator{Username: r.o.username, Password: r.o.password}
	}
	if r.o.tls != nil {
		cfg.SslOpts = &gocql.SslOptions{Config: r.o.tls, EnableHostVerification: !r.o.tls.InsecureSkipVerify}
	}
	cfg.ReconnectInterval = time.Second
	cfg.NumConns = 2
	if r.o.retries > 0 {
		cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: r.o.retries}
	}
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
		SlowMs:  float64(o.slow) / float64(time.Millisecond),
		Clients: o.clients, DemandSkew: o.demandSkew, Utilization: o.utilization,
	}
	if o.hosts == nil {
		rep.Cluster = fmt.Sprintf("embedded sim, %d nodes, %s, W=%d, 1/mu=%v, %s", o.nodes, o.replicationNote(), o.workers, o.serviceTime, signalNote(o))
	} else {
		rep.Cluster = fmt.Sprintf("hosts %v, %s", o.hosts, o.replicationNote())
	}
	defer r.dropKeyspace()
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
			DCs: o.dcs, Racks: o.zones.racks, Network: o.zones.network(),
			Model: sim.ServiceModel{Workers: o.workers, MeanService: o.serviceTime},
		})
		if err != nil {
			return nil, fmt.Errorf("starting the embedded cluster: %w", err)
		}
		defer cl.Close()
		defer placeClients(cl, o)()
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
		if _, kerr := s.KeyspaceMetadata(o.keyspace); kerr != nil && o.hosts != nil {
			r.createdKeyspace = true // so -drop-keyspace may drop it at the end
		}
		err = createSchema(s, o.keyspace, o.cfg.Table, o.replicationMap(), fields)
		s.Close()
		if err != nil {
			return nil, err
		}
	}

	clients, closeClients, err := r.openClients(spec, cl, hosts, port, fields)
	if err != nil {
		return nil, err
	}
	defer closeClients()
	db := clients[0].db

	if load {
		if err := r.loadPhase(ctx, name, w, db); err != nil {
			return nil, err
		}
	}
	if !o.run {
		return nil, nil
	}

	if err := r.warmUp(ctx, name, w, clients); err != nil {
		return nil, err
	}

	// Run phase: every client's runner records into the same measurements,
	// so the histograms come out merged.
	m := ycsb.NewMeasurements(min(o.cfg.Threads, 16), o.cfg.Target > 0)
	run, err := newClientRuns(w, clients, o, m)
	if err != nil {
		return nil, err
	}
	st := r.newStatus(name, run, m)
	startWin := map[string]int{}
	if cl != nil {
		for _, n := range cl.Nodes() {
			startWin[n.IP()] = len(n.Stats().Windows)
		}
	}
	shift := &shiftResults{}
	hedgeStart := hedgingOf(clients) // the load phase and the warm-up are not the run's
	var traffic0 []sim.Traffic
	if cl != nil {
		traffic0 = cl.Traffic()
	}
	runStart := time.Now()
	env := r.newScenarioEnv(name, cl, run, db, runStart, shift)
	m.EnableSeries(runStart, o.series)
	ilog, stopLog := r.startIntervalLog(ctx, name, m, runStart)
	for _, c := range clients {
		c.attempts.start = runStart
		c.attempts.on.Store(true)
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
	stopLog()
	stopScenario()
	for _, c := range clients {
		c.counter.on.Store(false)
		c.attempts.on.Store(false)
	}
	if o.progress {
		fmt.Fprint(r.stderr, "\r\033[K")
	}
	st.done(res, run.Done())
	if runErr != nil {
		return nil, runErr
	}
	r.writeSummary(name, "run", res)
	r.writeHdr(name, m, ilog)

	_ = idx
	pr := r.resultOf(policyRun{name: name, cl: cl, clients: clients, run: run, res: res, m: m,
		startWin: startWin, hedgeStart: hedgeStart, runStart: runStart, env: env, extra: shift.get()})
	if cl != nil {
		pr.Zones = zoneStats(traffic0, cl.Traffic())
	}
	return pr, nil
}

// warnf prints a problem that does not stop the run.
func (r *runner) warnf(format string, args ...any) {
	fmt.Fprintf(r.stderr, "ycsb-lite: "+format+"\n", args...)
}

// signalNote says which server load signal the policies had, and the
// tail term when -tail-term set one.
func signalNote(o *options) string {
	const poll = "tailroute and tailroute-norate poll system_views.thread_pools within the default budget, +poll at a fixed interval, -nopoll and +payload do not poll"
	note := "payload feedback off except for +payload policies, " + poll + ", other policies no server signal"
	if o.payloadFeedback {
		note = "payload feedback on (-payload-feedback; read by +payload policies), " + poll
	}
	if o.tailTerm != nil {
		note += fmt.Sprintf(", tailroute tail term k = %g (-tail-term)", *o.tailTerm)
	}
	return note
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

// warmUp runs the workload for -warmup operations or time before the
// measured run phase, with the run's clients, threads and target and its
// measurements dropped; its keys come from another seed than the run's.
func (r *runner) warmUp(ctx context.Context, name string, w *ycsb.Workload, clients []*client) error {
	o := r.o
	if o.warmupOps == 0 && o.warmupFor == 0 {
		return nil
	}
	wo := *o
	wo.seed = o.seed ^ 0x5741524d // "WARM"
	wo.cfg.OperationCount, wo.cfg.MaxExecutionTime = o.warmupOps, o.warmupFor
	m := ycsb.NewMeasurements(min(o.cfg.Threads, 16), o.cfg.Target > 0)
	run, err := newClientRuns(w, clients, &wo, m)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	res, err := run.Run(ctx)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	r.logf("[%s] warm-up: %d operations in %.1fs (not measured)", name, res.Operations, res.Elapsed.Seconds())
	return nil
}

// dropKeyspace drops the keyspace at the end of the runs when
// -drop-keyspace is given and this run created it (with -hosts).
func (r *runner) dropKeyspace() {
	o := r.o
	if !o.dropKeyspace || !r.createdKeyspace {
		return
	}
	s, err := r.clusterConfig(o.hosts, o.port).CreateSession()
	if err == nil {
		err = s.Query("DROP KEYSPACE IF EXISTS " + o.keyspace).Exec()
		s.Close()
	}
	if err != nil {
		r.warnf("-drop-keyspace: dropping %s: %v", o.keyspace, err)
		return
	}
	r.logf("dropped keyspace %s (-drop-keyspace)", o.keyspace)
}
