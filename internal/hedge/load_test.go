package hedge

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// fakeLoad is a LoadSource with settable host state; every quantile is
// 20ms (the hedge delay). Its hosts are busy (Busy 1) unless setBusy says
// otherwise.
type fakeLoad struct {
	silence   atomic.Int64
	wait      atomic.Int64
	saturated atomic.Bool
	stalled   atomic.Bool   // the silent host is stalled by the policy's rule (Room.StalledFor = silence)
	busy      atomic.Uint64 // math.Float64bits of 1 - Busy
	assumed   atomic.Bool   // Room.BusyAssumed
	many      atomic.Bool   // Room.OneOfMany
	rooms     atomic.Int64  // HedgeRoom calls
}

func (f *fakeLoad) LatencyQuantile(float64) (time.Duration, bool) { return 20 * time.Millisecond, true }
func (f *fakeLoad) MaxSilence() time.Duration                     { return time.Duration(f.silence.Load()) }
func (f *fakeLoad) HedgeRoom() tailroute.Room {
	f.rooms.Add(1)
	return tailroute.Room{Wait: time.Duration(f.wait.Load()), Busy: 1 - math.Float64frombits(f.busy.Load()), Saturated: f.saturated.Load(), StalledFor: f.stalledFor(), BusyAssumed: f.assumed.Load(), OneOfMany: f.many.Load()}
}

// stalledFor is Room.StalledFor: the silence, when the policy calls the
// silent host stalled.
func (f *fakeLoad) stalledFor() time.Duration {
	if f.stalled.Load() {
		return time.Duration(f.silence.Load())
	}
	return 0
}

// setBusy sets the median host's share of workers taken.
func (f *fakeLoad) setBusy(b float64) { f.busy.Store(math.Float64bits(1 - b)) }

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
	if d == Armed || d == Deferred {
		h.budget.Release()
	}
	return d
}

func TestLoadRuleTargetSlow(t *testing.T) {
	src := &fakeLoad{}
	h, clk := loadHedger(t, src)
	require.Equal(t, 20*time.Millisecond, h.Delay())

	src.wait.Store(int64(20 * time.Millisecond))
	assert.Equal(t, Armed, admit(h), "the hedge's host is expected to answer within the delay")

	src.wait.Store(int64(21 * time.Millisecond))
	assert.Equal(t, Armed, admit(h), "the reading is reused within roomInterval")
	clk.Advance(roomInterval)
	assert.Equal(t, Deferred, admit(h), "the hedge's host is expected to take longer than the delay")
	st := h.Stats()
	assert.Equal(t, uint64(1), st.TargetSlow)
	assert.Equal(t, uint64(3), st.Armed, "a deferred execution is armed")
	assert.Equal(t, 21*time.Millisecond, st.TargetWait)
	assert.Equal(t, int64(2), src.rooms.Load(), "one reading per interval")
}

// TestDeferredSpec: an execution the rule defers gets the Spec whose delay
// is DeferFactor x the delay, at most MaxDelay; the others get the delay.
func TestDeferredSpec(t *testing.T) {
	src := &fakeLoad{}
	h, _ := loadHedger(t, src)
	assert.Equal(t, 20*time.Millisecond, h.SpecFor(Armed).Delay())
	assert.Equal(t, 60*time.Millisecond, h.SpecFor(Deferred).Delay())
	assert.Equal(t, 60*time.Millisecond, h.Stats().DeferredDelay)
	assert.Equal(t, 1, h.SpecFor(Deferred).Attempts())

	capped, _ := loadHedger(t, src, tailroute.WithDelayBounds(time.Millisecond, 50*time.Millisecond))
	assert.Equal(t, 50*time.Millisecond, capped.SpecFor(Deferred).Delay(), "at most MaxDelay")
}

func TestLoadRuleQueueing(t *testing.T) {
	src := &fakeLoad{}
	src.saturated.Store(true)
	h, clk := loadHedger(t, src)
	assert.Equal(t, Deferred, admit(h), "every host has a known W_s and all its workers taken")
	assert.Equal(t, uint64(1), h.Stats().Queueing)

	src.saturated.Store(false)
	clk.Advance(roomInterval)
	assert.Equal(t, Armed, admit(h))
}

