// The network between zones (Config.Network): one-way delays between a
// client's zone and a node's, and between nodes, applied to data requests
// and their answers; bytes and requests counted per (client zone, node
// zone).

package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Zone is a data center and a rack: where a node or a client is.
type Zone struct{ DC, Rack string }

func (z Zone) String() string { return z.DC + "/" + z.Rack }

// Network models the network between zones (availability zones are racks
// in a cloud deployment, regions data centers). Every one-way delay is its
// pair's base delay times 1 + Jitter*u, u uniform in [-1, 1), drawn per
// message. A zero field takes its default; -1 means no delay.
type Network struct {
	SameRack  time.Duration // one-way delay within a rack; default DefaultSameRack (50us)
	OtherRack time.Duration // between racks of one DC; default DefaultOtherRack (500us)
	OtherDC   time.Duration // between DCs; default DefaultOtherDC (30ms)
	Jitter    float64       // default DefaultJitter (0.2); allowed 0..1
	// Client is the zone of a client connecting from an address that is not
	// one of Cluster.ClientAddr's; default the first node's zone. Any DC
	// and rack name is allowed (a client may sit in a zone without nodes).
	Client Zone
}

// Defaults of Network: a same-zone hop, a cross-zone hop within a cloud
// region, and a hop between regions.
const (
	DefaultSameRack  = 50 * time.Microsecond
	DefaultOtherRack = 500 * time.Microsecond
	DefaultOtherDC   = 30 * time.Millisecond
	DefaultJitter    = 0.2
)

func (nw Network) withDefaults(first Zone) Network {
	def := func(d *time.Duration, v time.Duration) {
		switch *d {
		case 0:
			*d = v
		case -1:
			*d = 0
		}
	}
	def(&nw.SameRack, DefaultSameRack)
	def(&nw.OtherRack, DefaultOtherRack)
	def(&nw.OtherDC, DefaultOtherDC)
	if nw.Jitter == 0 {
		nw.Jitter = DefaultJitter
	} else if nw.Jitter == -1 {
		nw.Jitter = 0
	}
	if nw.Client == (Zone{}) {
		nw.Client = first
	}
	return nw
}

func (nw Network) validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"SameRack", nw.SameRack}, {"OtherRack", nw.OtherRack}, {"OtherDC", nw.OtherDC}} {
		if f.d < 0 || f.d > time.Second {
			return fmt.Errorf("sim: Network.%s = %v, allowed 0..1s (0 = default, -1 = no delay)", f.name, f.d)
		}
	}
	if !(nw.Jitter >= 0 && nw.Jitter <= 1) {
		return fmt.Errorf("sim: Network.Jitter = %v, allowed 0..1 (0 = default %v, -1 = none)", nw.Jitter, DefaultJitter)
	}
	if (nw.Client.DC == "") != (nw.Client.Rack == "") {
		return fmt.Errorf("sim: Network.Client = %q/%q, want both a DC and a rack, or neither", nw.Client.DC, nw.Client.Rack)
	}
	return nil
}

// network is a cluster's Network in force, with its traffic counters.
type network struct {
	cfg   Network
	zones []Zone // the nodes' zones, in member order of first appearance: ClientAddr's index
	mu    sync.Mutex
	flows map[[2]Zone]*flow // by (client zone, node zone)
}

// flow counts one (client zone, node zone) pair's traffic.
type flow struct {
	requests atomic.Uint64 // data requests (SELECT, INSERT, ...) received
	frames   atomic.Uint64 // every request frame received, data or not
	in, out  atomic.Uint64 // bytes received from and sent to the clients
}

func newNetwork(cfg Network, members []*member) *network {
	nw := &network{flows: map[[2]Zone]*flow{}}
	for _, m := range members {
		z := Zone{m.dc, m.rack}
		if !slices.Contains(nw.zones, z) {
			nw.zones = append(nw.zones, z)
		}
	}
	nw.cfg = cfg.withDefaults(nw.zones[0])
	return nw
}

// clientNet is the loopback network of Cluster.ClientAddr: zone k's
// clients bind 127.255.0.(k+1).
const clientNet = "127.255.0."

