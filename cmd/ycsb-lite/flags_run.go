package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tailroute/tailroute/internal/ycsb"
)

// policyFlags: which policies run. -compare is the one way to choose them;
// -policy X (= -compare X) and -hedge (= +hedge on each) are kept for
// existing command lines.
func policyFlags(fs *flagDefs) func(o *options) error {
	compare := fs.String("compare", strings.Join(defaultCompare, ","), "comma-separated policies to run back to back, each on a fresh embedded cluster with the same seed")
	list := fs.Bool("list-policies", false, "print the policy names, one per line, and exit")
	policy := fs.String("policy", "", "alias of -compare with one policy")
	hedge := fs.Bool("hedge", false, "alias: add "+hedgeSuffix+" to every policy of -compare")
	driver := fs.String("driver", driverV1, "Cassandra Go driver of the client sessions: v1 (github.com/gocql/gocql; every policy) or v2 (github.com/apache/cassandra-gocql-driver/v2; policies "+strings.Join(policyNamesV2(), ", ")+", each also "+hedgeSuffix+")")
	tailTerm := fs.Float64("tail-term", -1, "k of the tail term in tailroute's C3 score, Psi_s + k/mu_s (tailroute.WithTailTerm), for every tailroute policy; 0 = the paper's score; -1 = the policy's default (2)")
	payloadFb := fs.Bool("payload-feedback", false, "embedded cluster: the simulator attaches queue length and service time to every response (custom payload, which no real Cassandra sends) and tailroute policies run as their "+payloadSuffix+" variant; off: only "+payloadSuffix+" policies get it")
	return func(o *options) error {
		if *list {
			o.listPolicies = true
			return nil
		}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		switch {
		case set["policy"] && set["compare"]:
			return &flagError{"-policy and -compare are exclusive: use -compare X for one policy or -compare X,Y for several"}
		case set["policy"]:
			o.policies = []string{strings.TrimSpace(*policy)}
		default:
			for _, p := range strings.Split(*compare, ",") {
				o.policies = append(o.policies, strings.TrimSpace(p))
			}
		}
		if *hedge {
			for i, p := range o.policies {
				if !strings.HasSuffix(p, hedgeSuffix) {
					o.policies[i] = p + hedgeSuffix
				}
			}
		}
		if *payloadFb {
			o.payloadFeedback = true
			for i, p := range o.policies {
				o.policies[i] = withPayloadSignal(p)
			}
		}
		seen := map[string]bool{}
		for _, p := range o.policies {
			if _, err := lookupPolicy(p); err != nil {
				return &flagError{"-compare: " + err.Error()}
			}
			if seen[p] {
				return &flagError{fmt.Sprintf("-compare lists %q twice", p)}
			}
			seen[p] = true
		}
		if *tailTerm != -1 {
			if !(*tailTerm >= 0 && *tailTerm <= 100) {
				return badFlag("tail-term", *tailTerm, "0..100, or -1 for the policy's default")
			}
			o.tailTerm = tailTerm
		}
		o.driver = strings.TrimSpace(*driver)
		return checkDriver(o.driver, o.policies)
	}
}

