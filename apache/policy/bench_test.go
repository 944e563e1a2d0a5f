package policy

import (
	"fmt"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// BenchmarkPickMark measures one request's host selection with the v2
// driver: Pick, the first NextHost and Mark(nil), 3 replicas per token (6
// simulated nodes, SimpleStrategy RF 3, the driver's own HostInfos with
// tokens), for each strategy and for the driver's
// TokenAwareHostPolicy(RoundRobinHostPolicy()). C3 runs with
// MaxBackpressureWait 0, as in the v1 adapter's benchmark.
func BenchmarkPickMark(b *testing.B) {
	c := simtest.Start(b, sim.Config{Nodes: 6, Seed: 1, Model: sim.ServiceModel{ZeroService: true}})
	p0, err := New()
	require.NoError(b, err)
	s := simSession(b, c, p0)
	createKeyspace(b, s, p0, "bench", "{'class':'SimpleStrategy','replication_factor':3}")
	infos := p0.r.Hosts()
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
		{"p2c", []tailroute.Option{tailroute.WithStrategy(tailroute.P2C)}},
		{"roundrobin", []tailroute.Option{tailroute.WithStrategy(tailroute.RoundRobin)}},
	} {
		b.Run(tc.name, func(b *testing.B) { run(b, ours(b, tc.opts...), queries) })
	}
	b.Run("c3-idempotent", func(b *testing.B) {
		qs := append([]fakeQuery(nil), queries...)
		for i := range qs {
			qs[i].idempotent = true
		}
		run(b, ours(b, tailroute.WithMaxBackpressureWait(0)), qs)
	})
	b.Run("v2-tokenaware-rr", func(b *testing.B) {
		tap := gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
		tap.Init(s)
		tap.SetPartitioner(partitioner)
		for _, h := range infos {
			tap.AddHost(h)
		}
		tap.KeyspaceChanged(gocql.KeyspaceUpdateEvent{Keyspace: "bench"})
		run(b, tap, queries)
	})
}