// ClientAddr returns the loopback address a client binds its connections
// to (a dialer's LocalAddr) to be in zone z for the Network model: z must
// be the zone of some node. A client connecting from any other address is
// in Network.Client. Without Config.Network it is an error.
func (c *Cluster) ClientAddr(z Zone) (string, error) {
	if c.net == nil {
		return "", fmt.Errorf("sim: ClientAddr(%v): the cluster has no Config.Network", z)
	}
	for k, x := range c.net.zones {
		if x == z {
			return fmt.Sprintf("%s%d", clientNet, k+1), nil
		}
	}
	return "", fmt.Errorf("sim: ClientAddr(%v): no node is in that zone (zones: %v)", z, c.net.zones)
}

// clientZone is the zone of a client connecting from addr.
func (nw *network) clientZone(addr net.Addr) Zone {
	if ta, ok := addr.(*net.TCPAddr); ok {
		if ip := ta.IP.To4(); ip != nil && ip[0] == 127 && ip[1] == 255 && ip[2] == 0 {
			if k := int(ip[3]) - 1; k >= 0 && k < len(nw.zones) {
				return nw.zones[k]
			}
		}
	}
	return nw.cfg.Client
}

// flowOf returns the counters of (client, node), created on first use.
func (nw *network) flowOf(client, node Zone) *flow {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	k := [2]Zone{client, node}
	f := nw.flows[k]
	if f == nil {
		f = &flow{}
		nw.flows[k] = f
	}
	return f
}

// delay draws one message's one-way delay between zones a and b.
func (nw *network) delay(a, b Zone) time.Duration {
	base := nw.cfg.OtherDC
	switch {
	case a == b:
		base = nw.cfg.SameRack
	case a.DC == b.DC:
		base = nw.cfg.OtherRack
	}
	if base <= 0 || nw.cfg.Jitter == 0 {
		return base
	}
	return time.Duration(float64(base) * (1 + nw.cfg.Jitter*(2*rand.Float64()-1)))
}

// Traffic is what crossed the network between one client zone and one
// node zone (Cluster.Traffic).
type Traffic struct {
	Client, Node Zone
	Requests     uint64 // data requests the clients sent there (what routing chose)
	Frames       uint64 // request frames of any kind (data, control connection, polls)
	BytesIn      uint64 // bytes received from the clients
	BytesOut     uint64 // bytes sent to the clients
}

// CrossZone reports whether the traffic left the client's zone (rack).
func (t Traffic) CrossZone() bool { return t.Client != t.Node }

// Traffic returns the traffic counted so far per (client zone, node zone),
// sorted by client zone then node zone; nil without Config.Network. Node
// to node traffic (forwarded reads) is not counted here.
func (c *Cluster) Traffic() []Traffic {
	if c.net == nil {
		return nil
	}
	c.net.mu.Lock()
	out := make([]Traffic, 0, len(c.net.flows))
	for k, f := range c.net.flows {
		out = append(out, Traffic{Client: k[0], Node: k[1], Requests: f.requests.Load(), Frames: f.frames.Load(),
			BytesIn: f.in.Load(), BytesOut: f.out.Load()})
	}
	c.net.mu.Unlock()
	slices.SortFunc(out, func(a, b Traffic) int {
		return cmp.Or(cmp.Compare(a.Client.DC, b.Client.DC), cmp.Compare(a.Client.Rack, b.Client.Rack),
			cmp.Compare(a.Node.DC, b.Node.DC), cmp.Compare(a.Node.Rack, b.Node.Rack))
	})
	return out
}

// connNet is one connection's place in the network: its flow and the
// zones at either end.
type connNet struct {
	nw           *network
	client, node Zone
	f            *flow
}

// toNode and toClient draw the delay of one message of the connection.
func (cn *connNet) toNode() time.Duration   { return cn.nw.delay(cn.client, cn.node) }
func (cn *connNet) toClient() time.Duration { return cn.nw.delay(cn.node, cn.client) }

// sleepUntil waits until t, more precisely than a Go timer (which wakes
// on whole milliseconds on Linux): a timer covers all but the last 2ms,
// a nanosleep of the calling thread the rest, less its usual overshoot.
// It returns false if done closed during the timer part.
func sleepUntil(t time.Time, done <-chan struct{}) bool {
	d := time.Until(t)
	if d > 3*time.Millisecond {
		tm := time.NewTimer(d - 2*time.Millisecond)
		select {
		case <-tm.C:
		case <-done:
			tm.Stop()
			return false
		}
		d = time.Until(t)
	}
	if d -= nanosleepSlack; d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
	}
	return true
}

// nanosleepSlack is the usual overshoot of a short nanosleep (Linux's
// default timer slack, 50us, plus the wake-up).
const nanosleepSlack = 60 * time.Microsecond
