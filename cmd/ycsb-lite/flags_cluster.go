package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tailroute/tailroute/internal/report"
)

// clusterFlags: which cluster, its keyspace and consistency; the embedded
// cluster's shape.
func (c *cli) clusterFlags(fs *flagDefs) func(o *options) error {
	hosts := fs.String("hosts", "", "comma-separated CQL contact points; empty = start an embedded simulated cluster")
	port := fs.Int("port", 9042, "CQL port of -hosts")
	keyspace := fs.String("keyspace", "ycsb", "keyspace (created if missing: SimpleStrategy, or NetworkTopologyStrategy with -rf per DC when the embedded cluster has -dcs > 1)")
	rf := fs.Int("rf", 3, "replication factor of the keyspace (per DC with -dcs > 1)")
	replication := fs.String("replication", "", "replicas per DC of the keyspace, NetworkTopologyStrategy, as `dc1:3,dc2:3` (instead of -rf)")
	drop := fs.Bool("drop-keyspace", false, "with -hosts: drop the keyspace at the end if this run created it (it did not exist before)")
	cl := fs.String("consistency", "ONE", "CQL consistency level")
	nodes := fs.Int("nodes", 5, "embedded cluster: number of nodes (1..64)")
	dcs := fs.Int("dcs", 1, "embedded cluster: datacenters dc1..dcK (1..nodes); node i is in dc((i-1) mod K + 1)")
	workers := fs.Int("workers", 4, "embedded cluster: requests served in parallel per node (W)")
	svc := fs.Duration("service-time", 4*time.Millisecond, "embedded cluster: mean service time 1/mu")
	return func(o *options) error {
		o.port, o.nodes, o.rf, o.keyspace, o.workers, o.serviceTime, o.dcs = *port, *nodes, *rf, *keyspace, *workers, *svc, *dcs
		if *hosts != "" {
			for _, h := range strings.Split(*hosts, ",") {
				h = strings.TrimSpace(h)
				if h == "" {
					return badFlag("hosts", *hosts, "comma-separated host names or IPs, none empty")
				}
				o.hosts = append(o.hosts, h)
			}
		}
		if o.port < 1 || o.port > 65535 {
			return badFlag("port", o.port, "1..65535")
		}
		perDC := o.nodes
		if o.hosts == nil {
			if o.nodes < 1 || o.nodes > 64 {
				return badFlag("nodes", o.nodes, "1..64")
			}
			if o.dcs < 1 || o.dcs > o.nodes {
				return badFlag("dcs", o.dcs, fmt.Sprintf("1..%d (the number of nodes)", o.nodes))
			}
			perDC = o.nodes / o.dcs // the smallest DC
			if o.workers < 1 || o.workers > 1024 {
				return badFlag("workers", o.workers, "1..1024")
			}
			if o.serviceTime <= 0 {
				return badFlag("service-time", o.serviceTime, "a duration > 0")
			}
		} else if c.set["dcs"] {
			return &flagError{"-dcs shapes the embedded simulated cluster; with -hosts the cluster's own DCs apply (see -local-dc)"}
		}
		if *replication == "" && (o.rf < 1 || (o.hosts == nil && o.rf > perDC)) {
			what := "the number of nodes"
			if o.dcs > 1 {
				what = "the nodes of the smallest DC"
			}
			return badFlag("rf", o.rf, fmt.Sprintf("1..%d (%s)", max(perDC, 1), what))
		}
		if *replication != "" {
			if c.set["rf"] {
				return &flagError{"-rf and -replication are exclusive: -rf makes SimpleStrategy (or the same factor in every embedded DC), -replication sets each DC's"}
			}
			var err error
			if o.replication, err = parseReplication(*replication, o); err != nil {
				return err
			}
		}
		if *drop && o.hosts == nil {
			return &flagError{"-drop-keyspace needs -hosts: the embedded cluster is discarded after each policy"}
		}
		o.dropKeyspace = *drop
		if !identOK(o.keyspace) {
			return badFlag("keyspace", o.keyspace, "a CQL identifier (letter, then letters, digits, _)")
		}
		if err := o.consistency.UnmarshalText([]byte(strings.ToUpper(*cl))); err != nil {
			return badFlag("consistency", *cl, "ANY, ONE, TWO, THREE, QUORUM, ALL, LOCAL_QUORUM, EACH_QUORUM, LOCAL_ONE")
		}
		return nil
	}
}