// TestOneOfManyNotArmed: a client that is one of many (Room.OneOfMany)
// arms no execution while the load rule is on, even with a host stalled
// (Stats.ManyClients counts them), and arms again once it is not; with the
// load rule off it arms.
func TestOneOfManyNotArmed(t *testing.T) {
	src := &fakeLoad{}
	src.setBusy(0)
	src.many.Store(true)
	h, clk := loadHedger(t, src)
	assert.Equal(t, Deny, admit(h))
	src.silence.Store(int64(time.Second))
	src.stalled.Store(true)
	clk.Advance(roomInterval)
	assert.Equal(t, Deny, admit(h), "a stall lifts nothing")
	st := h.Stats()
	assert.Equal(t, uint64(2), st.ManyClients)
	assert.Zero(t, st.Armed)
	assert.Equal(t, tailroute.Suppression{Reason: "many_clients", N: 2}, st.Suppressed()[3])

	src.many.Store(false)
	clk.Advance(roomInterval)
	assert.Equal(t, Armed, admit(h))

	off, _ := loadHedger(t, src, tailroute.WithLoadRule(false))
	src.many.Store(true)
	assert.Equal(t, Armed, admit(off), "the load rule off")
	assert.Zero(t, off.Stats().ManyClients)
}

// TestLoadRuleLiftedByStall: while a host the policy calls stalled has
// been silent for the hedge delay, the load rule and the loss record stand
// aside: the requests a stalled host holds are what hedging is for. A host
// silent for the delay that the policy does not call stalled (its queue
// holds the client's requests while it answers) lifts nothing.
func TestLoadRuleLiftedByStall(t *testing.T) {
	src := &fakeLoad{}
	src.saturated.Store(true)
	src.wait.Store(int64(time.Second))
	h, clk := loadHedger(t, src)
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false) // hedges have been losing
	}
	src.silence.Store(int64(20 * time.Millisecond)) // = the delay
	src.stalled.Store(true)
	clk.Advance(roomInterval)
	assert.Equal(t, Armed, admit(h), "stalled host: the hedge fires at the delay")
	st := h.Stats()
	assert.Zero(t, st.Queueing+st.TargetSlow+st.Losing)

	src.silence.Store(int64(19 * time.Millisecond))
	clk.Advance(roomInterval)
	assert.Equal(t, Deferred, admit(h))
	assert.Equal(t, uint64(1), h.Stats().Queueing, "silent for less than the delay: no stall")

	src.silence.Store(int64(time.Second))
	src.stalled.Store(false)
	clk.Advance(roomInterval)
	assert.Equal(t, Deferred, admit(h))
	assert.Equal(t, uint64(2), h.Stats().Queueing, "silent for long, but not stalled by the policy's rule: a queue")
}

// TestBurstCapLiftedByStall: over the burst cap, an execution is armed
// while a host is stalled as the load rule reads it (silent for the delay
// and stalled by the policy's rule), and only then.
func TestBurstCapLiftedByStall(t *testing.T) {
	src := &fakeLoad{}
	src.setBusy(0)
	clk := newFakeClock()
	h, err := New(tailroute.WithSource(src), tailroute.WithClock(clk), tailroute.WithBudget(1, time.Second),
		tailroute.WithBurstCap(time.Second, 1, 1))
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		h.burst.Charge(h.nowNs(), false) // hedges fired: over the cap (1 x 100 % of the requests)
	}
	src.silence.Store(int64(time.Second))
	assert.Equal(t, Deny, admit(h), "silent, not stalled: the cap binds")
	src.stalled.Store(true)
	clk.Advance(roomInterval)
	assert.Equal(t, Armed, admit(h), "stalled: the cap is lifted")
	st := h.Stats()
	assert.Equal(t, uint64(1), st.BurstDenied)
	assert.Equal(t, uint64(1), st.BurstLifted)
}

