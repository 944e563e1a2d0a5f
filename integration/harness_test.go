package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/moby/moby/api/types/container"
	mnet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	// label is the key of the label on every container and network a run
	// makes; its value is the test process's PID, so a run removes what
	// dead runs left and never what a concurrent run is using.
	label      = "tailroute-integration-pid"
	imageRepo  = "tailroute-cqlsim"
	imageTag   = "integration"
	adminPort  = 7070
	firstOctet = 100 // node K is 127.0.S.(100+K)
)

// runSubnet is S in the nodes' addresses 127.0.S.(100+K): 1..250 from the
// PID, so concurrent runs on one machine (several worktrees) bind different
// addresses instead of fighting over 127.0.0.10K:9042.
var runSubnet = 1 + os.Getpid()%250

var dockerErr error // why Docker cannot be used, nil when it can

func TestMain(m *testing.M) {
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	dockerErr = probeDocker()
	if dockerErr == nil {
		removeStale()
	}
	code := m.Run()
	if dockerErr == nil {
		removeStale()
	}
	os.Exit(code)
}

func probeDocker() error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("docker CLI not found: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		return fmt.Errorf("docker engine not reachable: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// removeStale force-removes the containers (they would hold their
// addresses' ports) and networks left by runs that are no longer alive
// (interrupted, killed), and this run's own.
func removeStale() {
	stale := func(kind ...string) []string {
		out, _ := exec.Command("docker", append(kind, "--filter", "label="+label, "--format", `{{.ID}} {{.Label "`+label+`"}}`)...).Output()
		var ids []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var id string
			var pid int
			if n, _ := fmt.Sscanf(line, "%s %d", &id, &pid); n == 2 && (pid == os.Getpid() || !processAlive(pid)) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	if ids := stale("ps", "-a"); len(ids) > 0 {
		_ = exec.Command("docker", append([]string{"rm", "-f"}, ids...)...).Run()
	}
	if ids := stale("network", "ls"); len(ids) > 0 {
		_ = exec.Command("docker", append([]string{"network", "rm"}, ids...)...).Run()
	}
}

// processAlive reports whether a process with this PID exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// runLabels are the labels of every container and network of this run.
func runLabels() map[string]string { return map[string]string{label: strconv.Itoa(os.Getpid())} }

// requireDocker skips the test without Docker, or fails it when CI demands Docker.
func requireDocker(t *testing.T) {
	t.Helper()
	if dockerErr == nil {
		return
	}
	if os.Getenv("TAILROUTE_REQUIRE_DOCKER") == "1" {
		t.Fatalf("TAILROUTE_REQUIRE_DOCKER=1 but Docker is unusable: %v", dockerErr)
	}
	t.Skipf("Docker is unusable, skipping the container suite (set TAILROUTE_REQUIRE_DOCKER=1 to fail instead): %v", dockerErr)
}

var (
	imageOnce sync.Once
	imageDir  string
	imageErr  error
)

// buildContext compiles cmd/cqlsim statically into a temporary build context
// next to a copy of docker/Dockerfile.
func buildContext(t *testing.T) string {
	imageOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			imageErr = err
			return
		}
		dir, err := os.MkdirTemp("", "tailroute-image-")
		if err != nil {
			imageErr = err
			return
		}
		imageDir = dir
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "cqlsim"), "./cmd/cqlsim")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			imageErr = fmt.Errorf("building cqlsim: %v\n%s", err, out)
			return
		}
		df, err := os.ReadFile(filepath.Join(root, "docker", "Dockerfile"))
		if err != nil {
			imageErr = err
			return
		}
		imageErr = os.WriteFile(filepath.Join(dir, "Dockerfile"), df, 0o644)
	})
	require.NoError(t, imageErr)
	return imageDir
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// node is one simulated node in a container.
type node struct {
	ip  string // advertised and published loopback address
	ctr testcontainers.Container
}

// cluster is a containerized simulated cluster.
type cluster struct {
	nodes   []*node
	dc      *testcontainers.DockerClient
	network string // the Docker network the test made for it
}

// newCluster makes a labelled Docker network and a Docker client, both
// removed when the test ends; nodes join with startNode.
func newCluster(t *testing.T) *cluster {
	t.Helper()
	ctx := context.Background()
	nw, err := network.New(ctx, network.WithLabels(runLabels()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = nw.Remove(context.Background()) })
	dc, err := testcontainers.NewDockerClientWithOpts(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { dc.Close() })
	return &cluster{dc: dc, network: nw.Name}
}