// connectionFlags: what a real cluster needs to be reached: local DC,
// authentication, TLS, protocol version and timeouts.
func (c *cli) connectionFlags(fs *flagDefs) func(o *options) error {
	localDC := fs.String("local-dc", "", "local datacenter, given to every policy that has one (tailroute, token-aware, round-robin, datastax); empty = every host is local")
	user := fs.String("username", "", "user name for Cassandra's PasswordAuthenticator")
	pass := fs.String("password", "", "password for -username (visible in process lists; else the environment variable CQL_PASSWORD is used)")
	useTLS := fs.Bool("tls", false, "connect with TLS, verifying the nodes against the system's CAs (implied by the other -tls flags)")
	ca := fs.String("tls-ca", "", "PEM file of the CA(s) that signed the nodes' certificates")
	cert := fs.String("tls-cert", "", "PEM client certificate (with -tls-key)")
	key := fs.String("tls-key", "", "PEM private key of -tls-cert")
	skip := fs.Bool("tls-skip-verify", false, "do not verify the nodes' certificates or names (testing only)")
	proto := fs.Int("protocol-version", 0, "CQL native protocol version: 3 or 4; 0 = negotiate")
	connTimeout := fs.Duration("connect-timeout", 5*time.Second, "timeout to open a connection, including the handshake")
	timeout := fs.Duration("timeout", 5*time.Second, "per-request client timeout")
	retries := fs.Int("retries", 0, "gocql SimpleRetryPolicy retries, each on the next host of the plan (0 = no retry policy, failures reach the client)")
	return func(o *options) error {
		if *retries < 0 || *retries > 10 {
			return badFlag("retries", *retries, "0..10 (0 = no retry policy)")
		}
		o.retries = *retries
		o.localDC = strings.TrimSpace(*localDC)
		if c.set["local-dc"] && o.localDC == "" {
			return badFlag("local-dc", `""`, "a datacenter name such as dc1")
		}
		if o.hosts == nil && o.localDC != "" {
			dcOK := false
			for i := 1; i <= o.dcs; i++ {
				dcOK = dcOK || o.localDC == "dc"+strconv.Itoa(i)
			}
			if !dcOK {
				return badFlag("local-dc", o.localDC, fmt.Sprintf("a DC of the embedded cluster: dc1..dc%d (-dcs %d)", o.dcs, o.dcs))
			}
		}
		o.username, o.password = *user, *pass
		if o.password == "" {
			o.password = os.Getenv("CQL_PASSWORD")
		}
		if o.username == "" && c.set["password"] {
			return &flagError{"-password needs -username"}
		}
		if o.username != "" && o.password == "" {
			return &flagError{"-username " + o.username + ": no password; give -password or set CQL_PASSWORD"}
		}
		if *proto != 0 && *proto != 3 && *proto != 4 {
			return badFlag("protocol-version", *proto, "3 or 4 (the versions gocql v1.7.0 speaks), 0 = negotiate")
		}
		o.protoVersion = *proto
		if *connTimeout <= 0 {
			return badFlag("connect-timeout", *connTimeout, "a duration > 0")
		}
		o.connectTimeout = *connTimeout
		if *timeout <= 0 {
			return badFlag("timeout", *timeout, "a duration > 0")
		}
		o.timeout = *timeout
		if *useTLS || *ca != "" || *cert != "" || *key != "" || *skip {
			tc, err := tlsConfig(*ca, *cert, *key, *skip)
			if err != nil {
				return err
			}
			o.tls = tc
		}
		return nil
	}
}

// tlsConfig builds the client TLS configuration, reading the files now so
// a bad path or PEM is a flag error rather than a failed connection.
func tlsConfig(caFile, certFile, keyFile string, skipVerify bool) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: skipVerify}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, badFlag("tls-ca", caFile, "a readable PEM file of CA certificates ("+err.Error()+")")
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, badFlag("tls-ca", caFile, "a PEM file with at least one CERTIFICATE block")
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, &flagError{"-tls-cert and -tls-key go together: give both for a client certificate, or neither"}
	}
	if certFile != "" {
		kp, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, badFlag("tls-cert", certFile+" / -tls-key "+keyFile, "a PEM certificate and its matching PEM private key ("+err.Error()+")")
		}
		tc.Certificates = []tls.Certificate{kp}
	}
	return tc, nil
}

