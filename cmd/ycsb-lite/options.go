package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/report"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// defaultCompare is what runs with no flags at all.
var defaultCompare = []string{"tailroute", "token-aware", "tailroute-p2c"}

// options is the validated command line.
type options struct {
	listPolicies bool     // -list-policies: print the policy names and exit
	showVersion  bool     // -version: print the version and exit
	hosts        []string // empty = embedded simulated cluster
	port         int
	nodes, rf    int
	workload     string // name or file as given
	cfg          ycsb.Config
	policies     []string
	driver       string // -driver: v1 (gocql) or v2 (apache/cassandra-gocql-driver/v2)
	scenario     scenarioSpec
	zones        zoneOptions // -racks, -client-rack, -zone-latency
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
	progress     bool // redraw a progress line every second (stderr is a terminal)
	verbose      bool
	series       time.Duration
	command      string
	props        ycsb.Properties // the merged workload properties
	// statusLines prints a status line every statusInterval (stderr is not
	// a terminal, or -s), as YCSB's -s / status.interval.
	statusLines    bool
	statusInterval time.Duration
	// hdr writes <out>/<policy>-run.hgrm and .hlog; hdrInterval is the
	// interval log's period.
	hdr         bool
	hdrInterval time.Duration
	// slow is the latency above which an operation counts as slow (-slow:
	// the report's slow_ops, the table's "> slow" column).
	slow time.Duration
	// Connection (-hosts) settings; dcs shapes the embedded cluster.
	dcs                int
	localDC            string
	username, password string
	tls                *tls.Config // nil = plain TCP
	protoVersion       int         // 0 = negotiate
	connectTimeout     time.Duration
	// workload-shift's joining workload as given.
	shiftTarget  float64
	shiftThreads int
	// clients is the number of independent clients sharing the cluster
	// (-clients, default 1); weights[i] is client i's share of the threads,
	// target rate and operations (sums to 1).
	clients    int
	demandSkew string // -demand-skew as given; "" = even split
	weights    []float64
	// utilization, when > 0, derived the target rate from the embedded
	// cluster's average service capacity (-utilization).
	utilization float64
	// retries is the number of retries of gocql's SimpleRetryPolicy (each
	// on the next host of the plan); 0 = no retry policy (-retries).
	retries int

	// payloadFeedback (-payload-feedback): the simulator attaches q_s and
	// 1/mu_s to every response and policies with a +payload variant run as it.
	payloadFeedback bool

	// replication is -replication (nil = -rf); dropKeyspace is
	// -drop-keyspace.
	replication  []dcReplicas
	dropKeyspace bool

	// baseline is -baseline's report (nil = none), baselineName its path.
	baseline     *report.Report
	baselineName string

	// warmup is -warmup: operations (warmupOps) or a duration (warmupFor)
	// run before each policy's measured run phase; zero = none.
	warmupOps int64
	warmupFor time.Duration

	// tailTerm is -tail-term: k of tailroute's C3 score Psi_s + k/mu_s
	// (tailroute.WithTailTerm); nil = the policy's default.
	tailTerm *float64
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

// isTerminal reports whether w is a terminal (a character device file).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// commandLine declares every flag, by topic, in the order -h lists them.
func commandLine(stderr io.Writer) *cli {
	c := newCLI(stderr)
	c.terminal = isTerminal(stderr)
	c.topic("Policies", "choose them with -compare (one or several; <policy>"+hedgeSuffix+" adds hedging)", policyFlags)
	c.describe(func(w io.Writer) {
		fmt.Fprintln(w, "  policies:")
		for _, n := range policyNames() {
			fmt.Fprintf(w, "    %-17s %s\n", n, policies[n].help)
		}
	})
	c.topic("Workload", "as YCSB: -P file and -p key=value; a flag given wins over -p, -p over the files (later over earlier), the files over the defaults shown", c.workloadFlags)
	c.topic("Scenario", "embedded cluster only; with -hosts the scenario is steady", c.scenarioFlags)
	c.describe(func(w io.Writer) {
		fmt.Fprintln(w, "  scenarios:")
		for _, n := range scenarioNames() {
			fmt.Fprintf(w, "    %-17s %s\n", n, scenarios[n].help)
		}
	})
	c.topic("Clients", "independent clients sharing the cluster (C3 §6)", clientFlags)
	c.topic("Cluster", "no -hosts = an embedded simulated cluster on 127.0.0.1..N", c.clusterFlags)
	c.topic("Connection", "for real clusters (-hosts); TLS and auth are not exercised by the embedded cluster", c.connectionFlags)
	c.topic("Output", "", c.outputFlags)
	c.topic("Zones", "embedded cluster only: racks as availability zones and the network between them (sim.Network)", zoneFlags(c))

	return c
}

// parseFlags parses and validates args. Precedence for every workload
// property, as YCSB's: a flag given on the command line > -p key=value >
// the workload file(s), later over earlier > the flags' defaults.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	c := commandLine(stderr)
	o := &options{command: strings.TrimSpace("ycsb-lite " + strings.Join(args, " "))}
	err := c.parse(args, o, "Policies", "Cluster", "Connection", "Scenario", "Clients", "Workload", "Output")
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		var fe *flagError
		if !errors.As(err, &fe) {
			err = &flagError{err.Error()}
		}
		return nil, err
	}
	if o.listPolicies || o.showVersion {
		return &options{listPolicies: o.listPolicies, showVersion: o.showVersion}, nil
	}
	if o.localDC != "" {
		for _, p := range o.policies {
			if spec, _ := lookupPolicy(p); spec.noLocalDC {
				return nil, &flagError{fmt.Sprintf("-local-dc %s: policy %s has no notion of a local DC (it would send requests to every DC); allowed with: %s",
					o.localDC, p, strings.Join(localDCPolicyNames(), ", "))}
			}
		}
	}
	// status.interval is read by the Output topic (-p status.interval=N).
	o.cfg.Ignored = slices.DeleteFunc(o.cfg.Ignored, func(k string) bool { return k == "status.interval" })
	if o.payloadFeedback && o.hosts != nil {
		return nil, &flagError{"-payload-feedback needs the embedded simulated cluster; drop -hosts"}
	}
	for _, p := range o.policies {
		if spec, _ := lookupPolicy(p); (spec.simOnly || spec.payload) && o.hosts != nil {
			return nil, &flagError{fmt.Sprintf("policy %s needs the embedded simulated cluster; drop -hosts or choose another policy", p)}
		}
	}
	if len(o.cfg.Ignored) > 0 {
		fmt.Fprintf(stderr, "ycsb-lite: ignoring workload properties this tool does not use: %s\n", strings.Join(o.cfg.Ignored, ", "))
	}
	if o.cfg.OperationCount == 0 && o.cfg.MaxExecutionTime == 0 {
		fmt.Fprintln(stderr, "ycsb-lite: operationcount 0 and no -duration: each run lasts until Ctrl-C")
	}
	return o, nil
}

