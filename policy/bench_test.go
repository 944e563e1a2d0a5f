package policy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// BenchmarkPickMark measures one request's host selection: Pick, the first
// NextHost and Mark(nil), with 3 replicas per token (6 simulated nodes,
// SimpleStrategy RF 3, the driver's own HostInfos with tokens), for each
// strategy (c3-rack: with the zone rule, nodes in 3 racks) and for the driver's TokenAwareHostPolicy(RoundRobinHostPolicy())
// (gocql-tokenaware-rr, whichever driver). The v2 adapter runs the same
// benchmark (generated from this file).
//
// C3 runs with MaxBackpressureWait 0: a single goroutine doing millions of
// requests per second is far over any CUBIC sending rate, and with the
// default 1ms bound every iteration would measure that sleep, by design. The
// rate check, token and Algorithm 2 still run.
func BenchmarkPickMark(b *testing.B) {
	c := simtest.Start(b, sim.Config{Nodes: 6, Racks: 3, Seed: 1, Model: sim.ServiceModel{ZeroService: true}})
	p0, err := New()
	require.NoError(b, err)
	s := simSession(b, c, p0)
	createKeyspace(b, s, p0, "bench", "{'class':'SimpleStrategy','replication_factor':3}")
	var infos []*gocql.HostInfo
	infos = p0.r.Hosts()
	require.Len(b, infos, 6)
	const partitioner = "org.apache.cassandra.dht.Murmur3Partitioner"
	queries := make([]fakeQuery, 1024)
	for i := range queries {
		queries[i] = fakeQuery{key: []byte(fmt.Sprintf("user%d", i*7919)), ks: "bench"}
	}
	ours := func(b *testing.B, opts ...tailroute.Option) *Policy {
		p, err := New(opts...)
		require.NoError(b, err)
		p.Init(s)
		p.SetPartitioner(partitioner)
		p.AddHosts(infos)
		reps, ok := p.r.Replicas(p.query(&queries[0]))
		require.True(b, ok)
		require.Len(b, reps, 3)
		return p
	}
	run := func(b *testing.B, pol gocql.HostSelectionPolicy, qs []fakeQuery) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			next := pol.Pick(&qs[i&1023])
			h := next()
			h.Mark(nil)
		}
	}
	for _, tc := range []struct {
		name string
		opts []tailroute.Option
	}{
		{"c3", []tailroute.Option{tailroute.WithMaxBackpressureWait(0)}},
		{"c3-norate", []tailroute.Option{tailroute.WithRateControl(false)}},
		{"c3-rack", []tailroute.Option{tailroute.WithMaxBackpressureWait(0), tailroute.WithLocalRack("rack1")}}, // the zone rule
		{"p2c", []tailroute.Option{tailroute.WithStrategy(tailroute.P2C)}},
		{"roundrobin", []tailroute.Option{tailroute.WithStrategy(tailroute.RoundRobin)}},
	} {
		b.Run(tc.name, func(b *testing.B) { run(b, ours(b, tc.opts...), queries) })
	}
	b.Run("c3-wired", func(b *testing.B) {
		// as with Wire: Mark only ends the attempt, the observer measures
		p := ours(b, tailroute.WithMaxBackpressureWait(0))
		cfg := gocql.NewCluster("127.0.0.1")
		require.NoError(b, Wire(cfg, p))
		obs := cfg.QueryObserver
		start := time.Now()
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			next := p.Pick(&queries[i&1023])
			h := next()
			obs.ObserveQuery(ctx, gocql.ObservedQuery{Host: h.Info(), Start: start, End: start.Add(time.Millisecond)})
			h.Mark(nil)
		}
	})
	b.Run("c3-idempotent", func(b *testing.B) {
		// idempotent queries may run speculatively: state is reference counted
		qs := append([]fakeQuery(nil), queries...)
		for i := range qs {
			qs[i].idempotent = true
		}
		run(b, ours(b, tailroute.WithMaxBackpressureWait(0)), qs)
	})
	b.Run("gocql-tokenaware-rr", func(b *testing.B) {
		tap := gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
		tap.Init(s)
		tap.SetPartitioner(partitioner)
		for _, h := range infos {
			tap.AddHost(h)
		}
		tap.KeyspaceChanged(gocql.KeyspaceUpdateEvent{Keyspace: "bench"})
		run(b, tap, queries)
	})
	b.Run("c3-parallel", func(b *testing.B) {
		p := ours(b, tailroute.WithMaxBackpressureWait(0))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				next := p.Pick(&queries[i&1023])
				i++
				h := next()
				h.Mark(nil)
			}
		})
	})
}