// TestLoadRuleOnByDefault: the rule is on without WithLoadRule; with
// WithLoadRule(false) every host queueing or hedges losing do not defer a
// hedge.
func TestLoadRuleOnByDefault(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []tailroute.Option
		want Decision
	}{
		"default": {nil, Deferred},
		"off":     {[]tailroute.Option{tailroute.WithLoadRule(false)}, Armed},
	} {
		t.Run(name, func(t *testing.T) {
			src := &fakeLoad{}
			src.saturated.Store(true)
			h, err := New(append([]tailroute.Option{tailroute.WithSource(src), tailroute.WithClock(newFakeClock()), tailroute.WithBudget(1, time.Second), tailroute.WithBurstCap(0, 1, 0)}, tc.opts...)...)
			require.NoError(t, err)
			for i := 0; i < 20; i++ {
				h.outcomes.add(h.nowNs(), false)
			}
			assert.Equal(t, tc.want, admit(h))
		})
	}
}

// TestLoadRuleNeedsLoadSource: with a source that reports no load (the
// built-in Recorder, another driver's policy) the Hedger arms on the
// budget and the burst cap alone, and never defers.
func TestLoadRuleNeedsLoadSource(t *testing.T) {
	src := &fakeSource{}
	src.set(20*time.Millisecond, true)
	h, _ := loadHedger(t, src)
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false)
	}
	assert.Equal(t, Armed, admit(h))
	assert.Zero(t, h.Stats().Losing)
	assert.Zero(t, h.Stats().TargetWait)
}

func TestLosing(t *testing.T) {
	assert.False(t, losing(0, 0), "no record")
	assert.False(t, losing(0, minOutcomes-1), "too few decided hedges")
	assert.False(t, losing(5, 5), "winning half of the time")
	assert.False(t, losing(4, 8), "winning a third of the time")
	assert.True(t, losing(3, 7), "winning under a third of the time")
	assert.True(t, losing(0, 20))
}

// TestLossRecordDefers: while hedges at the delay mostly lose, hedges are
// deferred (Losing); the outcomes of deferred hedges are not recorded, so
// the record slides out of its window and hedges fire at the delay again.
func TestLossRecordDefers(t *testing.T) {
	src := &fakeLoad{}
	h, clk := loadHedger(t, src)
	for i := 0; i < 10; i++ {
		h.outcomes.add(h.nowNs(), i < 3) // 3 won, 7 lost
	}
	assert.Equal(t, Deferred, admit(h))
	assert.Equal(t, uint64(1), h.Stats().Losing)

	clk.Advance(DefaultOutcomeWindow)
	assert.Equal(t, Armed, admit(h), "the record slid out of its window")
}

// TestLossRecordOnlyWhereBusy: the loss record defers hedges only while the
// median host has more than calmBusy of its workers taken, now or on
// average over busyHorizon; below, a lost hedge took a free worker and
// delayed no one, and hedges fire at the delay.
func TestLossRecordOnlyWhereBusy(t *testing.T) {
	src := &fakeLoad{}
	src.setBusy(0)
	h, clk := loadHedger(t, src)
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false) // hedges have been losing
	}
	for _, tc := range []struct {
		busy float64
		want Decision
	}{
		{0, Armed}, {0.25, Armed}, {calmBusy, Armed}, {0.75, Deferred}, {1, Deferred},
	} {
		src.setBusy(tc.busy)
		clk.Advance(roomInterval)
		assert.Equal(t, tc.want, admit(h), "median host busy %.2f", tc.busy)
	}
	assert.Equal(t, uint64(2), h.Stats().Losing)
	assert.Equal(t, 1.0, h.Stats().Busy)

	// a calm moment after a busy spell: the average still says busy
	for i := 0; i < 2; i++ {
		clk.Advance(busyHorizon)
		admit(h) // readings of 1, a second apart: the average reaches ~0.87
	}
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false) // still losing
	}
	clk.Advance(roomInterval)
	src.setBusy(0)
	assert.Equal(t, Deferred, admit(h), "calm for %v after a busy spell", roomInterval)
	assert.Greater(t, h.Stats().Busy, calmBusy)
	clk.Advance(busyHorizon)
	for i := 0; i < 20; i++ {
		h.outcomes.add(h.nowNs(), false)
	}
	assert.Equal(t, Armed, admit(h), "calm for %v: the average is down to ~e^-1 of the spell's", busyHorizon)
	assert.Less(t, h.Stats().Busy, calmBusy)
}

