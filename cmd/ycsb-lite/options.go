package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/ycsb"
)

// defaultCompare is what runs with no flags at all.
var defaultCompare = []string{"tailroute", "token-aware", "tailroute-p2c"}

// options is the validated command line.
type options struct {
	listPolicies bool     // -list-policies: print the policy names and exit
	hosts        []string // empty = embedded simulated cluster
	port         int
	nodes, rf    int
	workload     string // name or file as given
	cfg          ycsb.Config
	policies     []string
	scenario     scenarioSpec
	params       scenarioParams
	seed         int64
	out          string
	plots        bool
	jsonPath     string
	consistency  gocql.Consistency
	timeout      time.Duration
	keyspace     string
	load, run    bool
	serviceTime  time.Duration
	workers      int
	shift        ycsb.Config // workload-shift's joining workload
	shiftName    string
	progress     bool
	verbose      bool
	series       time.Duration
	command      string
	// clients is the number of independent clients sharing the cluster
	// (-clients, default 1); weights[i] is client i's share of the threads,
	// target rate and operations (sums to 1).
	clients    int
	demandSkew string // -demand-skew as given; "" = even split
	weights    []float64
	// utilization, when > 0, derived the target rate from the embedded
	// cluster's average service capacity (-utilization).
	utilization float64

	// payloadFeedback (-payload-feedback): the simulator attaches q_s and
	// 1/mu_s to every response and policies with a +payload variant run as it.
	payloadFeedback bool
}

// propFlags collects repeated -p key=value.
type propFlags ycsb.Properties

