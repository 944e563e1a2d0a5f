package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/sim"
)

func noEnv(string) string { return "" }

func TestParseFlagsEnvAndValidation(t *testing.T) {
	env := map[string]string{"CQLSIM_NODES": "5", "CQLSIM_MEAN_SERVICE": "2ms", "CQLSIM_SLOWDOWN": "2"}
	o, err := parseFlags([]string{"-slowdown", "3"}, func(k string) string { return env[k] }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 5, o.nodes, "from env")
	assert.Equal(t, 2*time.Millisecond, o.model.MeanService, "from env")
	assert.Equal(t, 3.0, o.model.Slowdown, "flag wins over env")

	_, err = parseFlags([]string{"-workers", "0"}, noEnv, io.Discard)
	assert.ErrorContains(t, err, "Workers = 0")
	_, err = parseFlags(nil, func(k string) string {
		if k == "CQLSIM_ERROR_RATE" {
			return "lots"
		}
		return ""
	}, io.Discard)
	assert.ErrorContains(t, err, `CQLSIM_ERROR_RATE="lots"`)
	_, err = parseFlags([]string{"-cluster", "127.0.0.1"}, noEnv, io.Discard)
	assert.ErrorContains(t, err, "-advertise")
	o, err = parseFlags([]string{"-zero-service"}, noEnv, io.Discard)
	require.NoError(t, err)
	assert.True(t, o.model.ZeroService)
}

func TestParseMembers(t *testing.T) {
	ms, err := parseMembers("10.0.0.1/dcA/r1/-5;7, 10.0.0.2/dcB, 10.0.0.3", 7070)
	require.NoError(t, err)
	require.Len(t, ms, 3)
	assert.Equal(t, sim.PeerConfig{IP: "10.0.0.1", DC: "dcA", Rack: "r1", Tokens: []int64{-5, 7}, Admin: "10.0.0.1:7070"}, ms[0])
	assert.Equal(t, "dcB", ms[1].DC)
	assert.Equal(t, "rack1", ms[1].Rack)
	assert.Equal(t, []int64{sim.SplitTokens(3)[2]}, ms[2].Tokens)
	_, err = parseMembers("10.0.0.1/dc/r/abc", 7070)
	assert.ErrorContains(t, err, `token "abc"`)
	_, err = parseMembers("host.example/dc", 7070)
	assert.ErrorContains(t, err, "not an IP address")

	// containers: advertised loopback address, admin reached over the Docker network
	ms, err = parseMembers("127.0.0.101@n1:7070,127.0.0.102/dc1@n2:7070", 7070)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.101", ms[0].IP)
	assert.Equal(t, "n1:7070", ms[0].Admin)
	assert.Equal(t, "n2:7070", ms[1].Admin)
	_, err = parseMembers("127.0.0.101@n1", 7070)
	assert.ErrorContains(t, err, "want host:port")
}

// syncBuf is a goroutine-safe output buffer.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var readyRE = regexp.MustCompile(`cqlsim ready hosts=(\S+) port=(\d+)`)

func TestRunClusterMode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuf{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-nodes", "3", "-first-ip", "127.0.0.31", "-zero-service"}, noEnv, out, io.Discard)
	}()
	var m []string
	require.Eventually(t, func() bool { m = readyRE.FindStringSubmatch(out.String()); return m != nil }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, "127.0.0.31,127.0.0.32,127.0.0.33", m[1])
	assert.Equal(t, 3, strings.Count(out.String(), "admin=http://127.0.0.3"))
	var port int
	fmt.Sscan(m[2], &port)
	cl := gocql.NewCluster("127.0.0.31")
	cl.Port = port
	s, err := cl.CreateSession()
	require.NoError(t, err)
	var n int
	iter := s.Query("SELECT peer FROM system.peers").Iter()
	var peer string
	for iter.Scan(&peer) {
		n++
	}
	require.NoError(t, iter.Close())
	assert.Equal(t, 2, n)
	s.Close()
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

// freePortOn returns a port free on every ip (best effort).
func freePortOn(t *testing.T, ips []string) int {
	for attempt := 0; attempt < 20; attempt++ {
		l, err := net.Listen("tcp", ips[0]+":0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		ok := true
		var ls []net.Listener
		for _, ip := range ips[1:] {
			l2, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, l2)
		}
		l.Close()
		for _, x := range ls {
			x.Close()
		}
		if ok {
			return port
		}
	}
	t.Fatal("no common free port")
	return 0
}

