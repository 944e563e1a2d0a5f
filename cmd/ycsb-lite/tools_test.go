package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/ycsb"
)

// hgrmLine is one data line of HdrHistogram's percentile distribution:
// value, percentile, total count, 1/(1-percentile) or inf.
var hgrmLine = regexp.MustCompile(`^ *(\d+\.\d{3}) +(\d\.\d{6}) +(\d+) +(\d+\.\d{2}|inf)$`)

// checkHgrm parses an .hgrm as HdrHistogram's plotter does (header, data
// lines of four columns, #[...] footer) and returns the last line's value
// (the maximum) and the total count.
func checkHgrm(t *testing.T, path string) (maxMs float64, total int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan()
	if sc.Text() != " Value\tPercentile\tTotalCount\t1/(1-Percentile)" {
		t.Fatalf("%s: header %q", path, sc.Text())
	}
	var prevV, prevP float64
	var prevN int64
	data, footer := 0, 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && data == 0:
		case strings.HasPrefix(line, "#["):
			footer++
			if m := regexp.MustCompile(`Total count += +(\d+)`).FindStringSubmatch(line); m != nil {
				total, _ = strconv.ParseInt(m[1], 10, 64)
			}
		default:
			m := hgrmLine.FindStringSubmatch(line)
			if m == nil || footer > 0 {
				t.Fatalf("%s: line %q is not a percentile line", path, line)
			}
			v, _ := strconv.ParseFloat(m[1], 64)
			p, _ := strconv.ParseFloat(m[2], 64)
			n, _ := strconv.ParseInt(m[3], 10, 64)
			if v < prevV || p < prevP || n < prevN {
				t.Fatalf("%s: line %q goes backwards", path, line)
			}
			if m[4] != "inf" {
				inv, _ := strconv.ParseFloat(m[4], 64)
				if math.Abs(inv-1/(1-p)) > 0.01*inv+0.01 {
					t.Fatalf("%s: line %q: 1/(1-p) column %v, want %v", path, line, inv, 1/(1-p))
				}
			}
			prevV, prevP, prevN = v, p, n
			data++
		}
	}
	if data < 10 || footer != 3 || prevP != 1 || prevN != total {
		t.Fatalf("%s: %d data lines, %d footer lines, last percentile %v with count %d, total %d", path, data, footer, prevP, prevN, total)
	}
	// HdrHistogram's plotter (GoogleChartsExample/plotFiles.html) keeps a
	// trimmed line not starting with '#' that splits on spaces into four
	// fields and plots parseFloat(field 4) (x) against parseFloat(field 1);
	// the last line's x is "inf" and is dropped.
	points := 0
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		f := regexp.MustCompile(`[ ]+`).Split(line, -1)
		if line == "" || line[0] == '#' || len(f) != 4 {
			continue
		}
		if jsNumber(f[0]) && jsNumber(f[3]) {
			points++
		}
	}
	if points != data-1 {
		t.Fatalf("%s: the plotter's parser would plot %d points of %d percentile lines", path, points, data)
	}
	return prevV, total
}

// jsNumber reports whether JavaScript's parseFloat reads s as a number
// (it reads "inf" as NaN; Go's ParseFloat accepts it).
func jsNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && !strings.ContainsAny(s, "iInN")
}

