package hedge

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// fakeLoad is a LoadSource with settable host state; every quantile is
// 20ms (the hedge delay).
type fakeLoad struct {
	silence   atomic.Int64
	wait      atomic.Int64
	saturated atomic.Bool
	rooms     atomic.Int64 // HedgeRoom calls
}

func (f *fakeLoad) LatencyQuantile(float64) (time.Duration, bool) { return 20 * time.Millisecond, true }
func (f *fakeLoad) MaxSilence() time.Duration                     { return time.Duration(f.silence.Load()) }
func (f *fakeLoad) HedgeRoom() (time.Duration, bool) {
	f.rooms.Add(1)
	return time.Duration(f.wait.Load()), f.saturated.Load()
}

// loadHedger returns a Hedger on src with the load rule on, whose budget
// (100 %) and burst cap (off) never bind, so every decision is the load
// rule's.
func loadHedger(t *testing.T, src LatencySource, opts ...tailroute.Option) (*Hedger, *tracker.ManualClock) {
	t.Helper()
	clk := newFakeClock()
	h, err := New(append([]tailroute.Option{tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithBudget(1, time.Second), tailroute.WithBurstCap(0, 1, 0), tailroute.WithLoadRule(true)}, opts...)...)
	require.NoError(t, err)
	return h, clk
}

// admit runs one eligible execution through Admit and gives its token back
// (as if its first attempt answered before the delay).
func admit(h *Hedger) Decision {
	d := h.Admit(true, true, 3)
	if d == Armed {
		h.budget.Release()
	}
	return d
}

func TestLoadRuleTargetSlow(t *testing.T) {
	src := &fakeLoad{}
	h, clk := loadHedger(t, src)
	require.Equal(t, 20*time.Millisecond, h.Delay())

	src.wait.Store(int64(20 * time.Millisecond))
	assert.Equal(t, Armed, admit(h), "the hedge's host is expected to answer within the time the first attempt will have waited")

	src.wait.Store(int64(21 * time.Millisecond))
	assert.Equal(t, Armed, admit(h), "the reading is reused within roomInterval")
	clk.Advance(roomInterval)
	assert.Equal(t, Deny, admit(h), "the hedge's host is expected to take longer than the delay")
	st := h.Stats()
	assert.Equal(t, uint64(1), st.TargetSlow)
	assert.Equal(t, uint64(2), st.Armed)
	assert.Equal(t, 21*time.Millisecond, st.TargetWait)
	assert.Equal(t, int64(2), src.rooms.Load(), "one reading per interval")
}

func TestLoadRuleQueueing(t *testing.T) {
	src := &fakeLoad{}
	src.saturated.Store(true)
	h, clk := loadHedger(t, src)
	assert.Equal(t, Deny, admit(h), "every host with a known W_s has all its workers taken")
	assert.Equal(t, uint64(1), h.Stats().Queueing)

	src.saturated.Store(false)
	clk.Advance(roomInterval)
	assert.Equal(t, Armed, admit(h))
}

// TestLoadRuleLiftedByStall: while a host has been silent for the hedge
// delay, the load rule and the loss record stand aside: the requests a
// stalled host holds are what hedging is for.
func TestLoadRuleLiftedByStall(t *testing.T) {
	src := &fakeLoad{}
	src.saturated.Store(true)
	src.wait.Store(int64(time.Second))
	h, clk := loadHedger(t, src, tailroute.WithBudget(0.1, time.Second))
	for i := 0; i < 100; i++ {
		h.Admit(false, false, 3) // 100 executions
	}
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false) // hedges have been losing
	}
	src.silence.Store(int64(20 * time.Millisecond)) // = the delay
	clk.Advance(roomInterval)
	// the i-th armed execution needs i <= 0.1 x (100 + i): 11 of them
	for i := 0; i < 11; i++ {
		assert.Equal(t, Armed, h.Admit(true, true, 3), "execution %d: stalled host, whole budget", i)
	}
	assert.Equal(t, Deny, h.Admit(true, true, 3))
	st := h.Stats()
	assert.Equal(t, uint64(1), st.BudgetDenied, "the whole budget, not a shrunk one, is spent")
	assert.Zero(t, st.Queueing+st.TargetSlow+st.Losing)

	src.silence.Store(int64(19 * time.Millisecond))
	clk.Advance(roomInterval)
	assert.Equal(t, Deny, h.Admit(true, true, 3))
	assert.Equal(t, uint64(1), h.Stats().Queueing, "silent for less than the delay: no stall")
}

