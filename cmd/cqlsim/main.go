package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tailroute/tailroute/sim"
)

type options struct {
	// cluster mode
	nodes, dcs, racks, vnodes int
	firstIP                   string
	admin                     bool
	// node mode
	cluster     string
	advertise   string
	listen      string
	adminPort   int
	clusterName string
	// both
	port     int
	seed     int64
	feedback bool
	model    sim.ServiceModel
	// connection limits
	maxFrameSize    int
	writeQueueBytes int
	downDelay       time.Duration
}

// parseFlags parses args with defaults taken from CQLSIM_* variables of getenv.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("cqlsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	m := &o.model
	fs.IntVar(&o.nodes, "nodes", 3, "cluster mode: number of nodes (1..64)")
	fs.IntVar(&o.dcs, "dcs", 1, "cluster mode: datacenters (1..nodes); nodes assigned round robin to dc1..dcK")
	fs.IntVar(&o.racks, "racks", 1, "cluster mode: racks per datacenter (1..64)")
	fs.IntVar(&o.vnodes, "vnodes", 1, "cluster mode: tokens per node (1..256; 1 = evenly spaced, >1 = random from -seed)")
	fs.StringVar(&o.firstIP, "first-ip", "127.0.0.1", "cluster mode: address of node 0; node i listens on first-ip+i")
	fs.BoolVar(&o.admin, "admin", true, "cluster mode: start a JSON admin endpoint per node")
	fs.StringVar(&o.cluster, "cluster", "", "node mode: every member as ip[/dc[/rack[/tok;tok]]][@adminhost:port], comma separated, same list in every process")
	fs.StringVar(&o.advertise, "advertise", "", "node mode: this node's address (one of -cluster); enables node mode")
	fs.StringVar(&o.listen, "listen", "", "node mode: CQL bind address (default the -advertise address; 0.0.0.0 in containers)")
	fs.IntVar(&o.adminPort, "admin-port", 7070, "node mode: admin HTTP port, the same on every member")
	fs.StringVar(&o.clusterName, "cluster-name", "tailroute-sim", "node mode: cluster_name reported in system.local")
	fs.IntVar(&o.port, "port", 0, "CQL port shared by all nodes (0 = pick a free one in cluster mode, 9042 in node mode)")
	fs.Int64Var(&o.seed, "seed", 1, "seed for vnode tokens, service times and fluctuation phases")
	fs.BoolVar(&o.feedback, "feedback", false, "attach queue length and service time to responses (custom payload)")
	fs.IntVar(&m.Workers, "workers", 4, "W: workers per node (1..1024)")
	fs.DurationVar(&m.MeanService, "mean-service", 4*time.Millisecond, "1/mu: mean exponential service time")
	fs.BoolVar(&m.ZeroService, "zero-service", false, "serve without artificial delay")
	fs.Float64Var(&m.Slowdown, "slowdown", 1, "service time multiplier (> 0)")
	fs.DurationVar(&m.FluctuationInterval, "fluct-interval", 0, "T: every T each node serves at mu or mu/D (0 = off)")
	fs.Float64Var(&m.FluctuationD, "fluct-d", 3, "D: slow-phase rate divisor (>= 1)")
	fs.DurationVar(&m.PauseEvery, "pause-every", 0, "period of stop-the-world pauses (0 = off)")
	fs.DurationVar(&m.PauseFor, "pause-for", 0, "length of each periodic pause")
	fs.Float64Var(&m.ErrorRate, "error-rate", 0, "probability (0..1) that a data request fails with -injected-error")
	fs.StringVar(&m.InjectedError, "injected-error", "overloaded", "overloaded | unavailable | read_timeout")
	fs.IntVar(&o.maxFrameSize, "max-frame-size", sim.DefaultMaxFrameSize,
		"largest request frame in bytes, header included (native_transport_max_frame_size; 4096..2047 MiB); longer ones get a ProtocolError")
	fs.IntVar(&o.writeQueueBytes, "write-queue-bytes", sim.DefaultWriteQueueBytes,
		"responses queued per client connection before a client that does not read is disconnected (64 KiB..1 GiB)")
	fs.DurationVar(&o.downDelay, "down-delay", sim.DefaultDownDelay,
		"after a node stops and its connections close, the delay before the others announce it DOWN (0..1m)")
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := "CQLSIM_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" && envErr == nil {
			if err := f.Value.Set(v); err != nil {
				envErr = fmt.Errorf("%s=%q: %v", name, v, err)
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := o.checkRanges(); err != nil {
		return nil, err
	}
	if m.ZeroService {
		m.MeanService = 0
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if o.advertise == "" && o.cluster != "" {
		return nil, errors.New("-cluster needs -advertise (this node's address) to run in node mode")
	}
	return o, nil
}

// checkRanges rejects flag values out of their documented range, naming
// the flag (sim.Config would take 0 as "default" instead).
func (o *options) checkRanges() error {
	for _, f := range []struct {
		name      string
		v, lo, hi int
	}{
		{"nodes", o.nodes, 1, 64},
		{"dcs", o.dcs, 1, max(o.nodes, 1)},
		{"racks", o.racks, 1, 64},
		{"vnodes", o.vnodes, 1, 256},
		{"port", o.port, 0, 65535},
		{"max-frame-size", o.maxFrameSize, 4 << 10, 2047 << 20},
		{"write-queue-bytes", o.writeQueueBytes, 64 << 10, 1 << 30},
	} {
		if f.v < f.lo || f.v > f.hi {
			return fmt.Errorf("-%s = %d, allowed %d..%d", f.name, f.v, f.lo, f.hi)
		}
	}
	if o.downDelay < 0 || o.downDelay > time.Minute {
		return fmt.Errorf("-down-delay = %v, allowed 0s..1m", o.downDelay)
	}
	return nil
}

// downDelay converts -down-delay to Config.DownDelay (where 0 means default).
func (o *options) downDelayConfig() time.Duration {
	if o.downDelay == 0 {
		return -1
	}
	return o.downDelay
}

// parseMembers parses the -cluster list.
func parseMembers(spec string, adminPort int) ([]sim.PeerConfig, error) {
	parts := strings.Split(spec, ",")
	even := sim.SplitTokens(len(parts))
	out := make([]sim.PeerConfig, 0, len(parts))
	for i, p := range parts {
		// An optional "@host:port" names where the member's admin endpoint is
		// reached for write/DDL forwarding when that differs from its
		// advertised address (containers advertise 127.0.0.K to the client but
		// reach each other over a Docker network).
		p, admin, hasAdmin := strings.Cut(strings.TrimSpace(p), "@")
		if hasAdmin {
			if _, _, err := net.SplitHostPort(admin); err != nil {
				return nil, fmt.Errorf("-cluster member %d: admin address %q, want host:port", i, admin)
			}
		}
		f := strings.Split(p, "/")
		if len(f) > 4 || f[0] == "" {
			return nil, fmt.Errorf("-cluster member %d = %q, want ip[/dc[/rack[/tok;tok...]]][@adminhost:port]", i, p)
		}
		if net.ParseIP(f[0]) == nil {
			return nil, fmt.Errorf("-cluster member %d: ip %q is not an IP address", i, f[0])
		}
		pc := sim.PeerConfig{IP: f[0], DC: "dc1", Rack: "rack1", Tokens: []int64{even[i]},
			Admin: net.JoinHostPort(f[0], strconv.Itoa(adminPort))}
		if hasAdmin {
			pc.Admin = admin
		}
		if len(f) > 1 && f[1] != "" {
			pc.DC = f[1]
		}
		if len(f) > 2 && f[2] != "" {
			pc.Rack = f[2]
		}
		if len(f) > 3 && f[3] != "" {
			pc.Tokens = nil
			for _, ts := range strings.Split(f[3], ";") {
				tok, err := strconv.ParseInt(ts, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("-cluster member %d: token %q is not a 64-bit integer", i, ts)
				}
				pc.Tokens = append(pc.Tokens, tok)
			}
		}
		out = append(out, pc)
	}
	return out, nil
}

// start starts the cluster or node described by o.
func start(ctx context.Context, o *options) (*sim.Cluster, error) {
	if o.advertise == "" {
		return sim.Start(ctx, sim.Config{Nodes: o.nodes, DCs: o.dcs, Racks: o.racks, VNodes: o.vnodes,
			FirstIP: o.firstIP, Port: o.port, Model: o.model, Feedback: o.feedback, Seed: o.seed, AdminHTTP: o.admin,
			MaxFrameSize: o.maxFrameSize, WriteQueueBytes: o.writeQueueBytes, DownDelay: o.downDelayConfig()})
	}
	if o.adminPort < 1 || o.adminPort > 65535 {
		return nil, fmt.Errorf("-admin-port = %d, allowed 1..65535", o.adminPort)
	}
	spec := o.cluster
	if spec == "" {
		spec = o.advertise
	}
	members, err := parseMembers(spec, o.adminPort)
	if err != nil {
		return nil, err
	}
	self := -1
	for i, m := range members {
		if m.IP == o.advertise {
			self = i
		}
	}
	if self < 0 {
		return nil, fmt.Errorf("-advertise = %q is not one of the -cluster members", o.advertise)
	}
	var peers []sim.PeerConfig
	for i, m := range members {
		if i != self {
			peers = append(peers, m)
		}
	}
	adminListen := net.JoinHostPort(o.listen, strconv.Itoa(o.adminPort))
	if o.listen == "" {
		adminListen = members[self].Admin
	}
	port := o.port
	if port == 0 {
		port = 9042
	}
	return sim.StartNode(ctx, sim.NodeConfig{Self: members[self], Listen: o.listen, Port: port,
		AdminListen: adminListen, Peers: peers, ClusterName: o.clusterName, Model: o.model,
		Feedback: o.feedback, Seed: o.seed,
		MaxFrameSize: o.maxFrameSize, WriteQueueBytes: o.writeQueueBytes, DownDelay: o.downDelayConfig()})
}

// describe prints the nodes' addresses and the ready line.
func describe(w io.Writer, c *sim.Cluster) {
	for _, n := range c.Nodes() {
		admin := "-"
		if a := n.AdminAddr(); a != "" {
			admin = "http://" + a
		}
		toks := n.Tokens()
		tokStr := fmt.Sprint(toks)
		if len(toks) > 4 {
			tokStr = fmt.Sprintf("[%d %d ... %d tokens]", toks[0], toks[1], len(toks))
		}
		fmt.Fprintf(w, "node %s:%d dc=%s rack=%s host_id=%s tokens=%s admin=%s\n",
			n.IP(), c.Port(), n.DC(), n.Rack(), n.HostID(), tokStr, admin)
	}
	fmt.Fprintf(w, "cqlsim ready hosts=%s port=%d\n", strings.Join(c.Hosts(), ","), c.Port())
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, err := start(sctx, o)
	cancel()
	if err != nil {
		return err
	}
	describe(stdout, c)
	<-ctx.Done()
	return c.Close()
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "cqlsim:", err)
		os.Exit(2)
	}
}