// TestNodeModeSeparateProcesses builds cqlsim and runs three OS processes,
// one node each, configured through environment variables as containers
// would be, then checks gocql sees one consistent cluster.
func TestNodeModeSeparateProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "cqlsim")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	ips := []string{"127.0.0.41", "127.0.0.42", "127.0.0.43"}
	cqlPort := freePortOn(t, ips)
	adminPort := freePortOn(t, ips)
	clusterSpec := "127.0.0.41/dc1/rack1,127.0.0.42/dc1/rack2,127.0.0.43/dc2/rack1"
	var procs []*exec.Cmd
	t.Cleanup(func() {
		for _, p := range procs {
			_ = p.Process.Signal(os.Interrupt)
		}
		for _, p := range procs {
			_ = p.Wait()
		}
	})
	for _, ip := range ips {
		cmd := exec.Command(bin, "-zero-service")
		cmd.Env = append(os.Environ(), "CQLSIM_CLUSTER="+clusterSpec, "CQLSIM_ADVERTISE="+ip,
			fmt.Sprintf("CQLSIM_PORT=%d", cqlPort), fmt.Sprintf("CQLSIM_ADMIN_PORT=%d", adminPort))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd)
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		assert.Contains(t, line, "node "+ip)
		go io.Copy(io.Discard, stdout)
	}
	cl := gocql.NewCluster(ips[1])
	cl.Port = cqlPort
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	s, err := cl.CreateSession()
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Query("CREATE KEYSPACE ycsb WITH replication = {'class':'NetworkTopologyStrategy','dc1':2,'dc2':1}").Exec())
	require.NoError(t, s.Query("CREATE TABLE ycsb.usertable (y_id text PRIMARY KEY, field0 text)").Exec())
	for i := 0; i < 20; i++ {
		require.NoError(t, s.Query("INSERT INTO ycsb.usertable (y_id, field0) VALUES (?, ?)", fmt.Sprint("u", i), "v").Exec())
	}
	// any process answers for the whole cluster; dc/rack come from the member list
	for _, ip := range ips {
		c1 := gocql.NewCluster(ip)
		c1.Port = cqlPort
		c1.HostFilter = gocql.WhiteListHostFilter(ip)
		s1, err := c1.CreateSession()
		require.NoError(t, err)
		var n int64
		require.NoError(t, s1.Query("SELECT count(*) FROM ycsb.usertable").Scan(&n))
		assert.EqualValues(t, 20, n, "via %s", ip)
		var dc string
		require.NoError(t, s1.Query("SELECT data_center FROM system.local WHERE key='local'").Scan(&dc))
		if ip == "127.0.0.43" {
			assert.Equal(t, "dc2", dc)
		}
		s1.Close()
	}
}

// TestFlagRanges checks that every sized flag outside its documented range
// is an error naming the flag and the range (sim.Config would silently
// take 0 as its default).
func TestFlagRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-nodes", "0"}, "-nodes = 0, allowed 1..64"},
		{[]string{"-nodes", "65"}, "-nodes = 65, allowed 1..64"},
		{[]string{"-dcs", "0"}, "-dcs = 0, allowed 1..3"},
		{[]string{"-nodes", "2", "-dcs", "3"}, "-dcs = 3, allowed 1..2"},
		{[]string{"-racks", "0"}, "-racks = 0, allowed 1..64"},
		{[]string{"-vnodes", "0"}, "-vnodes = 0, allowed 1..256"},
		{[]string{"-vnodes", "257"}, "-vnodes = 257, allowed 1..256"},
		{[]string{"-port", "-1"}, "-port = -1, allowed 0..65535"},
		{[]string{"-max-frame-size", "100"}, "-max-frame-size = 100, allowed 4096..2146435072"},
		{[]string{"-write-queue-bytes", "0"}, "-write-queue-bytes = 0, allowed 65536..1073741824"},
		{[]string{"-down-delay", "-1s"}, "-down-delay = -1s, allowed 0s..1m"},
	} {
		_, err := parseFlags(tc.args, noEnv, io.Discard)
		assert.EqualError(t, err, tc.want, "%v", tc.args)
	}
	_, err := parseFlags(nil, func(k string) string {
		if k == "CQLSIM_NODES" {
			return "0"
		}
		return ""
	}, io.Discard)
	assert.EqualError(t, err, "-nodes = 0, allowed 1..64", "from the environment too")
	o, err := parseFlags([]string{"-nodes", "64", "-dcs", "64", "-racks", "64", "-vnodes", "256", "-down-delay", "0"}, noEnv, io.Discard)
	require.NoError(t, err, "the bounds themselves are allowed")
	assert.Equal(t, time.Duration(-1), o.downDelayConfig(), "-down-delay 0 = at once")
}
