package route

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/track"
)

// Selection is one host handed out by a plan: the driver's SelectedHost
// (Info and Mark).
type Selection[H HostInfo, S any] struct {
	st       *queryState[H, S]
	e        *hostEntry[H]
	att      track.Attempt
	start    time.Duration
	lastMark time.Duration
	marks    atomic.Uint32
	done     atomic.Bool // idempotent: this host's reference was dropped
}

// Info returns the host.
func (s *Selection[H, S]) Info() H { return s.e.info }

// Mark is called by gocql after each attempt on this host (more than once
// when the retry policy retries on the same host). The first Mark ends the
// attempt begun at NextHost (os_s -= 1, exactly once). Without Wire, Mark is
// also the measurement (latency since NextHost, or since the previous Mark
// for a retry); with Wire the observer measures, because Mark(nil) is also
// what a cancelled attempt gets.
func (s *Selection[H, S]) Mark(err error) {
	st := s.st
	if st == nil {
		return // recycled (see Pick)
	}
	p := st.r
	n := s.marks.Add(1)
	if n == 1 {
		s.e.h.End(s.att)
	}
	if !p.observed.Load() {
		now := p.clock.Now()
		from := s.start
		if n > 1 {
			from = s.lastMark
		}
		s.lastMark = now
		s.e.h.Observe(now, now-from, p.hooks.Classify(err))
	}
	switch {
	case st.seq.Load():
		if err == nil {
			st.release()
		}
	case err == nil || err == context.Canceled:
		// this attempt chain ends here; Mark(nil) also ends the plan
		var n int32
		if s.done.CompareAndSwap(false, true) {
			n++
		}
		if err == nil && st.planDone.CompareAndSwap(false, true) {
			n++
		}
		if n > 0 {
			st.unref(n)
		}
	}
}

// Refs is the number of references an idempotent plan holds.
func (st *queryState[H, S]) Refs() int32 { return st.refs.Load() }

// Live reports whether the plan has not been recycled.
func (st *queryState[H, S]) Live() bool { return st.tbl != nil }

// Pooled reports whether the state is recycled into the pool (false with
// WithDriverSpeculation or after a late call).
func (st *queryState[H, S]) Pooled() bool { return !st.noPool }
