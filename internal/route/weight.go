package route

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// C3's concurrency compensation counts each request a client has in flight
// at a host w times (qhat_s = 1 + os_s*w + q_s): it assumes every other
// client keeps as many requests there. The paper sets w to the number of
// clients and notes that this "serves as a good approximation in settings
// where the number of clients is comparable to the expected queue lengths
// at the servers" (section 3.1). With server-load polling (WithServerLoad)
// those queue lengths are measured, so the policy keeps w within them:
//
//	w_eff = min(w, max(1, Qbar))
//
// Qbar is the mean over the client's polls of the polled hosts' queues
// (pending + active of ReadStage and MutationStage), smoothed over about
// twenty polls. Under load (queues as long as the number of clients, or
// longer) w_eff = w, the paper's setting; at low load, where the paper's
// approximation overstates the herd, one request in flight on a fast
// replica no longer counts as w of them (and loses to an idle replica
// several times slower). Without samples for 6 poll intervals, w again.
type queueMean struct {
	mu   sync.Mutex
	mean float64
	n    int
	bits atomic.Uint64 // mean, float64 bits
	at   atomic.Int64  // clock time of the latest sample; 0 = none
}

// queueMeanAlpha smooths Qbar: about twenty polls (one second with five
// hosts at the default interval).
const queueMeanAlpha = 0.05

// add records one poll's queue (pending + active) taken at clock time at.
func (m *queueMean) add(at time.Duration, queue float64) {
	if queue < 0 || math.IsNaN(queue) {
		queue = 0
	}
	m.mu.Lock()
	if m.n == 0 {
		m.mean = queue
	} else {
		m.mean += queueMeanAlpha * (queue - m.mean)
	}
	m.n++
	m.bits.Store(math.Float64bits(m.mean))
	m.mu.Unlock()
	if at <= 0 {
		at = 1
	}
	m.at.Store(int64(at))
}

// weight returns w_eff at clock time now for the configured w, samples
// counting up to maxAge.
func (m *queueMean) weight(now time.Duration, w float64, maxAge time.Duration) float64 {
	if w <= 1 {
		return w
	}
	at := m.at.Load()
	if at == 0 || now-time.Duration(at) > maxAge {
		return w
	}
	return min(w, max(1, math.Float64frombits(m.bits.Load())))
}