// A run writes, per policy, an .hgrm whose distribution is the table's and
// an interval log that hdrhistogram-go reads back to the same histogram.
func TestHdrHistogramOutput(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"-nodes", "3", "-records", "100", "-ops", "600", "-target", "600", "-threads", "8",
		"-compare", "tailroute,token-aware", "-hdr-interval", "200ms", "-plots=false", "-out", dir}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	rep := readReport(t, dir)
	if len(rep.Results) != 2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, res := range rep.Results {
		maxMs, total := checkHgrm(t, filepath.Join(dir, res.Policy+"-run.hgrm"))
		if total != res.Latency.Operations || total != 600 {
			t.Errorf("%s: .hgrm total %d, report %d operations", res.Policy, total, res.Latency.Operations)
		}
		if want := float64(res.Latency.MaxUs) / 1000; math.Abs(maxMs-want) > 0.002*want+0.001 {
			t.Errorf("%s: .hgrm max %.3f ms, report max %.3f ms", res.Policy, maxMs, want)
		}

		f, err := os.Open(filepath.Join(dir, res.Policy+"-run.hlog"))
		if err != nil {
			t.Fatal(err)
		}
		r := hdrhistogram.NewHistogramLogReader(f)
		all := hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3)
		intervals := 0
		for {
			h, err := r.NextIntervalHistogram()
			if err != nil {
				t.Fatalf("%s: reading the interval log: %v", res.Policy, err)
			}
			if h == nil {
				break
			}
			intervals++
			all.Merge(h)
		}
		f.Close()
		if intervals < 3 {
			t.Errorf("%s: %d intervals in the log of a ~1 s run at 200ms", res.Policy, intervals)
		}
		if all.TotalCount() != res.Latency.Operations {
			t.Errorf("%s: interval log holds %d values, report %d operations", res.Policy, all.TotalCount(), res.Latency.Operations)
		}
		if got := all.ValueAtQuantile(99); got != res.Latency.P99Us {
			t.Errorf("%s: interval log p99 %d µs, report %d µs", res.Policy, got, res.Latency.P99Us)
		}
	}
	// -hdr=false writes neither.
	dir2 := t.TempDir()
	if code := run(context.Background(), []string{"-nodes", "3", "-records", "50", "-ops", "50", "-target", "0", "-compare", "token-aware",
		"-hdr=false", "-plots=false", "-out", dir2}, io.Discard, io.Discard); code != exitOK {
		t.Fatalf("-hdr=false: exit %d", code)
	}
	if m, _ := filepath.Glob(filepath.Join(dir2, "*.h*")); len(m) != 0 {
		t.Errorf("-hdr=false wrote %v", m)
	}
}

