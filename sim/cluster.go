package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes an in-process simulated cluster.
type Config struct {
	Nodes     int          // number of nodes; default 3; 1..64
	DCs       int          // datacenters; default 1; nodes are assigned round robin to "dc1".."dcK"
	Racks     int          // racks per DC; default 1 ("rack1"..); a DC's nodes are assigned round robin
	VNodes    int          // tokens per node; default 1 (evenly spaced Murmur3 tokens); >1 = random vnodes from Seed
	FirstIP   string       // default "127.0.0.1"; node i (0-based) listens on FirstIP+i
	Port      int          // 0 = pick one port that is free on every node address (same port on all nodes), from 20000-31999: below the kernel's ephemeral range
	Model     ServiceModel // default model of every node (zero fields take DefaultModel values)
	Feedback  bool         // attach queue length & service time to responses in the CQL custom payload
	Seed      int64        // seeds vnode tokens, host ids, service times and fluctuation phases
	AdminHTTP bool         // start a per-node JSON admin endpoint on 127.0.0.K:<ephemeral>

	// MaxFrameSize is the largest request frame a node accepts, header
	// included (Cassandra's native_transport_max_frame_size); a longer one
	// is answered with a ProtocolError. Default DefaultMaxFrameSize (16 MiB);
	// 4 KiB..2047 MiB.
	MaxFrameSize int
	// WriteQueueBytes bounds the responses queued for one client connection
	// and not yet written to its socket. A client that does not read its
	// responses fills its socket buffers, then this queue, and is then
	// disconnected instead of holding up event broadcasts, node workers or
	// Node.Stop. A single response larger than the bound is still sent.
	// Default DefaultWriteQueueBytes (16 MiB); 64 KiB..1 GiB.
	WriteQueueBytes int
	// DownDelay is how long after Node.Stop has closed the node's client
	// connections the other nodes announce STATUS_CHANGE DOWN to their
	// registered clients, as gossip does in a real cluster (the drivers
	// see the connections close first). Default DefaultDownDelay (500ms);
	// 0..1m; -1 announces at once.
	DownDelay time.Duration
	// Network, when set, delays data requests and their answers by the
	// one-way delays between the client's zone and the node's (and between
	// coordinator and replica for a forwarded read), and counts traffic per
	// (client zone, node zone): see Network, Cluster.ClientAddr and
	// Cluster.Traffic. Nil: no delay, as a loopback network has. Not with
	// ZeroService models.
	Network *Network
}

// Defaults of Config.WriteQueueBytes and Config.DownDelay.
const (
	DefaultWriteQueueBytes = 16 << 20
	DefaultDownDelay       = 500 * time.Millisecond
)

// connLimits are the per-connection limits and the DOWN announcement
// delay of a cluster's nodes (already defaulted and validated).
type connLimits struct {
	MaxFrameSize    int
	WriteQueueBytes int
	DownDelay       time.Duration
}

func (l connLimits) withDefaults() connLimits {
	if l.MaxFrameSize == 0 {
		l.MaxFrameSize = DefaultMaxFrameSize
	}
	if l.WriteQueueBytes == 0 {
		l.WriteQueueBytes = DefaultWriteQueueBytes
	}
	if l.DownDelay == 0 {
		l.DownDelay = DefaultDownDelay
	} else if l.DownDelay == -1 {
		l.DownDelay = 0
	}
	return l
}

// validate checks defaulted limits; typ names the config type in errors.
func (l connLimits) validate(typ string) error {
	switch {
	case l.MaxFrameSize < 4<<10 || l.MaxFrameSize > 2047<<20:
		return fmt.Errorf("sim: %s.MaxFrameSize = %d, allowed %d..%d (4 KiB..2047 MiB; 0 = default %d)",
			typ, l.MaxFrameSize, 4<<10, 2047<<20, DefaultMaxFrameSize)
	case l.WriteQueueBytes < 64<<10 || l.WriteQueueBytes > 1<<30:
		return fmt.Errorf("sim: %s.WriteQueueBytes = %d, allowed %d..%d (64 KiB..1 GiB; 0 = default %d)",
			typ, l.WriteQueueBytes, 64<<10, 1<<30, DefaultWriteQueueBytes)
	case l.DownDelay < 0 || l.DownDelay > time.Minute:
		return fmt.Errorf("sim: %s.DownDelay = %v, allowed 0..1m (0 = default %v, -1 = at once)",
			typ, l.DownDelay, DefaultDownDelay)
	}
	return nil
}

