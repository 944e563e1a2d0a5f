// Policy scenarios that pin the adapter to the engine and the driver: strategy
// names, error codes, replica sets, and what token awareness needs.

package contract

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// StrategyRoundTrip pins the adapter's Strategy to the routing engine's:
// each constant's String parses back to itself, WithStrategy accepts it and
// the Policy reports it.
func StrategyRoundTrip(t *testing.T, d Driver) {
	want := map[tailroute.Strategy]string{tailroute.C3: "c3", tailroute.P2C: "p2c", tailroute.RoundRobin: "roundrobin"}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(s), s.String(), name)
		}
		got, err := tailroute.ParseStrategy(name)
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v; want %v", name, got, err, s)
		}
		p, err := d.New(tailroute.WithStrategy(s))
		if err != nil {
			t.Fatalf("New(WithStrategy(%v)): %v", s, err)
		}
		if p.Strategy() != s {
			t.Errorf("Policy.Strategy() = %v, want %v", p.Strategy(), s)
		}
	}
	if got := tailroute.Strategy(7).String(); got != "Strategy(7)" {
		t.Errorf("Strategy(7).String() = %q", got)
	}
}

// ErrorCodesMatchDriver pins the protocol's error codes that
// internal/cqlerr classifies by to the driver's.
func ErrorCodesMatchDriver(t *testing.T, d Driver) {
	assert.Equal(t, []int{cqlerr.CodeServer, cqlerr.CodeUnavailable, cqlerr.CodeOverloaded, cqlerr.CodeBootstrapping,
		cqlerr.CodeWriteTimeout, cqlerr.CodeReadTimeout, cqlerr.CodeReadFailure, cqlerr.CodeWriteFailure,
		cqlerr.CodeSyntax, cqlerr.CodeUnauthorized, cqlerr.CodeInvalid, 0x2500}, d.ErrorCodes)
}

// ReplicaSetsMatchDriver compares the policy's replica sets with those of
// the driver's own TokenAwareHostPolicy on the same ring, and with the
// simulator's data placement, for SimpleStrategy and
// NetworkTopologyStrategy. Both drivers (gocql v1.7.0, v2.1.2) list a host
// twice in some NetworkTopologyStrategy plans with vnodes; their distinct
// set is then contained in ours. Without vnodes their sets are exact.
func ReplicaSetsMatchDriver(t *testing.T, d Driver) {
	keyspaces := map[string]string{
		"rs_simple3": "{'class':'SimpleStrategy','replication_factor':3}",
		"rs_simple1": "{'class':'SimpleStrategy','replication_factor':1}",
		"rs_nts22":   "{'class':'NetworkTopologyStrategy','dc1':2,'dc2':2}",
		"rs_nts31":   "{'class':'NetworkTopologyStrategy','dc1':3,'dc2':1}",
		"rs_nts_dc1": "{'class':'NetworkTopologyStrategy','dc1':2}",
	}
	dupsAt := map[int]int{}
	for _, vn := range []int{1, 8} {
		t.Run(fmt.Sprintf("vnodes=%d", vn), func(t *testing.T) {
			c := simtest.Start(t, sim.Config{Nodes: 7, DCs: 2, Racks: 2, VNodes: vn, Seed: 3, Model: sim.ServiceModel{ZeroService: true}})
			p := d.policy(t)
			s := d.session(t, c, p, Config{})
			for ks, rep := range keyspaces {
				d.createKeyspace(t, s, p, ks, rep)
			}
			driverPlan := s.TokenAware()
			rng := rand.New(rand.NewPCG(1, uint64(vn)))
			for ks := range keyspaces {
				same, dups := 0, 0
				for i := 0; i < 1500; i++ {
					key := []byte(fmt.Sprintf("user%d", rng.Uint64()))
					theirs := driverPlan(ks, key)
					ours := d.Replicas(p, ks, key)
					require.NotEmpty(t, ours, "%s routed", ks)
					require.Len(t, simtest.Set(ours), len(ours), "%s: no host twice: %v", ks, ours)
					if len(simtest.Set(theirs)) != len(theirs) {
						dups++
						require.Contains(t, keyspaces[ks], "NetworkTopology")
						require.Subset(t, ours, simtest.Set(theirs), "%s key %s", ks, key)
					} else {
						require.Equal(t, simtest.Set(theirs), simtest.Set(ours), "%s key %s", ks, key)
						same++
					}
					// and both agree with where the simulator stores the row
					assert.Equal(t, simtest.Set(c.ReplicasFor(ks, key)), simtest.Set(ours), "%s key %s: simulator placement", ks, key)
				}
				dupsAt[vn] += dups
				t.Logf("%s vnodes=%d: %d identical sets, %d where the driver repeats a host", ks, vn, same, dups)
			}
		})
	}
	assert.Zero(t, dupsAt[1], "without vnodes the driver's sets are exact")
	assert.Positive(t, dupsAt[8], "the driver repeats hosts with vnodes and NTS; if it no longer does, update docs/RESULTS.md and the package docs")
}

// WhatTokenAwarenessNeeds pins the README's rule on keyspace ta with table
// usertable: over a session without ClusterConfig.Keyspace (plain) and one
// whose ClusterConfig.Keyspace is ta (withKS), a bound ? marker on a
// qualified table, or a routing key with the session's keyspace, is
// routed; a literal value, or a routing key without a keyspace, counts as
// Unrouted.
func WhatTokenAwarenessNeeds(t *testing.T, d Driver) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	type session struct {
		Session
		p Policy
	}
	var sessions []session
	for _, keyspace := range []string{"", "ta"} {
		p := d.policy(t)
		s := d.session(t, c, p, Config{Keyspace: keyspace})
		if keyspace == "" {
			d.createKeyspace(t, s, p, "ta", "{'class':'SimpleStrategy','replication_factor':2}")
		}
		sessions = append(sessions, session{s, p})
	}
	const ks = "ta"
	plain, withKS := sessions[0], sessions[1]
	cases := []struct {
		name     string
		s        session
		stmt     string
		key      []byte
		args     []any
		unrouted uint64
	}{
		{"bound marker, qualified table", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = ?", nil, []any{"user1"}, 0},
		{"literal value", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = 'user1'", nil, nil, 1},
		{"routing key, no keyspace", plain, "SELECT field0 FROM " + ks + ".usertable WHERE y_id = 'user1'", []byte("user1"), nil, 1},
		{"routing key, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = 'user1'", []byte("user1"), nil, 0},
		{"literal value, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = 'user1'", nil, nil, 1},
		{"bound marker, session keyspace", withKS, "SELECT field0 FROM usertable WHERE y_id = ?", nil, []any{"user1"}, 0},
	}
	for _, c := range cases {
		before := c.s.p.Counters().Unrouted
		if err := c.s.Exec(c.stmt, c.key, c.args...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := c.s.p.Counters().Unrouted - before; got != c.unrouted {
			t.Errorf("%s: Unrouted grew by %d, want %d", c.name, got, c.unrouted)
		}
	}
}