// TestBusyAverageTakesReadingsOnly: a Busy that counts hosts of unknown
// W_s as fully taken (Room.BusyAssumed) gates the loss record while it
// lasts, but does not enter the average: once the hosts' W_s are known
// and calm, hedges fire at the delay at once, not a busyHorizon later.
func TestBusyAverageTakesReadingsOnly(t *testing.T) {
	src := &fakeLoad{}
	src.setBusy(1)
	src.assumed.Store(true) // a client that has not yet learned W_s
	h, clk := loadHedger(t, src)
	losingRecord := func() {
		for i := 0; i < 20; i++ {
			h.outcomes.add(h.nowNs(), false)
		}
	}
	losingRecord()
	for i := 0; i < 10; i++ {
		assert.Equal(t, Deferred, admit(h), "assumed fully taken: acted on at once")
		clk.Advance(roomInterval)
	}

	src.assumed.Store(false)
	src.setBusy(0.25)
	losingRecord()
	assert.Equal(t, Armed, admit(h), "the first reading: calm")
	assert.InDelta(t, 0.25, h.Stats().Busy, 1e-12, "the average starts at the first reading")

	// a reading of a busy spell moves the average, and it stays
	src.setBusy(1)
	clk.Advance(busyHorizon)
	admit(h)
	src.setBusy(0.25)
	clk.Advance(roomInterval)
	losingRecord()
	assert.Equal(t, Deferred, admit(h), "calm for %v after a measured busy spell", roomInterval)

	// an assumed reading between readings leaves the average as it was
	var want room
	want.busySum.Store(h.room.busySum.Load())
	want.busyCover.Store(h.room.busyCover.Load())
	want.busyAvgAt.Store(h.room.busyAvgAt.Load())
	want.average(h.nowNs()+int64(2*roomInterval), 0)
	src.assumed.Store(true)
	src.setBusy(1)
	clk.Advance(roomInterval)
	admit(h)
	src.assumed.Store(false)
	src.setBusy(0)
	clk.Advance(roomInterval)
	admit(h)
	assert.InDelta(t, math.Float64frombits(want.busyAvg.Load()), h.Stats().Busy, 1e-12,
		"the average takes the reading 0 after its last reading; the assumed 1 is not in it")
}

// A client's first readings count for the time they cover: a busy first
// reading does not hold the loss record's gate open for a second, while a
// busy spell that lasted keeps it open through a calm moment.
func TestBusyAverageWeighsTimeCovered(t *testing.T) {
	src := &fakeLoad{}
	h, clk := loadHedger(t, src)
	read := func(busy float64, d time.Duration) { // readings every roomInterval for d
		src.setBusy(busy)
		for end := clk.Now() + d; clk.Now() < end; clk.Advance(roomInterval) {
			admit(h)
		}
	}
	losingRecord := func() {
		for i := 0; i < 20; i++ {
			h.outcomes.add(h.nowNs(), false)
		}
	}

	read(1, 20*time.Millisecond) // a start-up burst
	read(0.25, 200*time.Millisecond)
	assert.InDelta(t, (0.02*1+0.2*0.25)/0.22, h.Stats().Busy, 0.03,
		"about the time-weighted mean of the readings so far")
	losingRecord()
	src.setBusy(0.25)
	assert.Equal(t, Armed, admit(h), "200ms calm after a 20ms burst: calm")

	read(1, 3*time.Second)
	read(0.25, 100*time.Millisecond)
	assert.Greater(t, h.Stats().Busy, 0.8, "after seconds busy, a tenth of a second calm weighs a tenth")
	losingRecord()
	assert.Equal(t, Deferred, admit(h), "calm for 100ms after seconds busy: still busy")
}