// Custom payload keys attached to data responses when Config.Feedback is on.
const (
	PayloadQueueLen    = "tailroute-q"  // queue length (q_s), 8-byte big-endian uint64
	PayloadServiceTime = "tailroute-st" // service time of this request in microseconds, 8-byte big-endian uint64
)

// Cluster is a set of simulated nodes sharing one ring and schema. In process
// mode (StartNode) it holds one local node and its remote peers.
type Cluster struct {
	clusterName string
	port        int
	members     []*member
	nodes       []*Node // local nodes in member order
	byIP        map[string]*Node
	ring        *ring
	schema      *schema
	feedback    bool
	net         *network // Config.Network; nil: none
	limits      connLimits
	start       time.Time
	httpClient  *http.Client // process mode forwarding

	planCache     sync.Map // planKey -> *plan (unprepared queries)
	planCacheSize atomic.Int64

	closeOnce sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

func (cfg Config) withDefaults() Config {
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.DCs == 0 {
		cfg.DCs = 1
	}
	if cfg.Racks == 0 {
		cfg.Racks = 1
	}
	if cfg.VNodes == 0 {
		cfg.VNodes = 1
	}
	if cfg.FirstIP == "" {
		cfg.FirstIP = "127.0.0.1"
	}
	cfg.Model = cfg.Model.withDefaults()
	return cfg
}

func (cfg Config) limits() connLimits {
	return connLimits{MaxFrameSize: cfg.MaxFrameSize, WriteQueueBytes: cfg.WriteQueueBytes, DownDelay: cfg.DownDelay}.withDefaults()
}

func (cfg Config) validate() error {
	if err := cfg.limits().validate("Config"); err != nil {
		return err
	}
	switch {
	case cfg.Nodes < 1 || cfg.Nodes > 64:
		return fmt.Errorf("sim: Config.Nodes = %d, allowed 1..64", cfg.Nodes)
	case cfg.DCs < 1 || cfg.DCs > cfg.Nodes:
		return fmt.Errorf("sim: Config.DCs = %d, allowed 1..Nodes (%d)", cfg.DCs, cfg.Nodes)
	case cfg.Racks < 1 || cfg.Racks > 64:
		return fmt.Errorf("sim: Config.Racks = %d, allowed 1..64", cfg.Racks)
	case cfg.VNodes < 1 || cfg.VNodes > 256:
		return fmt.Errorf("sim: Config.VNodes = %d, allowed 1..256", cfg.VNodes)
	case cfg.Port < 0 || cfg.Port > 65535:
		return fmt.Errorf("sim: Config.Port = %d, allowed 0..65535", cfg.Port)
	}
	if _, err := nodeIPs(cfg.FirstIP, cfg.Nodes); err != nil {
		return err
	}
	return cfg.Model.Validate()
}

func nodeIPs(first string, n int) ([]string, error) {
	ip := net.ParseIP(first).To4()
	if ip == nil {
		return nil, fmt.Errorf("sim: Config.FirstIP = %q, must be an IPv4 address such as 127.0.0.1", first)
	}
	base := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	if uint64(base)+uint64(n-1) > 0xffffffff || (base>>24) != ((base+uint32(n-1))>>24) {
		return nil, fmt.Errorf("sim: Config.FirstIP = %q with %d nodes leaves the /8 network", first, n)
	}
	out := make([]string, n)
	for i := range out {
		v := base + uint32(i)
		out[i] = net.IPv4(byte(v>>24), byte(v>>16), byte(v>>8), byte(v)).String()
	}
	return out, nil
}

// Start starts an in-process cluster of cfg.Nodes nodes on FirstIP..FirstIP+N-1,
// all on the same port. ctx only bounds start-up; stop the cluster with Close.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ips, _ := nodeIPs(cfg.FirstIP, cfg.Nodes)
	var toks [][]int64
	if cfg.VNodes == 1 {
		toks = evenTokens(cfg.Nodes)
	} else {
		toks = randomTokens(cfg.Nodes, cfg.VNodes, cfg.Seed)
	}
	c := newCluster("tailroute-sim", cfg.Feedback)
	c.limits = cfg.limits()
	perDC := make([]int, cfg.DCs)
	for i, ip := range ips {
		dc := i % cfg.DCs
		rack := perDC[dc] % cfg.Racks
		perDC[dc]++
		c.members = append(c.members, &member{idx: i, ip: ip, dc: fmt.Sprintf("dc%d", dc+1),
			rack: fmt.Sprintf("rack%d", rack+1), tokens: toks[i], hostID: nameUUID(fmt.Sprintf("host:%s:%d", ip, cfg.Seed))})
	}
	if cfg.Network != nil {
		c.net = newNetwork(*cfg.Network, c.members)
		if err := c.net.cfg.validate(); err != nil {
			return nil, err
		}
	}
	lns, port, err := listenAll(ctx, ips, cfg.Port)
	if err != nil {
		return nil, err
	}
	c.port = port
	c.finishSetup()
	for i, m := range c.members {
		n := newNode(c, m, cfg.Model, uint64(cfg.Seed)^uint64(i+1)*0x9e3779b97f4a7c15)
		c.nodes = append(c.nodes, n)
		c.byIP[m.ip] = n
		n.serve(lns[i])
		if cfg.AdminHTTP {
			if err := n.startAdmin(m.ip + ":0"); err != nil {
				c.Close()
				return nil, err
			}
		}
	}
	return c, nil
}