// With stderr not a terminal (here a buffer, as with a pipe or nohup) status
// lines appear every -status-interval, with progress and an estimate of the
// time left, and a last line per phase.
func TestStatusLinesWithoutTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"-nodes", "3", "-records", "50", "-ops", "600", "-target", "400", "-threads", "4", "-compare", "token-aware",
		"-status-interval", "300ms", "-plots=false", "-out", t.TempDir()}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	line := regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[token-aware\] \d+ sec: (\d+) operations \(\d+\.\d %\); [\d.]+ current ops/sec; p99 so far [\d.]+ ms; est\. \S+ left$`)
	got := line.FindAllStringSubmatch(errb.String(), -1)
	if len(got) < 3 {
		t.Fatalf("%d status lines in a 1.5 s run at 300ms, want >= 3:\n%s", len(got), errb.String())
	}
	if !regexp.MustCompile(`(?m)\[token-aware\] [\d.]+ sec: 600 operations, done; [\d.]+ average ops/sec; p99 [\d.]+ ms$`).MatchString(errb.String()) {
		t.Errorf("no final status line:\n%s", errb.String())
	}
	if strings.Contains(errb.String(), "\r") {
		t.Errorf("status lines contain a carriage return (terminal redraw):\n%q", errb.String())
	}
	// -status-interval 0 and -p status.interval=0 (YCSB's seconds) turn them off.
	for _, off := range [][]string{{"-status-interval", "0"}, {"-p", "status.interval=0"}} {
		errb.Reset()
		a := append([]string{"-nodes", "3", "-records", "50", "-ops", "200", "-target", "400", "-compare", "token-aware", "-plots=false", "-out", t.TempDir()}, off...)
		if code := run(context.Background(), a, io.Discard, &errb); code != exitOK {
			t.Fatalf("%v: exit %d", off, code)
		}
		if strings.Contains(errb.String(), "operations") || strings.Contains(errb.String(), "ignoring") {
			t.Errorf("%v: stderr %q", off, errb.String())
		}
	}
}

// The ETA is the remaining operations at the average rate, capped by the
// time limit; empty when neither is known.
func TestStatusETA(t *testing.T) {
	s := &status{total: 1000}
	if got := s.eta(250, 10*time.Second); got != "; est. 30s left" {
		t.Errorf("1/4 done in 10s: %q", got)
	}
	s.limit = 20 * time.Second
	if got := s.eta(250, 10*time.Second); got != "; est. 10s left" {
		t.Errorf("capped by a 20s limit: %q", got)
	}
	if got := (&status{}).eta(100, time.Second); got != "" {
		t.Errorf("unbounded: %q", got)
	}
	if got := (&status{limit: time.Minute}).eta(100, 15*time.Second); got != "; est. 45s left" {
		t.Errorf("time limit only: %q", got)
	}
}

// On a 2-DC embedded cluster with -local-dc every policy that has a local
// DC sends requests to that DC's nodes only; without it they reach both.
func TestLocalDC(t *testing.T) {
	// Nodes are assigned round robin: 127.0.0.1 and .3 in dc1, .2 and .4 in dc2.
	common := []string{"-nodes", "4", "-dcs", "2", "-rf", "2", "-scenario", "steady", "-records", "100", "-ops", "300", "-target", "500",
		"-threads", "4", "-protocol-version", "3", "-username", "ycsb", "-password", "secret", "-connect-timeout", "3s"}
	rep, _ := runJSON(t, append(common, "-local-dc", "dc1", "-compare", "tailroute,token-aware,round-robin,datastax,tailroute-p2c+hedge")...)
	if len(rep.Results) != 5 {
		t.Fatalf("%d results", len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Operations != 300 || res.Errors != 0 {
			t.Errorf("%s: %d operations, %d errors", res.Policy, res.Operations, res.Errors)
		}
		for _, h := range []string{"127.0.0.2", "127.0.0.4"} {
			if s := share(res, h); s != 0 {
				t.Errorf("%s with -local-dc dc1: %s (dc2) got %.1f %% of the requests", res.Policy, h, 100*s)
			}
		}
	}
	rep, _ = runJSON(t, append(common, "-compare", "round-robin,token-aware")...)
	for _, res := range rep.Results {
		if s := share(res, "127.0.0.2") + share(res, "127.0.0.4"); s < 0.2 {
			t.Errorf("%s without -local-dc: dc2 got %.1f %%, want both DCs used", res.Policy, 100*s)
		}
	}
}

// writeTestCert writes a self-signed certificate and its key as PEM files.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ycsb-lite test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// The connection flags reach gocql's ClusterConfig. TLS is checked up to
// the configuration: the embedded cluster does not speak TLS.
func TestConnectionFlags(t *testing.T) {
	t.Setenv("CQL_PASSWORD", "")
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	o, err := parseFlags([]string{"-hosts", "10.0.0.1", "-local-dc", "east", "-username", "u", "-password", "p", "-tls-ca", cert,
		"-tls-cert", cert, "-tls-key", key, "-protocol-version", "4", "-connect-timeout", "2s", "-timeout", "3s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg := (&runner{o: o, stderr: io.Discard}).clusterConfig(o.hosts, o.port)
	auth, ok := cfg.Authenticator.(gocql.PasswordAuthenticator)
	if !ok || auth.Username != "u" || auth.Password != "p" {
		t.Errorf("authenticator %#v", cfg.Authenticator)
	}
	if cfg.SslOpts == nil || cfg.SslOpts.Config == nil || !cfg.SslOpts.EnableHostVerification || cfg.SslOpts.InsecureSkipVerify ||
		cfg.SslOpts.RootCAs == nil || len(cfg.SslOpts.Certificates) != 1 {
		t.Errorf("TLS options %+v", cfg.SslOpts)
	}
	if cfg.ProtoVersion != 4 || cfg.ConnectTimeout != 2*time.Second || cfg.Timeout != 3*time.Second {
		t.Errorf("proto %d, connect timeout %v, timeout %v", cfg.ProtoVersion, cfg.ConnectTimeout, cfg.Timeout)
	}
	inst, err := policies["token-aware"].v1(policyEnv{localDC: o.localDC}, cfg)
	if err != nil || inst.release != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprintf("%T", cfg.PoolConfig.HostSelectionPolicy), "tokenAware") {
		t.Errorf("token-aware policy is %T", cfg.PoolConfig.HostSelectionPolicy)
	}

	o, err = parseFlags([]string{"-hosts", "10.0.0.1", "-tls-skip-verify"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg = (&runner{o: o, stderr: io.Discard}).clusterConfig(o.hosts, o.port)
	if cfg.SslOpts == nil || cfg.SslOpts.EnableHostVerification || !cfg.SslOpts.InsecureSkipVerify {
		t.Errorf("-tls-skip-verify: %+v", cfg.SslOpts)
	}
	// Defaults: no auth, no TLS, protocol negotiated, 5 s connect timeout.
	o, _ = parseFlags(nil, io.Discard)
	cfg = (&runner{o: o, stderr: io.Discard}).clusterConfig([]string{"127.0.0.1"}, 9042)
	if cfg.Authenticator != nil || cfg.SslOpts != nil || cfg.ProtoVersion != 0 || cfg.ConnectTimeout != 5*time.Second {
		t.Errorf("defaults: auth %v, TLS %v, proto %d, connect timeout %v", cfg.Authenticator, cfg.SslOpts, cfg.ProtoVersion, cfg.ConnectTimeout)
	}
	// The password may come from the environment.
	t.Setenv("CQL_PASSWORD", "fromenv")
	if o, err := parseFlags([]string{"-username", "u"}, io.Discard); err != nil || o.password != "fromenv" {
		t.Errorf("CQL_PASSWORD: %v, %q", err, o.password)
	}
}

// Bad connection and cluster-shape flags name the flag and what is allowed.
func TestConnectionFlagsRejected(t *testing.T) {
	t.Setenv("CQL_PASSWORD", "")
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-protocol-version", "5"}, []string{"-protocol-version 5", "3 or 4", "0 = negotiate"}},
		{[]string{"-connect-timeout", "0s"}, []string{"-connect-timeout 0s", "> 0"}},
		{[]string{"-tls-ca", filepath.Join(dir, "missing.pem")}, []string{"-tls-ca", "missing.pem", "readable PEM"}},
		{[]string{"-tls-ca", notPEM}, []string{"-tls-ca", "CERTIFICATE"}},
		{[]string{"-tls-cert", cert}, []string{"-tls-cert and -tls-key go together"}},
		{[]string{"-tls-cert", cert, "-tls-key", notPEM}, []string{"-tls-cert", "matching PEM private key"}},
		{[]string{"-tls-cert", key, "-tls-key", key}, []string{"-tls-cert"}},
		{[]string{"-password", "p"}, []string{"-password needs -username"}},
		{[]string{"-username", "u"}, []string{"-username u", "CQL_PASSWORD"}},
		{[]string{"-local-dc", ""}, []string{"-local-dc", "datacenter name"}},
		{[]string{"-local-dc", "dc3", "-nodes", "4", "-dcs", "2", "-rf", "2"}, []string{"-local-dc dc3", "dc1..dc2"}},
		{[]string{"-local-dc", "dc1", "-compare", "tailroute,host-pool"}, []string{"-local-dc dc1", "host-pool", "no notion of a local DC"}},
		{[]string{"-dcs", "6"}, []string{"-dcs 6", "1..5"}},
		{[]string{"-nodes", "4", "-dcs", "2", "-rf", "3"}, []string{"-rf 3", "1..2", "smallest DC"}},
		{[]string{"-hosts", "10.0.0.1", "-dcs", "2"}, []string{"-dcs", "embedded"}},
		{[]string{"-status-interval", "-1s"}, []string{"-status-interval -1s", ">= 0"}},
		{[]string{"-status-interval", "1ms"}, []string{"-status-interval 1ms", ">= 100ms"}},
		{[]string{"-p", "status.interval=soon"}, []string{"status.interval soon", "seconds"}},
		{[]string{"-hdr-interval", "1ms"}, []string{"-hdr-interval 1ms", ">= 10ms"}},
		{[]string{"-P", "b", "-workload", "a"}, []string{"-P and -workload are exclusive"}},
		{[]string{"-P", filepath.Join(dir, "nope.properties")}, []string{"-P", "nope.properties"}},
		{[]string{"-down-at", "half"}, []string{"-down-at", "1/3"}},
		{[]string{"-down-at", "4/3"}, []string{"-down-at 4/3", "[0, 1]"}},
		{[]string{"-duration", "soon"}, []string{"-duration", "auto"}},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(context.Background(), append(c.args, "-out", dir), &out, &errb)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %s", c.args, code, exitUsage, errb.String())
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%v: stderr %q lacks %q", c.args, errb.String(), w)
			}
		}
	}
}

// -P loads workload files as YCSB does, later ones overriding earlier
// ones; explicit flags still win.
func TestWorkloadFileFlag(t *testing.T) {
	dir := t.TempDir()
	f1, f2 := filepath.Join(dir, "w1"), filepath.Join(dir, "w2")
	if err := os.WriteFile(f1, []byte("recordcount=123\noperationcount=456\nreadproportion=0.5\nupdateproportion=0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f2, []byte("operationcount=789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-P", f1, "-P", f2, "-ops", "0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.RecordCount != 123 || o.cfg.OperationCount != 789 || o.cfg.ReadProportion != 0.5 || o.workload != f1+","+f2 {
		t.Errorf("records %d, ops %d, read %v, workload %q", o.cfg.RecordCount, o.cfg.OperationCount, o.cfg.ReadProportion, o.workload)
	}
	o, err = parseFlags([]string{"-P", f1, "-ops", "10", "-duration", "auto", "-down-at", "1/4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.OperationCount != 10 || o.params.downAt != 0.25 || o.cfg.MaxExecutionTime != 2*10*time.Millisecond+5*time.Second {
		t.Errorf("ops %d, down-at %v, max time %v", o.cfg.OperationCount, o.params.downAt, o.cfg.MaxExecutionTime)
	}
	// YCSB's own workload paths are built in.
	o, err = parseFlags([]string{"-P", "workloads/workloada"}, io.Discard)
	if err != nil || o.cfg.ReadProportion != 0.5 || o.cfg.UpdateProportion != 0.5 {
		t.Errorf("-P workloads/workloada: %v, read %v, update %v", err, o.cfg.ReadProportion, o.cfg.UpdateProportion)
	}
	// The old spelling of the automatic duration still works.
	if o, err := parseFlags([]string{"-duration", "-1"}, io.Discard); err != nil || o.cfg.MaxExecutionTime != 25*time.Second {
		t.Errorf("-duration -1: %v, %v", err, o.cfg.MaxExecutionTime)
	}
}

// -h lists every flag once under a topic, with examples and readable
// defaults.
func TestHelpByTopic(t *testing.T) {
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, io.Discard, &errb); code != exitOK {
		t.Fatalf("-h: exit %d", code)
	}
	h := errb.String()
	for _, w := range []string{"Examples:", "\nPolicies:\n", "\nWorkload:\n", "\nScenario:\n", "\nClients:\n", "\nCluster:\n",
		"\nConnection:\n", "\nOutput:\n", "(default auto)", "(default 1/3)", "(default 2/3)", "(default 5s)", "slow-node", "tailroute-p2c"} {
		if !strings.Contains(h, w) {
			t.Errorf("-h lacks %q", w)
		}
	}
	for _, bad := range []string{"-1ns", "0.333", "0.666"} {
		if strings.Contains(h, bad) {
			t.Errorf("-h shows %q", bad)
		}
	}
	var names []string
	commandLine(io.Discard).fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	for _, n := range names {
		if k := strings.Count(h, "\n  -"+n+" ") + strings.Count(h, "\n  -"+n+"\n"); k != 1 {
			t.Errorf("-h lists -%s %d times", n, k)
		}
	}
	if len(names) < 50 {
		t.Errorf("only %d flags defined", len(names))
	}
}

// BenchmarkIntervalTick is the cost of one interval-log tick (and of one
// status line, which merges the same histogram) on 16 shards holding 10^5
// latencies: paid once per -hdr-interval / -status-interval, off the
// recording path except for each shard's lock while it is merged.
func BenchmarkIntervalTick(b *testing.B) {
	m := ycsb.NewMeasurements(16, true)
	for i := range 100000 {
		d := time.Duration(1000+i%50000) * time.Microsecond
		m.RecordOp(i, ycsb.OpRead, d, d, nil)
	}
	l := newIntervalLog(m, time.Now(), "bench")
	b.ReportAllocs()
	for b.Loop() {
		l.tick(time.Now())
	}
}