// workloadFlags: the YCSB workload and its rate. Runs after the scenario,
// cluster and client checks (-utilization needs their values).
func (c *cli) workloadFlags(fs *flagDefs) func(o *options) error {
	workload := fs.String("workload", "b", "YCSB workload: built-in a..f (YCSB's workload with operationcount "+fmt.Sprint(builtinOps)+") or a .properties file (as -P)")
	var pfiles listFlag
	fs.Var(&pfiles, "P", "workload `file` as YCSB's -P (repeatable, later files override earlier; workloads/workloada..f are built in); instead of -workload")
	props := propFlags{}
	fs.Var(props, "p", "workload property `key=value` (repeatable), as YCSB's -p")
	records := fs.Int64("records", 0, "recordcount (0 = the workload's)")
	ops := fs.Int64("ops", builtinOps, "operationcount per policy (0 = the workload's)")
	threads := fs.Int("threads", 32, "client threads (threadcount)")
	target := fs.Float64("target", 1000, "target ops/s over all threads; 0 = as fast as possible")
	util := fs.Float64("utilization", 0, "embedded cluster: set the target to this fraction (0 < U < 1) of the cluster's average service capacity")
	duration := &autoDuration{d: -1}
	fs.Var(duration, "duration", "max run time per policy (maxexecutiontime): a `duration`; auto = 2 x ops/target + 5s when a target is set, else none; 0 = none")
	warmup := &warmupFlag{}
	fs.Var(warmup, "warmup", "before each policy's measured run: run the workload for this many `operations or a duration` (e.g. 2000 or 10s), same threads and target, not measured; 0 = none")
	phase := fs.String("phase", "both", "load, run or both")
	seed := fs.Int64("seed", 1, "seed for the workload and the simulated cluster")
	return func(o *options) error {
		set := c.set
		o.seed = *seed
		switch *phase {
		case "both":
			o.load, o.run = true, true
		case "load":
			o.load = true
		case "run":
			o.run = true
		default:
			return badFlag("phase", *phase, "load, run, both")
		}
		base, err := o.workloadFiles(pfiles, *workload, set["workload"])
		if err != nil {
			return err
		}
		defaults, explicit := ycsb.Properties{}, ycsb.Properties{}
		put := func(flagName, key, value string) {
			if set[flagName] {
				explicit[key] = value
			} else {
				defaults[key] = value
			}
		}
		if *ops < 0 {
			return badFlag("ops", *ops, ">= 0 (0 = the workload's operationcount)")
		}
		if *records < 0 {
			return badFlag("records", *records, ">= 0 (0 = the workload's recordcount)")
		}
		if *ops > 0 {
			put("ops", "operationcount", fmt.Sprint(*ops))
		}
		if *records > 0 {
			put("records", "recordcount", fmt.Sprint(*records))
		}
		if *threads < 1 || *threads > 10000 {
			return badFlag("threads", *threads, "1..10000")
		}
		put("threads", "threadcount", fmt.Sprint(*threads))
		if !(*target >= 0) || math.IsInf(*target, 0) {
			return badFlag("target", *target, ">= 0 ops/s (0 = as fast as possible)")
		}
		if *util != 0 {
			switch {
			case !(*util > 0 && *util < 1):
				return badFlag("utilization", *util, "0 < U < 1 (0 = off)")
			case set["target"]:
				return &flagError{"-utilization and -target are exclusive: -utilization derives the target from the cluster's capacity"}
			case o.hosts != nil:
				return &flagError{"-utilization needs the embedded simulated cluster (its capacity is known); with -hosts use -target"}
			}
			o.utilization = *util
			capacity := float64(o.nodes*o.workers) / o.serviceTime.Seconds()
			if o.scenario.name == "bimodal" {
				// C3 §6: as if every node served at (mu + mu/D)/2.
				capacity *= (1 + 1/o.params.fluctD) / 2
			}
			*target = o.utilization * capacity
			explicit["target"] = fmt.Sprint(*target) // the derived rate wins over -p target=..., as an explicit -target would
		} else {
			put("target", "target", fmt.Sprint(*target))
		}
		// YCSB's order (Client.java): explicit flags, then -p, then the
		// workload files in order, then the built-in defaults.
		merged := defaults.Merge(base).Merge(ycsb.Properties(props)).Merge(explicit)
		o.cfg, err = ycsb.ParseConfig(merged)
		if err != nil {
			return &flagError{fmt.Sprintf("-workload %s: %v", o.workload, err)}
		}
		o.props = merged
		if o.cfg.FieldNamePrefix != "field" && o.hosts == nil {
			return &flagError{"fieldnameprefix: the simulated cluster's usertable has columns field0..fieldN; allowed: field"}
		}
		o.warmupOps, o.warmupFor = warmup.ops, warmup.d
		if err := o.setDuration(duration.d); err != nil {
			return err
		}
		return o.shiftWorkload()
	}
}

// builtinOps is the operation count of a run with no operationcount
// anywhere, and of the built-in -workload a..f.
const builtinOps = 10000

// workloadFiles loads the workload file(s): -P as YCSB, or -workload.
func (o *options) workloadFiles(pfiles []string, workload string, workloadSet bool) (ycsb.Properties, error) {
	if len(pfiles) == 0 {
		p, err := ycsb.LoadProperties(workload)
		if err != nil {
			return nil, &flagError{"-workload: " + err.Error()}
		}
		if _, berr := ycsb.BuiltinProperties(workload); berr == nil {
			// -workload a..f is this tool's preset: YCSB's mix, run for
			// builtinOps operations (-P workloads/workloada is YCSB's file as is).
			p = p.Merge(ycsb.Properties{"operationcount": fmt.Sprint(builtinOps)})
		}
		o.workload = workload
		return p, nil
	}
	if workloadSet {
		return nil, &flagError{"-P and -workload are exclusive: -P takes workload files as YCSB does, -workload a built-in name or one file"}
	}
	base := ycsb.Properties{}
	for _, f := range pfiles {
		p, err := loadWorkloadFile(f)
		if err != nil {
			return nil, &flagError{"-P: " + err.Error()}
		}
		base = base.Merge(p)
	}
	o.workload = strings.Join(pfiles, ",")
	return base, nil
}