// replicationMap is the keyspace's replication map: NetworkTopologyStrategy
// as -replication gives it; else SimpleStrategy with -rf, or, on an
// embedded cluster with several DCs, NetworkTopologyStrategy with -rf in
// each.
func (o *options) replicationMap() string {
	if o.replication != nil {
		var b strings.Builder
		b.WriteString("{'class': 'NetworkTopologyStrategy'")
		for _, r := range o.replication {
			fmt.Fprintf(&b, ", '%s': %d", r.dc, r.n)
		}
		b.WriteString("}")
		return b.String()
	}
	if o.hosts != nil || o.dcs <= 1 {
		return fmt.Sprintf("{'class': 'SimpleStrategy', 'replication_factor': %d}", o.rf)
	}
	var b strings.Builder
	b.WriteString("{'class': 'NetworkTopologyStrategy'")
	for i := 1; i <= o.dcs; i++ {
		fmt.Fprintf(&b, ", 'dc%d': %d", i, o.rf)
	}
	b.WriteString("}")
	return b.String()
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

// replicationNote names the keyspace's replication for the report header.
func (o *options) replicationNote() string {
	if o.replication == nil {
		return fmt.Sprintf("RF %d", o.rf)
	}
	parts := make([]string, len(o.replication))
	for i, r := range o.replication {
		parts[i] = fmt.Sprintf("%s:%d", r.dc, r.n)
	}
	return "replication " + strings.Join(parts, ",")
}
