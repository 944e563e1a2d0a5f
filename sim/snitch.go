// Dynamic snitch: how a coordinator orders the replicas of a read it does
// not own (Cassandra 4.0's DynamicEndpointSnitch, reduced to its effect on
// a CL ONE read).

package sim

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Dynamic snitch parameters, Cassandra 4.0's defaults.
const (
	snitchUpdateInterval = 100 * time.Millisecond  // dynamic_snitch_update_interval_in_ms
	snitchResetInterval  = 600 * time.Second       // dynamic_snitch_reset_interval_in_ms
	snitchBadness        = 0.1                     // dynamic_snitch_badness_threshold
	snitchWindow         = 100                     // latency samples kept per replica
	readRequestTimeout   = 5000 * time.Millisecond // read_request_timeout_in_ms, sampled for a failed replica read
)

// snitch is one coordinator's view of its peers' latency. Each forwarded
// read's latency (forward to answer, queueing and service included; a
// replica error counts as readRequestTimeout, as Cassandra samples an
// expired callback) is kept in a window of the last snitchWindow samples per
// replica; scores (the window medians) are recomputed at most every
// snitchUpdateInterval and all samples dropped every snitchResetInterval.
// A replica without samples scores 0, as in Cassandra.
type snitch struct {
	mu      sync.Mutex
	samples map[int]*latWindow
	scores  map[int]float64
	updated time.Time // last score computation
	reset   time.Time // last reset
}

type latWindow struct {
	v    [snitchWindow]time.Duration
	n, i int
}

// record adds one latency sample of replica r.
func (s *snitch) record(r int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.samples == nil {
		s.samples = map[int]*latWindow{}
	}
	w := s.samples[r]
	if w == nil {
		w = &latWindow{}
		s.samples[r] = w
	}
	w.v[w.i] = d
	w.i = (w.i + 1) % snitchWindow
	w.n = min(w.n+1, snitchWindow)
}

// pick returns the replica a CL ONE read goes to among live, given in the
// subsnitch's order (the ring order of SimpleSnitch): Cassandra's
// sortedByProximityWithBadness, first position. When at any position the
// subsnitch's replica scores more than (1 + snitchBadness) times the
// replica at that position by score, the best-scoring replica; otherwise
// live[0].
func (s *snitch) pick(live []int, now time.Time) int {
	if len(live) == 1 {
		return live[0]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh(now)
	byScore := slices.Clone(live)
	slices.SortStableFunc(byScore, func(a, b int) int { return cmp.Compare(s.scores[a], s.scores[b]) })
	for i, r := range live {
		if s.scores[r] > (1+snitchBadness)*s.scores[byScore[i]] {
			return byScore[0]
		}
	}
	return live[0]
}

// refresh recomputes the scores when snitchUpdateInterval has passed and
// drops every sample when snitchResetInterval has.
func (s *snitch) refresh(now time.Time) {
	if s.reset.IsZero() {
		s.reset = now
	}
	if now.Sub(s.reset) >= snitchResetInterval {
		s.reset = now
		clear(s.samples)
	}
	if now.Sub(s.updated) < snitchUpdateInterval {
		return
	}
	s.updated = now
	if s.scores == nil {
		s.scores = map[int]float64{}
	}
	clear(s.scores)
	var buf [snitchWindow]time.Duration
	for r, w := range s.samples {
		if w.n == 0 {
			continue
		}
		v := buf[:w.n]
		copy(v, w.v[:w.n])
		slices.Sort(v)
		s.scores[r] = float64(v[w.n/2])
	}
}