func (p propFlags) String() string { return "" }
func (p propFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	p[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

// flagError is a bad command line (exit status 2).
type flagError struct{ msg string }

func (e *flagError) Error() string { return e.msg }

func badFlag(name string, value any, allowed string) error {
	return &flagError{fmt.Sprintf("-%s %v: allowed %s", name, value, allowed)}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// parseFlags parses and validates args. Precedence for workload settings:
// explicitly given flags > -p key=value > defaults of -ops/-target/-threads
// > the workload file.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("ycsb-lite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	props := propFlags{}
	var (
		hosts       = fs.String("hosts", "", "comma-separated CQL contact points; empty = start an embedded simulated cluster")
		port        = fs.Int("port", 9042, "CQL port of -hosts")
		nodes       = fs.Int("nodes", 5, "embedded cluster: number of nodes (1..64)")
		rf          = fs.Int("rf", 3, "replication factor of the keyspace")
		workload    = fs.String("workload", "b", "YCSB workload: built-in a..f or a .properties file")
		records     = fs.Int64("records", 0, "recordcount (0 = the workload's)")
		ops         = fs.Int64("ops", 10000, "operationcount per policy (0 = the workload's)")
		threads     = fs.Int("threads", 32, "client threads (threadcount)")
		target      = fs.Float64("target", 1000, "target ops/s over all threads; 0 = as fast as possible")
		duration    = fs.Duration("duration", -1, "max run time per policy (maxexecutiontime); -1 = 2x ops/target + 5s when a target is set, else none; 0 = none")
		policy      = fs.String("policy", "", "run one policy: "+strings.Join(policyNames(), ", "))
		hedge       = fs.Bool("hedge", false, "run every selected policy with adaptive budgeted hedging (same as naming it <policy>"+hedgeSuffix+")")
		compare     = fs.String("compare", "", "comma-separated policies to run back to back (default "+strings.Join(defaultCompare, ",")+")")
		scenario    = fs.String("scenario", "slow-node", "embedded cluster scenario: "+strings.Join(scenarioNames(), ", "))
		node        = fs.String("scenario-node", "", "IP of the node slow-node/node-down act on (default the last node)")
		slowdown    = fs.Float64("slowdown", 5, "slow-node: service time multiplier")
		fluct       = fs.Duration("fluctuation", 500*time.Millisecond, "bimodal: fluctuation interval T")
		fluctD      = fs.Float64("fluctuation-d", 3, "bimodal: D, a slow node serves at mu/D")
		pauseEvery  = fs.Duration("pause-every", 2*time.Second, "gc-pauses: each node pauses once per this period")
		pauseFor    = fs.Duration("pause-for", 150*time.Millisecond, "gc-pauses: pause length")
		downAt      = fs.Float64("down-at", 1.0/3, "node-down: fraction of the run when the node stops")
		upAt        = fs.Float64("up-at", 2.0/3, "node-down: fraction of the run when it restarts (1 = never)")
		shiftAt     = fs.Float64("shift-at", 0.5, "workload-shift: fraction of the run when the update-heavy workload joins")
		shiftWl     = fs.String("shift-workload", "a", "workload-shift: the joining workload (built-in or file)")
		shiftTarget = fs.Float64("shift-target", 0, "workload-shift: target ops/s of the joining workload (0 = half of -target)")
		shiftThr    = fs.Int("shift-threads", 0, "workload-shift: threads of the joining workload (0 = half of -threads)")
		svc         = fs.Duration("service-time", 4*time.Millisecond, "embedded cluster: mean service time 1/mu")
		workers     = fs.Int("workers", 4, "embedded cluster: requests served in parallel per node (W)")
		seed        = fs.Int64("seed", 1, "seed for the workload and the simulated cluster")
		out         = fs.String("out", "ycsb-out", "directory for the JSON report, YCSB summaries and plots")
		plots       = fs.Bool("plots", true, "write PNG and SVG plots into -out")
		jsonPath    = fs.String("json", "", "JSON report path (default <out>/report.json; - = stdout)")
		cl          = fs.String("consistency", "ONE", "CQL consistency level")
		timeout     = fs.Duration("timeout", 5*time.Second, "per-query client timeout")
		keyspace    = fs.String("keyspace", "ycsb", "keyspace")
		phase       = fs.String("phase", "both", "load, run or both")
		series      = fs.Duration("series-interval", 250*time.Millisecond, "latency-over-time bucket")
		verbose     = fs.Bool("v", false, "log scenario events and driver messages to stderr")
		clients     = fs.Int("clients", 1, "independent clients sharing the cluster (1..64): each its own session and policy instance; threads, target and ops are split among them")
		skew        = fs.String("demand-skew", "", "P/Q: P % of the clients issue Q % of the requests (C3 §6, e.g. 20/80); empty = even split")
		util        = fs.Float64("utilization", 0, "embedded cluster: set the target to this fraction (0 < U < 1) of the cluster's average service capacity; 0 = off")
		payloadFb   = fs.Bool("payload-feedback", false, "embedded cluster: the simulator attaches queue length and service time to every response (custom payload, which no real Cassandra sends) and tailroute policies run as their "+payloadSuffix+" variant; off: only "+payloadSuffix+" policies get it")
		list        = fs.Bool("list-policies", false, "print the policy names, one per line (each also runs as <policy>"+hedgeSuffix+"), and exit")
	)
	fs.Var(props, "p", "workload property key=value (repeatable), as YCSB's -p")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ycsb-lite [flags]\n\nYCSB-like load generator comparing host-selection policies. With no flags: embedded\n5-node cluster (RF 3), slow-node scenario, compares %s.\n\nPolicies:\n", strings.Join(defaultCompare, ", "))
		for _, n := range policyNames() {
			fmt.Fprintf(fs.Output(), "  %-14s %s\n", n, policies[n].help)
		}
		fmt.Fprintln(fs.Output(), "\nScenarios:")
		for _, n := range scenarioNames() {
			fmt.Fprintf(fs.Output(), "  %-14s %s\n", n, scenarios[n].help)
		}
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &flagError{err.Error()}
	}
	if *list {
		return &options{listPolicies: true}, nil
	}
	if fs.NArg() > 0 {
		return nil, &flagError{fmt.Sprintf("unexpected argument %q; all settings are flags (see -h)", fs.Arg(0))}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	o := &options{port: *port, nodes: *nodes, rf: *rf, workload: *workload, seed: *seed, out: *out, plots: *plots,
		timeout: *timeout, keyspace: *keyspace, serviceTime: *svc, workers: *workers, verbose: *verbose,
		series: *series, shiftName: *shiftWl, command: "ycsb-lite " + strings.Join(args, " ")}
	o.command = strings.TrimSpace(o.command)
	if *hosts != "" {
		for _, h := range strings.Split(*hosts, ",") {
			h = strings.TrimSpace(h)
			if h == "" {
				return nil, badFlag("hosts", *hosts, "comma-separated host names or IPs, none empty")
			}
			o.hosts = append(o.hosts, h)
		}
	}
	if o.port < 1 || o.port > 65535 {
		return nil, badFlag("port", o.port, "1..65535")
	}
	if o.hosts == nil {
		if o.nodes < 1 || o.nodes > 64 {
			return nil, badFlag("nodes", o.nodes, "1..64")
		}
		if o.workers < 1 || o.workers > 1024 {
			return nil, badFlag("workers", o.workers, "1..1024")
		}
		if o.serviceTime <= 0 {
			return nil, badFlag("service-time", o.serviceTime, "a duration > 0")
		}
	}
	if o.rf < 1 || (o.hosts == nil && o.rf > o.nodes) {
		return nil, badFlag("rf", o.rf, fmt.Sprintf("1..%d (the number of nodes)", max(o.nodes, 1)))
	}
	if !identOK(o.keyspace) {
		return nil, badFlag("keyspace", o.keyspace, "a CQL identifier (letter, then letters, digits, _)")
	}
	if o.timeout <= 0 {
		return nil, badFlag("timeout", o.timeout, "a duration > 0")
	}
	if o.series <= 0 {
		return nil, badFlag("series-interval", o.series, "a duration > 0")
	}
	if err := o.consistency.UnmarshalText([]byte(strings.ToUpper(*cl))); err != nil {
		return nil, badFlag("consistency", *cl, "ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE")
	}
	switch *phase {
	case "both":
		o.load, o.run = true, true
	case "load":
		o.load = true
	case "run":
		o.run = true
	default:
		return nil, badFlag("phase", *phase, "load, run, both")
	}

	// Policies.
	switch {
	case set["policy"] && set["compare"]:
		return nil, &flagError{"-policy and -compare are exclusive: use -policy X for one policy or -compare X,Y for several"}
	case set["policy"]:
		o.policies = []string{strings.TrimSpace(*policy)}
	case set["compare"]:
		for _, p := range strings.Split(*compare, ",") {
			o.policies = append(o.policies, strings.TrimSpace(p))
		}
	default:
		o.policies = defaultCompare
	}
	if *hedge {
		hedged := make([]string, len(o.policies))
		for i, p := range o.policies {
			if !strings.HasSuffix(p, hedgeSuffix) {
				p += hedgeSuffix
			}
			hedged[i] = p
		}
		o.policies = hedged
	}
	if *payloadFb {
		if o.hosts != nil {
			return nil, &flagError{"-payload-feedback needs the embedded simulated cluster; drop -hosts"}
		}
		o.payloadFeedback = true
		named := make([]string, len(o.policies))
		for i, p := range o.policies {
			named[i] = withPayloadSignal(p)
		}
		o.policies = named
	}
	seen := map[string]bool{}
	for _, p := range o.policies {
		spec, err := lookupPolicy(p)
		if err != nil {
			return nil, &flagError{"-policy/-compare: " + err.Error()}
		}
		if seen[p] {
			return nil, &flagError{fmt.Sprintf("-compare lists %q twice", p)}
		}
		seen[p] = true
		if (spec.simOnly || spec.payload) && o.hosts != nil {
			return nil, &flagError{fmt.Sprintf("policy %s needs the embedded simulated cluster; drop -hosts or choose another policy", p)}
		}
	}

	// Scenario.
	sc, err := lookupScenario(*scenario)
	if err != nil {
		return nil, &flagError{"-scenario: " + err.Error()}
	}
	if o.hosts != nil && sc.name != "steady" {
		if set["scenario"] {
			return nil, &flagError{fmt.Sprintf("scenario %s acts on the embedded simulated cluster; with -hosts use -scenario steady", sc.name)}
		}
		sc = scenarios["steady"]
	}
	o.scenario = sc
	o.params = scenarioParams{node: *node, slowdown: *slowdown, fluctuation: *fluct, fluctD: *fluctD,
		pauseEvery: *pauseEvery, pauseFor: *pauseFor, downAt: *downAt, upAt: *upAt, shiftAt: *shiftAt}
	if *node != "" && net.ParseIP(*node) == nil {
		return nil, badFlag("scenario-node", *node, "the IP of one node, e.g. 127.0.0.3")
	}
	if !(*slowdown >= 1 && *slowdown <= 1000) {
		return nil, badFlag("slowdown", *slowdown, "1..1000")
	}
	if *fluct <= 0 {
		return nil, badFlag("fluctuation", *fluct, "a duration > 0")
	}
	if !(*fluctD >= 1 && *fluctD <= 1000) {
		return nil, badFlag("fluctuation-d", *fluctD, "1..1000")
	}
	if *pauseEvery <= 0 || *pauseFor <= 0 || *pauseFor >= *pauseEvery {
		return nil, badFlag("pause-for", fmt.Sprintf("%v every %v", *pauseFor, *pauseEvery), "0 < -pause-for < -pause-every")
	}
	for name, v := range map[string]float64{"down-at": *downAt, "up-at": *upAt, "shift-at": *shiftAt} {
		if !(v >= 0 && v <= 1) {
			return nil, badFlag(name, v, "a fraction of the run in [0, 1]")
		}
	}
	if *upAt <= *downAt && *upAt < 1 {
		return nil, badFlag("up-at", *upAt, fmt.Sprintf("greater than -down-at (%g), or 1 for never", *downAt))
	}

	// Workload: file < flag defaults < -p < explicit flags.
	base, err := ycsb.LoadProperties(*workload)
	if err != nil {
		return nil, &flagError{"-workload: " + err.Error()}
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
		return nil, badFlag("ops", *ops, ">= 0 (0 = the workload's operationcount)")
	}
	if *records < 0 {
		return nil, badFlag("records", *records, ">= 0 (0 = the workload's recordcount)")
	}
	if *ops > 0 {
		put("ops", "operationcount", fmt.Sprint(*ops))
	}
	if *records > 0 {
		put("records", "recordcount", fmt.Sprint(*records))
	}
	if *threads < 1 || *threads > 10000 {
		return nil, badFlag("threads", *threads, "1..10000")
	}
	put("threads", "threadcount", fmt.Sprint(*threads))
	if !(*target >= 0) || math.IsInf(*target, 0) {
		return nil, badFlag("target", *target, ">= 0 ops/s (0 = as fast as possible)")
	}
	if *clients < 1 || *clients > 64 {
		return nil, badFlag("clients", *clients, "1..64")
	}
	o.clients = *clients
	if o.weights, err = demandWeights(*skew, o.clients); err != nil {
		return nil, err
	}
	o.demandSkew = strings.TrimSpace(*skew)
	if *util != 0 {
		switch {
		case !(*util > 0 && *util < 1):
			return nil, badFlag("utilization", *util, "0 < U < 1 (0 = off)")
		case set["target"]:
			return nil, &flagError{"-utilization and -target are exclusive: -utilization derives the target from the cluster's capacity"}
		case o.hosts != nil:
			return nil, &flagError{"-utilization needs the embedded simulated cluster (its capacity is known); with -hosts use -target"}
		}
		o.utilization = *util
		capacity := float64(o.nodes*o.workers) / o.serviceTime.Seconds()
		if sc.name == "bimodal" {
			// C3 §6: as if every node served at (mu + mu/D)/2.
			capacity *= (1 + 1 / *fluctD) / 2
		}
		*target = o.utilization * capacity
		set["target"] = true // the derived rate wins over -p target=..., as an explicit -target would
	}
	put("target", "target", fmt.Sprint(*target))
	merged := base.Merge(defaults).Merge(ycsb.Properties(props)).Merge(explicit)
	o.cfg, err = ycsb.ParseConfig(merged)
	if err != nil {
		return nil, &flagError{fmt.Sprintf("-workload %s: %v", *workload, err)}
	}
	if o.cfg.FieldNamePrefix != "field" && o.hosts == nil {
		return nil, &flagError{"fieldnameprefix: the simulated cluster's usertable has columns field0..fieldN; allowed: field"}
	}
	switch {
	case *duration > 0:
		o.cfg.MaxExecutionTime = *duration
	case *duration == 0:
		o.cfg.MaxExecutionTime = 0
	case *duration == -1:
		if o.cfg.MaxExecutionTime == 0 && o.cfg.Target > 0 && o.cfg.OperationCount > 0 {
			nominal := time.Duration(float64(o.cfg.OperationCount) / o.cfg.Target * float64(time.Second))
			o.cfg.MaxExecutionTime = 2*nominal + 5*time.Second
		}
	default:
		return nil, badFlag("duration", *duration, "a duration >= 0, or -1 for automatic")
	}
	if o.cfg.OperationCount == 0 && o.cfg.MaxExecutionTime == 0 {
		fmt.Fprintln(stderr, "ycsb-lite: operationcount 0 and no -duration: each run lasts until Ctrl-C")
	}
	if sc.name == "workload-shift" {
		sp, err := ycsb.LoadProperties(*shiftWl)
		if err != nil {
			return nil, &flagError{"-shift-workload: " + err.Error()}
		}
		st := *shiftTarget
		if st == 0 {
			st = o.cfg.Target / 2
		}
		sthr := *shiftThr
		if sthr == 0 {
			sthr = max(1, o.cfg.Threads/2)
		}
		if st < 0 || sthr < 1 || sthr > 10000 {
			return nil, badFlag("shift-target/-shift-threads", fmt.Sprintf("%v/%v", st, sthr), "target >= 0, threads 1..10000")
		}
		sp = sp.Merge(ycsb.Properties{"recordcount": fmt.Sprint(o.cfg.RecordCount), "operationcount": "0",
			"target": fmt.Sprint(st), "threadcount": fmt.Sprint(sthr), "table": o.cfg.Table,
			"fieldcount": fmt.Sprint(o.cfg.FieldCount)})
		if o.shift, err = ycsb.ParseConfig(sp); err != nil {
			return nil, &flagError{fmt.Sprintf("-shift-workload %s: %v", *shiftWl, err)}
		}
	}
	if len(o.cfg.Ignored) > 0 {
		fmt.Fprintf(stderr, "ycsb-lite: ignoring workload properties this tool does not use: %s\n", strings.Join(o.cfg.Ignored, ", "))
	}
	o.jsonPath = *jsonPath
	if o.jsonPath == "" {
		o.jsonPath = o.out + "/report.json"
	}
	o.progress = isTerminal(os.Stderr)
	return o, nil
}

func identOK(s string) bool {
	if s == "" || len(s) > 48 {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c >= '0' && c <= '9') || c == '_':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
