// Availability zones (issue 43): the embedded cluster's racks and the
// network between them (sim.Network), the zone of each client, the zone
// scenarios, the tailroute-rack policy and the share of requests that
// left the client's zone.

package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	apolicy "github.com/tailroute/tailroute/apache/policy"
	"github.com/tailroute/tailroute/internal/report"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/sim"
)

// zoneOptions are the zone flags as parsed.
type zoneOptions struct {
	racks      int              // -racks: racks per DC of the embedded cluster; > 1 turns the network model on
	clientRack string           // -client-rack: every client's rack, or "spread" (client c in rack c mod racks + 1)
	latency    [3]time.Duration // -zone-latency: one-way same rack, other rack, other DC
}

// zoneScenarios set the embedded cluster's zones when the flags do not:
// 6 nodes in 3 racks of dc1, NetworkTopologyStrategy dc1:3 (one replica
// per rack), the clients in rack1 (zones-spread: over the three).
var zoneScenarios = map[string]bool{"zones": true, "zone-slow": true, "zone-pause": true, "zones-spread": true}

func zoneFlags(c *cli) func(fs *flagDefs) func(o *options) error {
	return func(fs *flagDefs) func(o *options) error {
		racks := fs.Int("racks", 1, "embedded cluster: racks (availability zones) per DC, rack1..rackK; > 1 turns the simulator's network between zones on (-zone-latency); the zone scenarios set 3")
		client := fs.String("client-rack", "rack1", "the clients' rack (zone) with -racks > 1, or spread (client c in rack (c mod racks)+1); tailroute-rack is given it")
		lat := fs.String("zone-latency", "50us,500us,30ms", "one-way network delay within a rack, between racks of a DC and between DCs (each message also +-20 % jitter)")
		return func(o *options) error {
			z := &o.zones
			z.racks, z.clientRack = *racks, strings.TrimSpace(*client)
			if zoneScenarios[o.scenario.name] && o.hosts == nil {
				if !c.set["racks"] {
					z.racks = 3
				}
				if !c.set["nodes"] {
					o.nodes = 6
				}
				if o.replication == nil && !c.set["rf"] && o.dcs == 1 {
					o.replication = []dcReplicas{{"dc1", 3}}
				}
				if o.scenario.name == "zones-spread" && !c.set["client-rack"] {
					z.clientRack = "spread"
				}
			}
			if z.racks < 1 || z.racks > 64 {
				return badFlag("racks", z.racks, "1..64")
			}
			if z.racks > 1 && o.hosts != nil {
				return &flagError{"-racks shapes the embedded simulated cluster; with -hosts the cluster's own racks apply"}
			}
			if z.clientRack != "spread" {
				ok := false
				for i := 1; i <= z.racks; i++ {
					ok = ok || z.clientRack == fmt.Sprint("rack", i)
				}
				if !ok {
					return badFlag("client-rack", z.clientRack, fmt.Sprintf("a rack of the embedded cluster, rack1..rack%d (-racks %d), or spread", z.racks, z.racks))
				}
			}
			parts := strings.Split(*lat, ",")
			if len(parts) != 3 {
				return badFlag("zone-latency", *lat, "three durations, same rack,other rack,other DC, e.g. 50us,500us,30ms")
			}
			for i, p := range parts {
				d, err := time.ParseDuration(strings.TrimSpace(p))
				if err != nil || d < 0 || d > time.Second {
					return badFlag("zone-latency", *lat, "three durations 0..1s, same rack,other rack,other DC, e.g. 50us,500us,30ms")
				}
				z.latency[i] = d
			}
			return nil
		}
	}
}

// network is the embedded cluster's sim.Network, nil with one rack.
func (z zoneOptions) network() *sim.Network {
	if z.racks <= 1 {
		return nil
	}
	none := func(d time.Duration) time.Duration {
		if d == 0 {
			return -1
		}
		return d
	}
	return &sim.Network{SameRack: none(z.latency[0]), OtherRack: none(z.latency[1]), OtherDC: none(z.latency[2])}
}

// clientZone is client c's zone.
func (z zoneOptions) clientZone(c int) sim.Zone {
	if z.clientRack == "spread" {
		return sim.Zone{DC: "dc1", Rack: fmt.Sprint("rack", c%z.racks+1)}
	}
	return sim.Zone{DC: "dc1", Rack: z.clientRack}
}

// clientZones are the zones of each run's clients, by cluster: what a
// client's dialer binds to and what tailroute-rack is given.
var clientZones sync.Map // *sim.Cluster -> []sim.Zone

// placeClients records the zones of a run's clients on cluster cl (no
// network: nothing) and returns what forgets them.
func placeClients(cl *sim.Cluster, o *options) func() {
	if cl == nil || o.zones.racks <= 1 {
		return func() {}
	}
	zs := make([]sim.Zone, o.clients)
	for c := range zs {
		zs[c] = o.zones.clientZone(c)
	}
	clientZones.Store(cl, zs)
	return func() { clientZones.Delete(cl) }
}

