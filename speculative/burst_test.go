package speculative

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/policy"
)

// silentSource is a LatencySource reporting a settable host silence.
type silentSource struct {
	fakeSource
	silence atomic.Int64
}

func (s *silentSource) MaxSilence() time.Duration { return time.Duration(s.silence.Load()) }

// burstRig is a rig whose source reports silence, with a long-run budget
// that does not bind in these tests (5% of the rig's 1000 requests).
func burstRig(t *testing.T, opts ...tailroute.Option) (*rig, *silentSource) {
	t.Helper()
	src := &silentSource{}
	src.set(10*time.Millisecond, true)
	r := newRig(t, 3, append([]tailroute.Option{tailroute.WithSource(src), tailroute.WithBudget(0.05, 10*time.Second)}, opts...)...)
	return r, src
}

// fire arms one execution and, if armed, fires its hedge; it reports
// whether the execution was armed.
func fire(r *rig) bool {
	q := idem()
	next := r.p.Pick(q)
	if specType(q) != armedType {
		next().Mark(nil)
		return false
	}
	primary := next()
	hedge := next()
	hedge.Mark(nil)
	primary.Mark(nil)
	return true
}

func plain(r *rig, n int) {
	for i := 0; i < n; i++ {
		r.p.Pick(&gocql.Query{})().Mark(nil)
	}
}

func TestBurstCapLimitsHedgesPerHorizon(t *testing.T) {
	r, _ := burstRig(t, tailroute.WithBurstCap(200*time.Millisecond, 1, 2), tailroute.WithBudget(0.05, 10*time.Second))
	plain(r, 100) // 100 executions in the horizon: room for max(2, 5) hedges
	fired := 0
	for i := 0; i < 20; i++ {
		if fire(r) {
			fired++
		}
	}
	assert.Equal(t, 6, fired, "hedges within the horizon <= 5% of 120 executions")
	assert.EqualValues(t, 14, r.h.Stats().BurstDenied)

	// a horizon later the fired hedges no longer count
	r.clk.Advance(250 * time.Millisecond)
	plain(r, 100)
	assert.True(t, fire(r))
}

func TestBurstCapFactor(t *testing.T) {
	r, _ := burstRig(t, tailroute.WithBurstCap(200*time.Millisecond, 3, 0))
	plain(r, 100)
	fired := 0
	for i := 0; i < 40; i++ {
		if fire(r) {
			fired++
		}
	}
	assert.Equal(t, 21, fired, "hedges within the horizon <= 3 x 5% of 140 executions")
}

func TestBurstCapFloor(t *testing.T) {
	r, _ := burstRig(t, tailroute.WithBurstCap(200*time.Millisecond, 1, 3))
	r.clk.Advance(time.Second) // nothing in the horizon: 5% of 0 executions
	fired := 0
	for i := 0; i < 10; i++ {
		if fire(r) {
			fired++
		}
	}
	assert.Equal(t, 3, fired, "the floor: 3 hedges per horizon at any rate")
}

func TestBurstCapLiftedWhileAHostIsSilent(t *testing.T) {
	r, src := burstRig(t, tailroute.WithBurstCap(200*time.Millisecond, 1, 0))
	r.clk.Advance(time.Second)
	assert.False(t, fire(r), "capped: no room in the horizon")
	src.silence.Store(int64(11 * time.Millisecond)) // silent for longer than the 10ms delay: a stall
	for i := 0; i < 10; i++ {
		assert.True(t, fire(r), "lifted during a stall")
	}
	assert.EqualValues(t, 10, r.h.Stats().BurstLifted)
	src.silence.Store(int64(9 * time.Millisecond)) // answers, late: a slow host, not a stall
	assert.False(t, fire(r))
}

func TestBurstCapNeedsSilenceSource(t *testing.T) {
	r := newRig(t, 3, tailroute.WithBudget(1, 10*time.Second), tailroute.WithBurstCap(200*time.Millisecond, 1, 0))
	r.clk.Advance(time.Second)
	assert.True(t, fire(r), "the fake source reports no silence: cap off")
	assert.Nil(t, r.h.core.Burst())
}

func TestBurstCapOff(t *testing.T) {
	r, _ := burstRig(t, tailroute.WithBurstCap(0, 1, 0))
	r.clk.Advance(time.Second)
	assert.True(t, fire(r))
}

func TestWonLostInFlight(t *testing.T) {
	r := newRig(t, 3)
	q := idem()
	next := r.p.Pick(q)
	primary, hedge := next(), next()
	assert.EqualValues(t, 1, r.h.Stats().InFlight)
	hedge.Mark(nil)
	primary.Mark(nil)
	st := r.h.Stats()
	assert.EqualValues(t, 1, st.Won)
	assert.EqualValues(t, 0, st.Lost)
	assert.EqualValues(t, 0, st.InFlight)

	next = r.p.Pick(idem())
	primary, hedge = next(), next()
	primary.Mark(nil) // the primary wins
	hedge.Mark(nil)   // cancelled
	st = r.h.Stats()
	assert.EqualValues(t, 1, st.Won)
	assert.EqualValues(t, 1, st.Lost)
	assert.EqualValues(t, 0, st.InFlight)

	next = r.p.Pick(idem())
	primary, hedge = next(), next()
	primary.Mark(overloaded) // both fail: neither won nor lost
	hedge.Mark(overloaded)
	st = r.h.Stats()
	assert.EqualValues(t, 3, st.Hedges)
	assert.EqualValues(t, 1, st.Won)
	assert.EqualValues(t, 1, st.Lost)
	assert.EqualValues(t, 0, st.InFlight)
}

// TestLateHedgeTakesFreshPlan: with our pooled policy, a plan must not be
// asked again after a Mark(nil); a hedge that fires after the primary's
// Mark(nil) gets its host from a fresh plan, not from the spent one.
func TestLateHedgeTakesFreshPlan(t *testing.T) {
	pol, err := policy.New(tailroute.WithRateControl(false))
	require.NoError(t, err)
	var hosts []*gocql.HostInfo
	for i := 0; i < 3; i++ {
		hi := &gocql.HostInfo{}
		hi.SetConnectAddress(net.ParseIP("127.0.5." + string(rune('1'+i))))
		hi.SetHostID("p" + string(rune('0'+i)))
		hosts = append(hosts, hi)
	}
	src := &fakeSource{}
	src.set(10*time.Millisecond, true)
	h, err := New(tailroute.WithSource(src), tailroute.WithBudget(1, 10*time.Second))
	require.NoError(t, err)
	p := h.Wrap(pol)
	for _, hi := range hosts {
		p.AddHost(hi)
	}
	p.Pick(&gocql.Query{})().Mark(nil) // fund the budget
	for i := 0; i < 50; i++ {
		q := idem()
		next := p.Pick(q)
		require.Equal(t, armedType, specType(q))
		primary := next()
		primary.Mark(nil)
		late := next() // gocql's timer fired right after the primary's Mark(nil)
		require.NotNil(t, late, "the late hedge gets a host")
		assert.NotEqual(t, primary.Info().HostID(), late.Info().HostID())
		late.Mark(nil)
	}
	for _, s := range pol.Stats() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}