func newCluster(name string, feedback bool) *Cluster {
	return &Cluster{clusterName: name, byIP: map[string]*Node{}, feedback: feedback,
		limits: connLimits{}.withDefaults(), start: time.Now(), done: make(chan struct{})}
}

func (c *Cluster) finishSetup() {
	c.ring = newRing(c.members)
	c.schema = newSchema(c.ring)
}

// listenAll listens on port on every ip; port 0 picks one port free on all.
func listenAll(ctx context.Context, ips []string, port int) ([]net.Listener, int, error) {
	var lc net.ListenConfig
	tryPort := func(p int) ([]net.Listener, int, error) {
		lns := make([]net.Listener, 0, len(ips))
		for _, ip := range ips {
			ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(ip, fmt.Sprint(p)))
			if err != nil {
				for _, l := range lns {
					l.Close()
				}
				return nil, 0, err
			}
			if p == 0 {
				p = ln.Addr().(*net.TCPAddr).Port
			}
			lns = append(lns, ln)
		}
		return lns, p, nil
	}
	if port != 0 {
		lns, p, err := tryPort(port)
		if err != nil {
			return nil, 0, fmt.Errorf("sim: cannot listen on port %d on every node address: %w", port, err)
		}
		return lns, p, nil
	}
	// Ports come from below Linux's default ephemeral range (32768-60999),
	// which the kernel hands to client sockets: a stopped node's port in
	// that range can be taken by an outgoing connection before Restart
	// binds it again, and a client dialling a port nobody listens on can
	// be given that very port and connect to itself (TCP self-connect),
	// then wait for an answer that never comes. Port 0 is the fallback.
	var lastErr error
	for attempt := 0; attempt < 50; attempt++ {
		p := 0
		if attempt < 40 {
			p = simPortMin + rand.IntN(simPortMax-simPortMin)
		}
		lns, p, err := tryPort(p)
		if err == nil {
			return lns, p, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, 0, fmt.Errorf("sim: no port free on every node address after 50 attempts: %w", lastErr)
}

// The range listenAll picks ports from when none is given.
const simPortMin, simPortMax = 20000, 32000

// Hosts returns the node IPs, e.g. ["127.0.0.1","127.0.0.2",...] (local and
// remote members, in ring configuration order).
func (c *Cluster) Hosts() []string {
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.ip
	}
	return out
}

// Port returns the CQL port shared by all nodes.
func (c *Cluster) Port() int { return c.port }

// Nodes returns the nodes running in this process.
func (c *Cluster) Nodes() []*Node { return append([]*Node(nil), c.nodes...) }

// Node returns the local node with address ip, or nil if unknown.
func (c *Cluster) Node(ip string) *Node { return c.byIP[ip] }

// ReplicasFor returns the IPs of the replicas of a partition key (its
// serialized bytes, e.g. the UTF-8 of a text key) in keyspace ks, in ring
// order, or nil if the keyspace does not exist.
func (c *Cluster) ReplicasFor(ks string, key []byte) []string {
	idx := c.schema.replicasOf(ks, Murmur3Token(key))
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, c.members[i].ip)
	}
	return out
}

// Close stops every node: listeners, connections, workers and admin
// endpoints. No goroutine is left when it returns.
func (c *Cluster) Close() error {
	var errs []error
	c.closeOnce.Do(func() {
		close(c.done)
		for _, n := range c.nodes {
			if err := n.shutdown(); err != nil {
				errs = append(errs, err)
			}
		}
		c.wg.Wait()
		if c.httpClient != nil {
			c.httpClient.CloseIdleConnections()
		}
	})
	return errors.Join(errs...)
}