// startNode starts req as node ip (terminated when the test ends), on the
// cluster's network under alias.
func (c *cluster) startNode(t *testing.T, ip, alias string, req testcontainers.ContainerRequest) {
	t.Helper()
	req.Labels = runLabels()
	req.Networks = []string{c.network}
	req.NetworkAliases = map[string][]string{c.network: {alias}}
	ctr, err := testcontainers.GenericContainer(context.Background(), testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if ctr != nil {
		t.Cleanup(func() { _ = ctr.Terminate(context.Background()) })
	}
	require.NoError(t, err, "starting node %s", ip)
	c.nodes = append(c.nodes, &node{ip: ip, ctr: ctr})
}

func (c *cluster) hosts() []string {
	h := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		h[i] = n.ip
	}
	return h
}

func nodeIP(k int) string { return fmt.Sprintf("127.0.%d.%d", runSubnet, firstOctet+k) }

// startCluster starts n simulated nodes (extra cqlsim flags apply to all) and
// removes them and their network when the test ends.
func startCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	requireDocker(t)
	ctxDir := buildContext(t)
	c := newCluster(t)
	members := make([]string, n)
	for k := 1; k <= n; k++ {
		members[k-1] = fmt.Sprintf("%s@n%d:%d", nodeIP(k), k, adminPort)
	}
	for k := 1; k <= n; k++ {
		ip := nodeIP(k)
		addr := netip.MustParseAddr(ip)
		req := testcontainers.ContainerRequest{
			FromDockerfile: testcontainers.FromDockerfile{Context: ctxDir, Repo: imageRepo, Tag: imageTag, KeepImage: true},
			Cmd: append([]string{"-cluster", strings.Join(members, ","), "-advertise", ip, "-listen", "0.0.0.0",
				"-admin-port", fmt.Sprint(adminPort), "-seed", fmt.Sprint(k)}, extra...),
			ExposedPorts: []string{"9042/tcp", fmt.Sprintf("%d/tcp", adminPort)},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = mnet.PortMap{
					mnet.MustParsePort("9042/tcp"):                       {{HostIP: addr, HostPort: "9042"}},
					mnet.MustParsePort(fmt.Sprintf("%d/tcp", adminPort)): {{HostIP: addr, HostPort: fmt.Sprint(adminPort)}},
				}
			},
			// ForListeningPort checks another host than our 127.0.S.K binding; cqlsim prints this when serving.
			WaitingFor: wait.ForLog("cqlsim ready").WithStartupTimeout(60 * time.Second),
		}
		c.startNode(t, ip, fmt.Sprintf("n%d", k), req)
	}
	return c
}

func (c *cluster) pause(t *testing.T, n *node) {
	_, err := c.dc.ContainerPause(context.Background(), n.ctr.GetContainerID(), client.ContainerPauseOptions{})
	require.NoError(t, err)
}

func (c *cluster) unpause(t *testing.T, n *node) {
	_, err := c.dc.ContainerUnpause(context.Background(), n.ctr.GetContainerID(), client.ContainerUnpauseOptions{})
	require.NoError(t, err)
}

// adminStats is the part of cqlsim's GET /stats the tests read.
type adminStats struct {
	Served uint64 `json:"served"`
}

func served(t *testing.T, n *node) uint64 {
	t.Helper()
	v, err := tryServed(n)
	require.NoError(t, err)
	return v
}

func tryServed(n *node) (uint64, error) {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(fmt.Sprintf("http://%s:%d/stats", n.ip, adminPort))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st adminStats
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st.Served, err
}

// waitUntil polls cond every 200ms until it holds or d passes (then fails the test).
func waitUntil(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func setModel(t *testing.T, n *node, body string) {
	t.Helper()
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Post(fmt.Sprintf("http://%s:%d/model", n.ip, adminPort), "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "POST /model %s", body)
}

// clusterConfig is the gocql configuration the scenarios share: short
// timeouts so a frozen node shows up fast, retries so an idempotent read that
// lands on it moves on to the next replica, quick reconnection of down hosts.
func clusterConfig(hosts []string) *gocql.ClusterConfig {
	cfg := gocql.NewCluster(hosts...)
	cfg.Port = 9042
	cfg.Timeout = 700 * time.Millisecond
	cfg.ConnectTimeout = 5 * time.Second
	cfg.ReconnectInterval = time.Second
	cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 3}
	cfg.Consistency = gocql.One
	cfg.DefaultIdempotence = true
	return cfg
}

// createSchema makes keyspace ks (SimpleStrategy, rf) with usertable and
// inserts keys user0..user(n-1).
func createSchema(t *testing.T, s *gocql.Session, ks string, rf, n int) {
	t.Helper()
	require.NoError(t, s.Query(fmt.Sprintf(`CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}`, ks, rf)).Exec())
	require.NoError(t, s.Query(fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s.usertable (y_id text PRIMARY KEY, field0 text)`, ks)).Exec())
	for i := 0; i < n; i++ {
		require.NoError(t, s.Query(fmt.Sprintf(`INSERT INTO %s.usertable (y_id, field0) VALUES (?, ?)`, ks), fmt.Sprintf("user%d", i), "v").Exec())
	}
}
