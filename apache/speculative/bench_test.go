package speculative

import (
	"context"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute"
)

// BenchmarkArmPickArmed: Arm plus an armed execution's Pick, first host
// and Mark (allocations: the spec and context of Arm, the execution state
// and its NextHost).
func BenchmarkArmPickArmed(b *testing.B) {
	h, _ := New(tailroute.WithSource(fixedSource(time.Second)), tailroute.WithBudget(1, time.Second))
	inner := &fakePolicy{hosts: []*gocql.HostInfo{newHost(&testing.T{}, "127.0.0.1", "00000000-0000-0000-0000-000000000001"),
		newHost(&testing.T{}, "127.0.0.2", "00000000-0000-0000-0000-000000000002")}}
	p := h.Wrap(inner)
	for _, x := range inner.hosts {
		p.AddHost(x)
	}
	q := &gocql.Query{}
	fq := &fakeQuery{idempotent: true}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		fq.ctx = h.Arm(context.Background(), q)
		p.Pick(fq)().Mark(nil)
		inner.marks = inner.marks[:0]
	}
}

// BenchmarkPickNotArmed: an execution without Arm. The fake inner policy
// itself allocates (its NextHost and SelectedHost).
func BenchmarkPickNotArmed(b *testing.B) {
	h, _ := New(tailroute.WithSource(fixedSource(time.Second)))
	inner := &fakePolicy{hosts: []*gocql.HostInfo{newHost(&testing.T{}, "127.0.0.1", "00000000-0000-0000-0000-000000000001")}}
	p := h.Wrap(inner)
	fq := &fakeQuery{ctx: context.Background(), idempotent: true}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Pick(fq)().Mark(nil)
		inner.marks = inner.marks[:0]
	}
}
