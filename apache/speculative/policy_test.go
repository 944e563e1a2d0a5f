package speculative

import (
	"context"
	"net"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/apache/policy"
	"github.com/tailroute/tailroute/speculative/promstats"
	"github.com/tailroute/tailroute/tracker"
)

// fakeQuery is the part of the driver's per-execution request that Pick
// uses; any other method panics (nil embedded interface).
type fakeQuery struct {
	gocql.ExecutableStatement
	ctx        context.Context
	idempotent bool
	hostID     string
}

func (q *fakeQuery) IsIdempotent() bool       { return q.idempotent }
func (q *fakeQuery) GetHostID() string        { return q.hostID }
func (q *fakeQuery) Context() context.Context { return q.ctx }

type fakeSel struct {
	h     *gocql.HostInfo
	marks *[]error
}

func (s fakeSel) Info() *gocql.HostInfo { return s.h }
func (s fakeSel) Mark(err error)        { *s.marks = append(*s.marks, err) }

// fakePolicy returns its hosts in order.
type fakePolicy struct {
	gocql.HostSelectionPolicy
	hosts []*gocql.HostInfo
	marks []error
}

func (p *fakePolicy) AddHost(*gocql.HostInfo) {}
func (p *fakePolicy) Pick(gocql.ExecutableStatement) gocql.NextHost {
	i := 0
	return func() gocql.SelectedHost {
		if i >= len(p.hosts) {
			return nil
		}
		i++
		return fakeSel{p.hosts[i-1], &p.marks}
	}
}

// newHost returns a host that is up (the zero state).
func newHost(t *testing.T, ip, id string) *gocql.HostInfo {
	u, err := gocql.ParseUUID(id)
	require.NoError(t, err)
	h, err := gocql.NewTestHostInfoFromRow(map[string]any{"rpc_address": net.ParseIP(ip), "host_id": u})
	require.NoError(t, err)
	require.True(t, h.IsUp())
	return h
}

type fixedSource time.Duration

func (s fixedSource) LatencyQuantile(float64) (time.Duration, bool) { return time.Duration(s), true }

func TestPickArmsOnlyArmedIdempotentExecutions(t *testing.T) {
	h, err := New(tailroute.WithSource(fixedSource(10*time.Millisecond)), tailroute.WithBudget(1, time.Second))
	require.NoError(t, err)
	hosts := []*gocql.HostInfo{
		newHost(t, "127.0.0.1", "00000000-0000-0000-0000-000000000001"),
		newHost(t, "127.0.0.2", "00000000-0000-0000-0000-000000000002"),
		newHost(t, "127.0.0.3", "00000000-0000-0000-0000-000000000003"),
	}
	inner := &fakePolicy{hosts: hosts}
	p := h.Wrap(inner)
	for _, x := range hosts {
		p.AddHost(x)
	}
	// fund the budget
	for i := 0; i < 10; i++ {
		p.Pick(&fakeQuery{ctx: context.Background()})
	}

	q := gocql.Query{}
	ctx := h.Arm(context.Background(), &q)
	s := ctx.Value(specKey{}).(*execSpec)
	assert.Zero(t, s.Attempts(), "not armed before Pick")
	next := p.Pick(&fakeQuery{ctx: ctx, idempotent: true})
	assert.Equal(t, 1, s.Attempts(), "armed by Pick")
	assert.Equal(t, 10*time.Millisecond, s.Delay())
	first := next()
	require.NotNil(t, first)
	assert.Same(t, hosts[0], first.Info())
	hedge := next() // no error before it: the hedge
	require.NotNil(t, hedge)
	assert.Same(t, hosts[1], hedge.Info(), "the hedge goes to the next host")
	hedge.Mark(nil)
	first.Mark(context.Canceled)
	st := h.Stats()
	assert.Equal(t, uint64(1), st.Hedges)
	assert.Equal(t, uint64(1), st.Won)
	assert.Equal(t, []error{nil, context.Canceled}, inner.marks, "marks passed through")

	for _, c := range []struct {
		name string
		q    *fakeQuery
	}{
		{"not idempotent", &fakeQuery{ctx: h.Arm(context.Background(), &gocql.Query{})}},
		{"disabled", &fakeQuery{ctx: Disable(h.Arm(context.Background(), &gocql.Query{})), idempotent: true}},
		{"pinned to a host", &fakeQuery{ctx: h.Arm(context.Background(), &gocql.Query{}), idempotent: true, hostID: "x"}},
	} {
		s := c.q.ctx.Value(specKey{}).(*execSpec)
		s.attempts.Store(1) // as left by an earlier execution
		p.Pick(c.q)
		assert.Zero(t, s.Attempts(), c.name)
	}
	assert.Equal(t, uint64(1), h.Stats().Armed)
}

