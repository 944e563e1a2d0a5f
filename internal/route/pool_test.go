package route

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
)

// stateOf returns the plan state behind a host handed out by Pick's iterator.
func stateOf(t *testing.T, h sel) *queryState[*testHost, any] {
	t.Helper()
	require.NotNil(t, h)
	return h.st
}

// TestIdempotentStateLivesUntilLastMark: a speculative execution's state is
// recycled only once the first Mark(nil) happened and every host handed out
// had its last Mark; a loser still running keeps it.
func TestIdempotentStateLivesUntilLastMark(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	next := pick(p, Query{Idempotent: true})
	a := next()
	b := next() // the hedge
	st := stateOf(t, a)
	require.Same(t, st, stateOf(t, b))
	assert.EqualValues(t, 3, st.Refs(), "plan + 2 hosts")

	b.Mark(nil) // the hedge wins
	assert.EqualValues(t, 1, st.Refs(), "the loser still holds the state")
	assert.True(t, st.Live(), "not recycled while the loser runs")

	a.Mark(errors.New("timeout")) // the loser fails: may still retry on the same host
	assert.EqualValues(t, 1, st.Refs())
	a.Mark(nil) // its retry ends, cancelled
	assert.EqualValues(t, 0, st.Refs())
	assert.False(t, st.Live(), "recycled at the last reference")
	for _, s := range p.Tracker().Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}

// TestIdempotentRetryKeepsPlan: an attempt that fails keeps the plan alive
// for the retry on the next host, which may come after another attempt's
// Mark(nil) only while that failed attempt holds its reference.
func TestIdempotentRetryKeepsPlan(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	next := pick(p, Query{Idempotent: true})
	a := next()
	st := stateOf(t, a)
	a.Mark(errors.New("overloaded"))
	c := next() // RetryNextHost
	require.NotNil(t, c)
	assert.NotEqual(t, id(a), id(c))
	c.Mark(nil)
	assert.EqualValues(t, 1, st.Refs(), "the failed attempt's reference is never dropped")
	assert.True(t, st.Live(), "left to the garbage collector, not recycled")
}

// TestCanceledMarkReleasesHostNotPlan: a wrapper giving back a host it pulled
// but did not use (Mark(context.Canceled)) keeps the plan usable.
func TestCanceledMarkReleasesHostNotPlan(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	next := pick(p, Query{Idempotent: true})
	a := next()
	st := stateOf(t, a)
	a.Mark(context.Canceled)
	assert.EqualValues(t, 1, st.Refs())
	b := next()
	require.NotNil(t, b)
	b.Mark(nil)
	assert.EqualValues(t, 0, st.Refs())
	assert.False(t, st.Live())
}

// TestConcurrentSpeculativeExecutions drives many executions as gocql's
// speculative executor does: the hedge gets its host while the primary is
// in flight, then both attempts run in their own goroutines, marked in any
// order, with retries on the same host and on the next host (a retry may
// ask the iterator after the other attempt's Mark(nil)). Under -race this
// checks the reference counting; the tracker must end with nothing in
// flight.
func TestConcurrentSpeculativeExecutions(t *testing.T) {
	p, _, _ := testRouter(t, 4, tailroute.WithRateControl(false))
	q := Query{Idempotent: true}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				var mu sync.Mutex // gocql serialises one execution's NextHost calls
				next := pick(p, q)
				call := func() sel { mu.Lock(); defer mu.Unlock(); return next() }
				primary, hedge := call(), call()
				var inner sync.WaitGroup
				attempt := func(h sel, mode int) {
					defer inner.Done()
					switch mode {
					case 1: // retried on the same host
						h.Mark(errors.New("overloaded"))
						h.Mark(nil)
					case 2: // retried on the next host
						h.Mark(errors.New("overloaded"))
						if h2 := call(); h2 != nil {
							h2.Mark(nil)
						}
					default:
						h.Mark(nil)
					}
				}
				inner.Add(2)
				go attempt(primary, i%3)
				go attempt(hedge, (i/3)%2)
				inner.Wait()
			}
		}(g)
	}
	wg.Wait()
	for _, s := range p.Tracker().Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}

// TestLateCallGetsNoHost: gocql's speculative timer can fire right after the
// first Mark(nil); the late call through that execution's iterator finds no
// host, also once the state serves another execution, and leaves that
// execution's plan alone.
func TestLateCallGetsNoHost(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	for _, idem := range []bool{true, false} {
		q := Query{Idempotent: idem}
		next := pick(p, q)
		a := next()
		st := stateOf(t, a)
		a.Mark(nil)
		assert.Nil(t, next(), "late call on a recycled state")
		// The late call turned pooling of idempotent states off (the
		// driver-speculation safeguard); this test is about the tickets.
		p.lateSeen.Store(false)

		// The pool hands the recycled state out again: sync.Pool promises
		// nothing (the goroutine may move to another P, and the race
		// detector's pool drops items), so ask a few times.
		reused := false
		for try := 0; try < 8 && !reused; try++ {
			next2 := pick(p, Query{Idempotent: true})
			assert.Nil(t, next(), "late call on a state serving another execution")
			var got []string
			for h := next2(); h != nil; h = next2() {
				reused = reused || stateOf(t, h) == st
				got = append(got, id(h))
				h.Mark(context.Canceled)
			}
			assert.Len(t, got, 3, "the other execution's plan is whole")
		}
		if !raceEnabled {
			assert.True(t, reused, "the recycled state was reused")
		}
	}
	for _, s := range p.Tracker().Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}

