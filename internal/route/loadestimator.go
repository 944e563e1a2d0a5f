// LoadEstimator: q_s and 1/mu_s of one host from its successive
// ThreadPoolSamples.

package route

import "time"

// LoadEstimator turns successive samples of one host into q_s and 1/mu_s
// (package tailroute, "Server load", states how). Pairs with no busy
// worker seen count as zero busy time, so a lightly loaded host is not
// estimated only from the instants it happened to be busy.
type LoadEstimator struct {
	prev    ThreadPoolSample
	hasPrev bool
	busy    [estimatorWindow]float64 // busy-worker time of each pair, ns
	done    [estimatorWindow]int64   // tasks completed in each pair
	ans     [estimatorWindow]uint64  // the client's own answers in each pair
	n       int                      // pairs recorded (ring index = n % estimatorWindow)
	last    time.Duration            // the latest estimate; its oldest pair is pair lastN
	lastN   int
	paired  bool // the latest Add recorded a pair
}

// The estimator's window: at least estimatorMinCompleted completions and
// estimatorMinPairs pairs, at most estimatorWindow pairs.
const (
	estimatorWindow       = 32
	estimatorMinPairs     = 4
	estimatorMinCompleted = 8
)

// Add returns q_s and 1/mu_s (0: no estimate) for s.
func (le *LoadEstimator) Add(s ThreadPoolSample) (queue float64, serviceTime time.Duration) {
	queue = max(s.Pending+s.Active-s.Own, 0)
	le.paired = false
	if le.hasPrev {
		dc := s.Completed - le.prev.Completed
		dt := s.At - le.prev.At
		if dc < 0 {
			// Counters reset (restart): s is the new baseline and the
			// window starts over.
			le.n, le.last = 0, 0
		} else if dt > 0 {
			k := le.n % estimatorWindow
			le.busy[k] = (s.Active + le.prev.Active) / 2 * float64(dt)
			le.done[k] = dc
			le.ans[k] = 0
			if s.Answers >= le.prev.Answers {
				le.ans[k] = s.Answers - le.prev.Answers
			}
			le.n++
			le.paired = true
		}
	}
	le.prev, le.hasPrev = s, true
	var busy float64
	var done int64
	for i := 1; i <= min(le.n, estimatorWindow); i++ {
		k := (le.n - i) % estimatorWindow
		busy += le.busy[k]
		done += le.done[k]
		if done >= estimatorMinCompleted && i >= estimatorMinPairs && busy > 0 {
			le.last, le.lastN = time.Duration(busy/float64(done)), le.n-i // its oldest pair
			break
		}
	}
	if le.last > 0 && le.n-le.lastN <= estimatorWindow {
		serviceTime = le.last
	}
	return queue, serviceTime
}

// Pair returns the completions and the client's own answers of the pair
// the latest Add recorded (false: that Add recorded none).
func (le *LoadEstimator) Pair() (done int64, answers uint64, ok bool) {
	if !le.paired {
		return 0, 0, false
	}
	k := (le.n - 1) % estimatorWindow
	return le.done[k], le.ans[k], true
}