// twoHosts returns h wrapped around a fakePolicy of two hosts that are up.
func twoHosts(t *testing.T, h *Hedger) gocql.HostSelectionPolicy {
	hosts := []*gocql.HostInfo{
		newHost(t, "127.0.0.1", "00000000-0000-0000-0000-000000000001"),
		newHost(t, "127.0.0.2", "00000000-0000-0000-0000-000000000002"),
	}
	p := h.Wrap(&fakePolicy{hosts: hosts})
	for _, x := range hosts {
		p.AddHost(x)
	}
	return p
}

func TestPickDeniedByBudgetSetsNoAttempt(t *testing.T) {
	h, err := New(tailroute.WithSource(fixedSource(10*time.Millisecond)), tailroute.WithBudget(0, time.Second))
	require.NoError(t, err)
	p := twoHosts(t, h)
	ctx := h.Arm(context.Background(), &gocql.Query{})
	p.Pick(&fakeQuery{ctx: ctx, idempotent: true})
	assert.Zero(t, ctx.Value(specKey{}).(*execSpec).Attempts())
	assert.Equal(t, uint64(1), h.Stats().BudgetDenied)
}

func TestWireErrors(t *testing.T) {
	h, err := New()
	require.NoError(t, err)
	require.Error(t, Wire(nil, h))
	cl := gocql.NewCluster("127.0.0.1")
	require.Error(t, Wire(cl, nil))
	require.NoError(t, Wire(cl, h))
	assert.Same(t, h.Recorder(), cl.QueryObserver)
	err = Wire(cl, h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already a hedging policy")
	_, err = New(tailroute.WithQuantile(2))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Quantile")
}

// TestPromstatsReadsV2Hedger: speculative/promstats builds without the v1
// driver and collects the v2 Hedger's Stats.
func TestPromstatsReadsV2Hedger(t *testing.T) {
	h, err := New(tailroute.WithSource(fixedSource(10 * time.Millisecond)))
	require.NoError(t, err)
	p := h.Wrap(&fakePolicy{})
	p.Pick(&fakeQuery{ctx: context.Background()})
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(promstats.New(h, promstats.WithLabels(prometheus.Labels{"driver": "v2"}))))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var got float64 = -1
	for _, mf := range mfs {
		if mf.GetName() == "tailroute_hedge_executions_total" {
			got = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	assert.Equal(t, 1.0, got)
}

// The v2 policy reports silence, so WithSource(p) keeps the burst cap
// (WithBurstCap) on.
var _ tailroute.LoadSource = (*policy.Policy)(nil)

// loadSource is a LoadSource with settable host state (the load rule's
// inputs): every quantile 10ms, no silence, an idle target, busy hosts.
type loadSource struct {
	fixedSource
	saturated bool
}

func (s *loadSource) MaxSilence() time.Duration { return 0 }
func (s *loadSource) HedgeRoom() tailroute.Room {
	return tailroute.Room{Busy: 1, Saturated: s.saturated}
}

// TestLoadRuleV2: the load rule decides at the v2 adapter's Pick too: while
// every host queues, an execution is armed with the deferred delay
// (Stats.Queueing); the hedges of executions armed with the delay are
// recorded as won or lost, and once they mostly lose the next execution is
// deferred too (Stats.Losing).
func TestLoadRuleV2(t *testing.T) {
	src := &loadSource{fixedSource: fixedSource(10 * time.Millisecond), saturated: true}
	clk := tracker.NewManualClock(time.Hour)
	h, err := New(tailroute.WithSource(src), tailroute.WithBudget(1, time.Second), tailroute.WithClock(clk), tailroute.WithLoadRule(true))
	require.NoError(t, err)
	p := twoHosts(t, h)
	pick := func() *execSpec {
		ctx := h.Arm(context.Background(), &gocql.Query{})
		next := p.Pick(&fakeQuery{ctx: ctx, idempotent: true})
		first := next()
		hedge := next()
		first.Mark(nil) // the first attempt wins: the hedge lost
		hedge.Mark(context.Canceled)
		return ctx.Value(specKey{}).(*execSpec)
	}
	s := pick()
	assert.Equal(t, 1, s.Attempts(), "every host queueing: armed")
	assert.Equal(t, 30*time.Millisecond, s.Delay(), "deferred: 3 x the delay")
	assert.Equal(t, uint64(1), h.Stats().Queueing)

	src.saturated = false
	clk.Advance(10 * time.Millisecond) // the next reading of the hosts' load
	for i := 0; i < 10; i++ {
		s := pick()
		require.Equal(t, 10*time.Millisecond, s.Delay(), "execution %d: hedges at the delay", i)
	}
	assert.Equal(t, uint64(11), h.Stats().Lost)
	s = pick()
	assert.Equal(t, 30*time.Millisecond, s.Delay(), "10 hedges at the delay lost: deferred")
	assert.Equal(t, uint64(1), h.Stats().Losing)
}