// outputFlags: where results go and what is printed while running.
func (c *cli) outputFlags(fs *flagDefs) func(o *options) error {
	out := fs.String("out", "ycsb-out", "directory for the JSON report, YCSB summaries, HdrHistogram files and plots")
	jsonPath := fs.String("json", "", "JSON report path (default <out>/report.json; - = stdout)")
	plots := fs.Bool("plots", true, "write PNG and SVG plots into -out")
	hdr := fs.Bool("hdr", true, "write <out>/<policy>-run.hgrm (percentile distribution, HdrHistogram plotter format), <policy>-run.hlog (interval log) and <policy>-run-<OP>.hgrm per operation type (READ, UPDATE, ...; as YCSB's HdrHistogram exporter)")
	hdrInterval := fs.Duration("hdr-interval", time.Second, "interval of the HdrHistogram interval log (.hlog)")
	slow := fs.Duration("slow", 50*time.Millisecond, "an operation slower than this counts as slow: the share in the table's \"> slow\" column and slow_ops in the JSON report (an SLO's miss count; no step where p99 sits on about 1 % of operations caught in stalls)")
	series := fs.Duration("series-interval", 250*time.Millisecond, "latency-over-time bucket")
	status := fs.Duration("status-interval", 10*time.Second, "status line period (as YCSB's -p status.interval) when stderr is not a terminal or with -s; 0 = none")
	lines := fs.Bool("s", false, "status lines on stderr even on a terminal (instead of the progress line redrawn every second), as YCSB's -s")
	verbose := fs.Bool("v", false, "log scenario events and driver messages to stderr")
	baseline := fs.String("baseline", "", "an earlier run's `report.json` (or its -out directory): after the table, print each policy's p50, p99, p99.9 and ops/s against it, with the change in %")
	version := fs.Bool("version", false, "print the version (module, VCS revision, Go, drivers) from the build info and exit")
	return func(o *options) error {
		if *version {
			o.showVersion = true
			return nil
		}
		o.out, o.plots, o.hdr, o.series, o.verbose = *out, *plots, *hdr, *series, *verbose
		if o.series <= 0 {
			return badFlag("series-interval", o.series, "a duration > 0")
		}
		if *hdrInterval < 10*time.Millisecond {
			return badFlag("hdr-interval", *hdrInterval, "a duration >= 10ms")
		}
		o.hdrInterval = *hdrInterval
		if *slow < time.Millisecond || *slow > time.Hour {
			return badFlag("slow", *slow, "a duration in 1ms..1h")
		}
		o.slow = *slow
		o.statusInterval = *status
		if !c.set["status-interval"] && o.props["status.interval"] != "" {
			secs, err := strconv.ParseFloat(o.props["status.interval"], 64)
			if err != nil || secs < 0 {
				return badFlag("p status.interval", o.props["status.interval"], "seconds >= 0")
			}
			o.statusInterval = time.Duration(secs * float64(time.Second))
		}
		if o.statusInterval < 0 {
			return badFlag("status-interval", o.statusInterval, "a duration >= 0 (0 = none)")
		}
		if o.statusInterval > 0 && o.statusInterval < 100*time.Millisecond {
			return badFlag("status-interval", o.statusInterval, "0 (none) or a duration >= 100ms")
		}
		o.statusLines = o.statusInterval > 0 && (*lines || !c.terminal)
		o.progress = c.terminal && !o.statusLines
		if *baseline != "" {
			b, err := report.ReadReport(*baseline)
			if err != nil {
				return badFlag("baseline", *baseline, "a report.json of an earlier ycsb-lite run, or its -out directory ("+err.Error()+")")
			}
			o.baseline, o.baselineName = b, *baseline
		}
		o.jsonPath = *jsonPath
		if o.jsonPath == "" {
			o.jsonPath = o.out + "/report.json"
		}
		return nil
	}
}

// dcReplicas is one DC's replica count of -replication.
type dcReplicas struct {
	dc string
	n  int
}

// parseReplication parses -replication dc1:3,dc2:3; on the embedded
// cluster each DC must exist and hold that many nodes.
func parseReplication(v string, o *options) ([]dcReplicas, error) {
	const allowed = "comma-separated dc:replicas, e.g. dc1:3,dc2:3 (each DC once, replicas >= 1)"
	var out []dcReplicas
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		dc, n, ok := strings.Cut(strings.TrimSpace(part), ":")
		k, err := strconv.Atoi(strings.TrimSpace(n))
		dc = strings.TrimSpace(dc)
		if !ok || err != nil || k < 1 || dc == "" || seen[dc] || strings.ContainsAny(dc, "'\"{}") {
			return nil, badFlag("replication", v, allowed)
		}
		seen[dc] = true
		if o.hosts == nil {
			nodes := 0
			for i := 1; i <= o.nodes; i++ {
				if "dc"+strconv.Itoa((i-1)%o.dcs+1) == dc {
					nodes++
				}
			}
			if nodes == 0 {
				return nil, badFlag("replication", v, fmt.Sprintf("DCs of the embedded cluster: dc1..dc%d (-dcs %d)", o.dcs, o.dcs))
			}
			if k > nodes {
				return nil, badFlag("replication", v, fmt.Sprintf("at most %d replicas in %s (its nodes)", nodes, dc))
			}
		}
		out = append(out, dcReplicas{dc, k})
	}
	return out, nil
}