// TestDriverSpeculationLateCalls: with WithDriverSpeculation, idempotent
// states are not pooled, so attempts that ask the iterator at any time,
// after every other Mark included (gocql's own speculative executor in its
// race window), stay race-free and get nil once the plan is spent.
func TestDriverSpeculationLateCalls(t *testing.T) {
	t.Run("option", func(t *testing.T) { driverSpeculationLateCalls(t, false, tailroute.WithDriverSpeculation(true)) })
	// Without the option the first late call turns pooling off; until then
	// the per-state lock keeps every call race-free.
	t.Run("detected", func(t *testing.T) { driverSpeculationLateCalls(t, false) })
	// Worst case: detection forgotten after every Pick, so late calls keep
	// reaching pooled, recycled and reissued states; still race-free, and
	// every host handed out is ended exactly once.
	t.Run("pooled", func(t *testing.T) { driverSpeculationLateCalls(t, true) })
}

func driverSpeculationLateCalls(t *testing.T, forget bool, opts ...tailroute.Option) {
	p, _, _ := testRouter(t, 4, append([]tailroute.Option{tailroute.WithRateControl(false)}, opts...)...)
	q := Query{Idempotent: true}
	var late atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				var mu sync.Mutex
				next := pick(p, q)
				if forget {
					p.lateSeen.Store(false)
				}
				call := func() sel { mu.Lock(); defer mu.Unlock(); return next() }
				var inner sync.WaitGroup
				chain := func() {
					defer inner.Done()
					if h := call(); h != nil {
						h.Mark(nil)
					} else {
						late.Add(1)
					}
				}
				inner.Add(2)
				go chain()
				go chain() // may start after the other chain's Mark(nil)
				inner.Wait()
			}
		}()
	}
	wg.Wait()
	for _, s := range p.Tracker().Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
	t.Logf("late calls that found no host: %d", late.Load())
}

// TestLateCallStopsPooling: an iterator called after its execution's
// result (gocql's own speculative executor in its race window) gets no
// host of another execution, and from then on idempotent states are not
// pooled, so no later late call can reach a recycled state.
func TestLateCallStopsPooling(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	q := Query{Idempotent: true}
	next := pick(p, q)
	a := next()
	st := stateOf(t, a)
	a.Mark(nil) // the result: the state is recycled
	require.False(t, p.lateSeen.Load())
	assert.Nil(t, next(), "a late call finds no host")
	assert.True(t, p.lateSeen.Load(), "the late call is seen")

	for i := 0; i < 4*planTickets; i++ {
		n := pick(p, q)
		h := n()
		require.NotNil(t, h)
		assert.NotSame(t, st, stateOf(t, h), "no pooled state after a late call")
		assert.True(t, !stateOf(t, h).Pooled())
		h.Mark(nil)
	}
	nq := pick(p, Query{Idempotent: false}) // sequential plans stay pooled
	h := nq()
	require.NotNil(t, h)
	assert.False(t, !stateOf(t, h).Pooled())
	h.Mark(nil)
}

// TestLateCallAfterResultOnLiveState: a second attempt chain asking the
// plan after the first Mark(nil) while a loser still holds the state (so it
// is not recycled) is served from its own plan and marks the policy.
func TestLateCallAfterResultOnLiveState(t *testing.T) {
	p, _, _ := testRouter(t, 3, tailroute.WithRateControl(false))
	next := pick(p, Query{Idempotent: true})
	a := next()
	b := next()
	b.Mark(nil) // result decided; a still runs
	c := next() // gocql's late speculative attempt
	assert.True(t, p.lateSeen.Load())
	if c != nil {
		assert.Same(t, stateOf(t, a), stateOf(t, c), "its own plan")
		c.Mark(context.Canceled)
	}
	a.Mark(nil)
	for _, s := range p.Tracker().Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}

// TestWrappedTicketIsRaceFree: a late call delayed while its state served
// planTickets more executions comes through the same ticket as the current
// execution, so the two call one iterator concurrently; the state's lock
// keeps that race-free and every host handed out is ended once.
func TestWrappedTicketIsRaceFree(t *testing.T) {
	p, _, _ := testRouter(t, 4, tailroute.WithRateControl(false))
	for round := 0; round < 50; round++ {
		next := pick(p, Query{Idempotent: true})
		var wg sync.WaitGroup
		got := make(chan sel, 2)
		for g := 0; g < 2; g++ { // the execution and the wrapped late call
			wg.Add(1)
			go func() { defer wg.Done(); got <- next() }()
		}
		wg.Wait()
		close(got)
		for h := range got {
			if h != nil {
				h.Mark(nil)
			}
		}
	}
	for _, s := range p.Tracker().Snapshot() {
		assert.EqualValues(t, 0, s.InFlight, s.ID)
	}
}