// zoneOf is client c's zone on cl, false without the network model.
func zoneOf(cl *sim.Cluster, c int) (sim.Zone, bool) {
	v, ok := clientZones.Load(cl)
	if !ok {
		return sim.Zone{}, false
	}
	zs := v.([]sim.Zone)
	return zs[c%len(zs)], true
}

// zoneDialer is the dialer of a client in its zone (nil without one).
func zoneDialer(env policyEnv, timeout time.Duration) (*net.Dialer, error) {
	z, ok := zoneOf(env.cluster, env.client)
	if !ok {
		return nil, nil
	}
	addr, err := env.cluster.ClientAddr(z)
	if err != nil {
		return nil, err
	}
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: timeout}, nil
}

// tailroute-rack: the product (C3, polled server load) told the client's
// rack (tailroute.WithLocalRack, the zone rule with its default bound).
// Without the network between zones (-racks 1) the embedded cluster has
// one rack, which it is told, as rack-aware is (localRack): every replica
// is then in its zone.
func init() {
	opts := func(env policyEnv) ([]tailroute.Option, error) {
		rack := ""
		if z, ok := zoneOf(env.cluster, env.client); ok {
			rack = z.Rack
		} else {
			_, r, err := localRack(env)
			if err != nil {
				return nil, fmt.Errorf("tailroute-rack needs the embedded simulated cluster (omit -hosts)")
			}
			rack = r
		}
		return append(tailrouteOptions(env, tailroute.C3, true, false, serverSignal{poll: true}), tailroute.WithLocalRack(rack)), nil
	}
	registerPolicy(policySpec{
		name: "tailroute-rack", simOnly: true,
		help: "tailroute told the client's rack (WithLocalRack): the in-zone replica first while within WithZoneBound of the best",
		v1: func(env policyEnv, cfg *gocql.ClusterConfig) (installed, error) {
			o, err := opts(env)
			if err != nil {
				return installed{}, err
			}
			_, inst, err := newTailroute(policy.New, policy.Wire, cfg, o)
			return inst, err
		},
		v2: func(env policyEnv, cfg *gocql2.ClusterConfig) (installed, error) {
			o, err := opts(env)
			if err != nil {
				return installed{}, err
			}
			_, inst, err := newTailroute(apolicy.New, apolicy.Wire, cfg, o)
			return inst, err
		},
	})
}

// localNodes are the nodes of the first client's rack.
func localNodes(env *scenarioEnv) []*sim.Node {
	z, _ := zoneOf(env.cluster, 0)
	var out []*sim.Node
	for _, n := range env.cluster.Nodes() {
		if n.Rack() == z.Rack && n.DC() == z.DC {
			out = append(out, n)
		}
	}
	return out
}

func init() {
	steady := func(context.Context, *scenarioEnv) (func(), error) { return func() {}, nil }
	scenarios["zones"] = scenarioSpec{name: "zones", start: steady,
		help: "6 nodes in 3 racks (zones), NetworkTopologyStrategy dc1:3, the clients in rack1, healthy; the network between zones modelled (-zone-latency)"}
	scenarios["zones-spread"] = scenarioSpec{name: "zones-spread", start: steady,
		help: "as zones, the clients spread over the three racks (client c in rack (c mod 3)+1)"}
	scenarios["zone-slow"] = scenarioSpec{
		name: "zone-slow", help: "as zones, the clients' rack's nodes (every partition's in-zone replica) serve -slowdown (5) times slower",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			for _, n := range localNodes(env) {
				m := n.Model()
				m.Slowdown = env.params.slowdown
				if err := n.SetModel(m); err != nil {
					return nil, fmt.Errorf("zone-slow: %w", err)
				}
				env.logf("zone-slow: %s (%s) serves %gx slower", n.IP(), n.Rack(), env.params.slowdown)
			}
			return func() {}, nil
		},
	}
	scenarios["zone-pause"] = scenarioSpec{
		name: "zone-pause", help: "as zones, the clients' rack's nodes stop the world for -pause-for once every -pause-every, staggered",
		start: func(ctx context.Context, env *scenarioEnv) (func(), error) {
			nodes := localNodes(env)
			env.logf("zone-pause: %d nodes of the clients' rack pause %v every %v", len(nodes), env.params.pauseFor, env.params.pauseEvery)
			return staggeredPauses(ctx, env, nodes), nil
		},
	}
}

// zoneStats is the run phase's traffic between zones: the simulator's
// counts at the run's end less those at its start.
func zoneStats(start, end []sim.Traffic) *report.ZoneStats {
	if end == nil {
		return nil
	}
	type key struct{ c, n sim.Zone }
	before := map[key]sim.Traffic{}
	for _, t := range start {
		before[key{t.Client, t.Node}] = t
	}
	zs := &report.ZoneStats{}
	for _, t := range end {
		b := before[key{t.Client, t.Node}]
		req, bytes := t.Requests-b.Requests, t.BytesIn+t.BytesOut-b.BytesIn-b.BytesOut
		zs.Requests += req
		zs.Bytes += bytes
		if t.CrossZone() {
			zs.OutOfZone += req
			zs.CrossZoneBytes += bytes
		}
	}
	zs.Finish()
	return zs
}
