package integration

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	mnet "github.com/moby/moby/api/types/network"
	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/policy"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// TestRealCassandra runs discovery and the pause scenario against a real
// Cassandra image named by TAILROUTE_CASSANDRA_IMAGE that is already present
// locally (nothing is pulled). Three nodes join one after another with the
// image's default vnodes (never initial_token=0), each publishing CQL on
// 127.0.S.20K and advertising it as broadcast_rpc_address.
func TestRealCassandra(t *testing.T) {
	img := os.Getenv("TAILROUTE_CASSANDRA_IMAGE")
	if img == "" {
		t.Skip("TAILROUTE_CASSANDRA_IMAGE is not set: skipping the real-Cassandra suite (set it to a locally present image such as cassandra:5.0)")
	}
	requireDocker(t)
	if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
		t.Skipf("TAILROUTE_CASSANDRA_IMAGE=%s is not present locally and images are never pulled here: skipping", img)
	}
	c := newCluster(t)
	for k := 1; k <= 3; k++ {
		ip := nodeIP(100 + k) // 127.0.S.(200+k)
		addr := netip.MustParseAddr(ip)
		req := testcontainers.ContainerRequest{
			Image:        img,
			ExposedPorts: []string{"9042/tcp"},
			Env: map[string]string{
				"CASSANDRA_CLUSTER_NAME": "tailroute", "CASSANDRA_SEEDS": "c1", "CASSANDRA_DC": "dc1",
				"CASSANDRA_ENDPOINT_SNITCH": "GossipingPropertyFileSnitch", "CASSANDRA_BROADCAST_RPC_ADDRESS": ip,
				"MAX_HEAP_SIZE": "1G", "HEAP_NEWSIZE": "200M",
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = mnet.PortMap{mnet.MustParsePort("9042/tcp"): {{HostIP: addr, HostPort: "9042"}}}
			},
			WaitingFor: wait.ForLog("Starting listening for CQL clients").WithStartupTimeout(4 * time.Minute),
		}
		c.startNode(t, ip, fmt.Sprintf("c%d", k), req)
	}

	var pol *policy.Policy
	setup, _ := session(t, []string{c.nodes[0].ip}, "", tailroute(t, &pol))
	up := 0
	for _, h := range pol.Stats() {
		if ip, _, err := net.SplitHostPort(h.Address); err == nil && h.Up && slices.Contains(c.hosts(), ip) {
			up++
		}
	}
	assert.Equal(t, 3, up, "all three Cassandra nodes discovered on their 127.0.S.20K addresses")
	createSchema(t, setup, "faults", 3, 100)

	s, _ := session(t, c.hosts(), "faults", tailroute(t, &pol))
	done := make(chan []op)
	go func() { done <- readLoad(s, 100, 8, 5*time.Second) }()
	time.Sleep(time.Second)
	c.pause(t, c.nodes[1])
	time.Sleep(2 * time.Second)
	c.unpause(t, c.nodes[1])
	ops := <-done
	_, n, errs := p99(ops, time.Time{}, time.Now().Add(time.Hour))
	assert.Empty(t, errs, "idempotent reads with a retry policy while a replica is paused (of %d)", n)
}