// setDuration applies -duration d (-1 = auto: twice the nominal run time
// plus 5 s when a target and an operation count are set).
func (o *options) setDuration(d time.Duration) error {
	switch {
	case d > 0:
		o.cfg.MaxExecutionTime = d
	case d == 0:
		o.cfg.MaxExecutionTime = 0
	case d == -1:
		if o.cfg.MaxExecutionTime == 0 && o.cfg.Target > 0 && o.cfg.OperationCount > 0 {
			nominal := time.Duration(float64(o.cfg.OperationCount) / o.cfg.Target * float64(time.Second))
			o.cfg.MaxExecutionTime = 2*nominal + 5*time.Second
		}
	default:
		return badFlag("duration", d, "a duration >= 0, or auto")
	}
	return nil
}

// loadWorkloadFile reads a -P file; YCSB's own workloads/workloada..f,
// when not found as files, are the identical built-ins.
func loadWorkloadFile(name string) (ycsb.Properties, error) {
	if _, err := os.Stat(name); err != nil {
		if p, berr := ycsb.BuiltinProperties(filepath.Base(name)); berr == nil {
			return p, nil
		}
	}
	return ycsb.LoadProperties(name)
}

// scenarioFlags: what happens to the embedded cluster during the run.
func (c *cli) scenarioFlags(fs *flagDefs) func(o *options) error {
	scenario := fs.String("scenario", "slow-node", "what happens to the embedded cluster (list below)")
	node := fs.String("scenario-node", "", "IP of the node slow-node/node-down act on (default the last node)")
	slowdown := fs.Float64("slowdown", 5, "slow-node: service time multiplier")
	fluct := fs.Duration("fluctuation", 500*time.Millisecond, "bimodal: fluctuation interval T")
	fluctD := fs.Float64("fluctuation-d", 3, "bimodal: D, a slow node serves at mu/D")
	pauseEvery := fs.Duration("pause-every", 2*time.Second, "gc-pauses: each node pauses once per this period")
	pauseFor := fs.Duration("pause-for", 150*time.Millisecond, "gc-pauses: pause length")
	downAt, upAt, shiftAt := newFraction("1/3"), newFraction("2/3"), newFraction("0.5")
	fs.Var(downAt, "down-at", "node-down: `fraction` of the run (0.25 or 1/4) when the node stops")
	fs.Var(upAt, "up-at", "node-down: `fraction` of the run when it restarts (1 = never)")
	fs.Var(shiftAt, "shift-at", "workload-shift: `fraction` of the run when the update-heavy workload joins")
	shiftWl := fs.String("shift-workload", "a", "workload-shift: the joining workload (built-in or file)")
	shiftTarget := fs.Float64("shift-target", 0, "workload-shift: target ops/s of the joining workload (0 = half of -target)")
	shiftThr := fs.Int("shift-threads", 0, "workload-shift: threads of the joining workload (0 = half of -threads)")
	errRate := fs.Float64("error-rate", 0.5, "error-node: fraction of the node's requests that fail (0..1)")
	errKind := fs.String("error-kind", "overloaded", "error-node: overloaded | unavailable | read_timeout (after service)")
	faultUntil := fs.Float64("fault-until", -1, "error-node, recovering: fraction of the run when the fault ends (-1 = error-node: never, recovering: 0.5)")
	flapEvery := fs.Duration("flap-every", 2*time.Second, "flapping: the node is down for the first half of every such period")
	return func(o *options) error {
		sc, err := lookupScenario(*scenario)
		if err != nil {
			return &flagError{"-scenario: " + err.Error()}
		}
		if o.hosts != nil && sc.name != "steady" {
			if c.set["scenario"] {
				return &flagError{fmt.Sprintf("scenario %s acts on the embedded simulated cluster; with -hosts use -scenario steady", sc.name)}
			}
			sc = scenarios["steady"]
		}
		o.scenario = sc
		o.params = scenarioParams{node: *node, slowdown: *slowdown, fluctuation: *fluct, fluctD: *fluctD,
			pauseEvery: *pauseEvery, pauseFor: *pauseFor, downAt: downAt.v, upAt: upAt.v, shiftAt: shiftAt.v,
			errorRate: *errRate, errorKind: *errKind, faultUntil: *faultUntil, flapEvery: *flapEvery}
		o.shiftName, o.shiftTarget, o.shiftThreads = *shiftWl, *shiftTarget, *shiftThr
		if !(*errRate >= 0 && *errRate <= 1) {
			return badFlag("error-rate", *errRate, "a fraction in [0, 1]")
		}
		switch *errKind {
		case "overloaded", "unavailable", "read_timeout":
		default:
			return badFlag("error-kind", *errKind, "overloaded, unavailable, read_timeout")
		}
		if *faultUntil != -1 && !(*faultUntil > 0 && *faultUntil <= 1) {
			return badFlag("fault-until", *faultUntil, "a fraction of the run in (0, 1], or -1 for the scenario's default")
		}
		if *flapEvery < 20*time.Millisecond || *flapEvery > time.Hour {
			return badFlag("flap-every", *flapEvery, "20ms..1h")
		}
		if *node != "" && net.ParseIP(*node) == nil {
			return badFlag("scenario-node", *node, "the IP of one node, e.g. 127.0.0.3")
		}
		if !(*slowdown >= 1 && *slowdown <= 1000) {
			return badFlag("slowdown", *slowdown, "1..1000")
		}
		if *fluct <= 0 {
			return badFlag("fluctuation", *fluct, "a duration > 0")
		}
		if !(*fluctD >= 1 && *fluctD <= 1000) {
			return badFlag("fluctuation-d", *fluctD, "1..1000")
		}
		if *pauseEvery <= 0 || *pauseFor <= 0 || *pauseFor >= *pauseEvery {
			return badFlag("pause-for", fmt.Sprintf("%v every %v", *pauseFor, *pauseEvery), "0 < -pause-for < -pause-every")
		}
		for _, f := range []struct {
			name string
			v    *fraction
		}{{"down-at", downAt}, {"up-at", upAt}, {"shift-at", shiftAt}} {
			if !(f.v.v >= 0 && f.v.v <= 1) {
				return badFlag(f.name, f.v.text, "a fraction of the run in [0, 1]")
			}
		}
		if upAt.v <= downAt.v && upAt.v < 1 {
			return badFlag("up-at", upAt.text, fmt.Sprintf("greater than -down-at (%s), or 1 for never", downAt.text))
		}
		return nil
	}
}