// TestLoadRuleOff: the rule is off by default and with WithLoadRule(false):
// every host queueing does not stop an execution from being armed, and
// hedges that lose do not shrink the budget.
func TestLoadRuleOff(t *testing.T) {
	for name, opts := range map[string][]tailroute.Option{
		"default":  nil,
		"explicit": {tailroute.WithLoadRule(false)},
	} {
		t.Run(name, func(t *testing.T) {
			src := &fakeLoad{}
			src.saturated.Store(true)
			h, err := New(append([]tailroute.Option{tailroute.WithSource(src), tailroute.WithClock(newFakeClock()), tailroute.WithBudget(1, time.Second), tailroute.WithBurstCap(0, 1, 0)}, opts...)...)
			require.NoError(t, err)
			assert.Equal(t, Armed, admit(h))
			assert.Zero(t, h.Stats().Queueing)
			for i := 0; i < 20; i++ {
				h.outcomes.add(h.nowNs(), false)
			}
			assert.Equal(t, 1.0, h.Stats().BudgetScale, "no loss record with the rule off")
		})
	}
}

// TestLoadRuleNeedsLoadSource: with a source that reports no load (the
// built-in Recorder, another driver's policy) the Hedger arms on the
// budget and the burst cap alone.
func TestLoadRuleNeedsLoadSource(t *testing.T) {
	src := &fakeSource{}
	src.set(20*time.Millisecond, true)
	h, _ := loadHedger(t, src)
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false)
	}
	assert.Equal(t, Armed, admit(h))
	assert.Equal(t, 1.0, h.Stats().BudgetScale)
	assert.Zero(t, h.Stats().TargetWait)
}

func TestBudgetScale(t *testing.T) {
	assert.Equal(t, 1.0, budgetScale(0, 0), "no record")
	assert.Equal(t, 1.0, budgetScale(0, minOutcomes-1), "too few decided hedges")
	assert.Equal(t, 1.0, budgetScale(5, 5), "winning half of the time")
	assert.Equal(t, 1.0, budgetScale(4, 8), "winning a third of the time")
	assert.InDelta(t, 0.6, budgetScale(2, 8), 1e-9, "win share 0.2: 0.2/(1/3) of the budget")
	assert.Equal(t, minBudgetScale, budgetScale(0, 20), "never below the floor")
}

// TestLossRecordShrinksBudget: while hedges mostly lose, the budget shrinks
// to win share x 3 of itself; the executions it then refuses count as
// Losing, those the whole budget would refuse as BudgetDenied; the record
// slides out of its window.
func TestLossRecordShrinksBudget(t *testing.T) {
	src := &fakeLoad{}
	h, clk := loadHedger(t, src, tailroute.WithBudget(0.1, 10*time.Second))
	for i := 0; i < 100; i++ {
		h.Admit(false, false, 3) // 100 executions
	}
	for i := 0; i < 10; i++ {
		h.outcomes.add(h.nowNs(), i < 2) // 2 won, 8 lost: scale 0.6
	}
	assert.InDelta(t, 0.6, h.Stats().BudgetScale, 1e-9)
	// the i-th armed execution needs i <= 0.6 x 0.1 x (100 + i): 6 of them
	for i := 0; i < 6; i++ {
		require.Equal(t, Armed, h.Admit(true, true, 3), "execution %d: within the shrunk budget", i)
	}
	assert.Equal(t, Deny, h.Admit(true, true, 3))
	assert.Equal(t, uint64(1), h.Stats().Losing)
	assert.Zero(t, h.Stats().BudgetDenied)

	clk.Advance(DefaultOutcomeWindow) // the record slides out; the budget window (10s) still counts
	assert.Equal(t, 1.0, h.Stats().BudgetScale)
	// 107 executions so far, 6 tokens held: 6 + i <= 0.1 x (107 + i) for 5 more
	for i := 0; i < 5; i++ {
		require.Equal(t, Armed, h.Admit(true, true, 3), "execution %d: the whole budget again", i)
	}
	assert.Equal(t, Deny, h.Admit(true, true, 3))
	assert.Equal(t, uint64(1), h.Stats().BudgetDenied, "the whole budget is spent: budget, not losing")
	assert.Equal(t, uint64(1), h.Stats().Losing)
}