// shiftWorkload builds workload-shift's joining workload from the main one.
func (o *options) shiftWorkload() error {
	if o.scenario.name != "workload-shift" {
		return nil
	}
	sp, err := ycsb.LoadProperties(o.shiftName)
	if err != nil {
		return &flagError{"-shift-workload: " + err.Error()}
	}
	st := o.shiftTarget
	if st == 0 {
		st = o.cfg.Target / 2
	}
	sthr := o.shiftThreads
	if sthr == 0 {
		sthr = max(1, o.cfg.Threads/2)
	}
	if st < 0 || sthr < 1 || sthr > 10000 {
		return badFlag("shift-target/-shift-threads", fmt.Sprintf("%v/%v", st, sthr), "target >= 0, threads 1..10000")
	}
	sp = sp.Merge(ycsb.Properties{"recordcount": fmt.Sprint(o.cfg.RecordCount), "operationcount": "0",
		"target": fmt.Sprint(st), "threadcount": fmt.Sprint(sthr), "table": o.cfg.Table,
		"fieldcount": fmt.Sprint(o.cfg.FieldCount)})
	if o.shift, err = ycsb.ParseConfig(sp); err != nil {
		return &flagError{fmt.Sprintf("-shift-workload %s: %v", o.shiftName, err)}
	}
	return nil
}

// clientFlags: how many independent clients share the cluster.
func clientFlags(fs *flagDefs) func(o *options) error {
	clients := fs.Int("clients", 1, "independent clients (1..64): each its own session and policy instance; threads, target and ops are split among them")
	skew := fs.String("demand-skew", "", "P/Q: P % of the clients issue Q % of the requests (C3 §6, e.g. 20/80); empty = even split")
	return func(o *options) error {
		if *clients < 1 || *clients > 64 {
			return badFlag("clients", *clients, "1..64")
		}
		o.clients = *clients
		var err error
		if o.weights, err = demandWeights(*skew, o.clients); err != nil {
			return err
		}
		o.demandSkew = strings.TrimSpace(*skew)
		return nil
	}
}

// warmupFlag is -warmup: a number of operations or a duration.
type warmupFlag struct {
	ops int64
	d   time.Duration
}

func (f *warmupFlag) String() string {
	switch {
	case f == nil:
		return ""
	case f.d > 0:
		return f.d.String()
	}
	return strconv.FormatInt(f.ops, 10)
}

func (f *warmupFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > 1<<40 {
			return errors.New("want operations >= 0 or a duration such as 10s")
		}
		f.ops, f.d = n, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 24*time.Hour {
		return errors.New("want operations >= 0 or a duration in 0..24h such as 10s")
	}
	f.ops, f.d = 0, d
	return nil
}
