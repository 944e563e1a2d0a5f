package route

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/track"
)

// C3's concurrency compensation counts each request a client has in flight
// at a host w times (qhat_s = 1 + os_s*w + q_s): it assumes every other
// client keeps as many requests there. The paper sets w to the number of
// clients and notes that this "serves as a good approximation in settings
// where the number of clients is comparable to the expected queue lengths
// at the servers" (section 3.1). With server-load polling (WithServerLoad)
// those queue lengths are measured, so the policy keeps w within them:
//
//	w_eff = min(w, max(1, Qmax))
//
// Qmax is the longest of the polled hosts' queues (pending + active of
// ReadStage and MutationStage), each host's smoothed quick to rise and slow
// to fall (half way to a longer queue at once, a fifth of the way to a
// shorter one per poll) from w:
// the herd protection has to cover the most loaded server, and until the
// polls have shown short queues for a while the paper's w holds. Under
// load (some queue as long as the number of clients, or longer) w_eff = w;
// at low load, where the paper's approximation overstates the herd, one
// request in flight on a fast replica no longer counts as w of them (and
// loses to an idle replica several times slower). A host's queue counts
// while its latest poll is at most 6 of its poll intervals old; without
// any, w again.
type queueMean struct {
	mu    sync.Mutex
	hosts map[string]hostQueue // by host id
	bits  atomic.Uint64        // Qmax, float64 bits
	at    atomic.Int64         // clock time Qmax was computed at; 0 = never
	age   atomic.Int64         // the age up to which that Qmax counts
}

type hostQueue struct {
	mean   float64
	at     time.Duration
	maxAge time.Duration // queueMaxAgeIntervals of the host's poll interval
}

// How a host's smoothed queue moves toward a poll's: up and down.
const (
	queueRise = 0.5
	queueFall = 0.2
)

// add records one poll's queue (pending + active) of host id, taken at
// clock time at, for the configured w; the sample no longer counts once
// older than maxAge (queueMaxAgeIntervals of the host's poll interval).
func (m *queueMean) add(id string, at time.Duration, queue, w float64, maxAge time.Duration) {
	if queue < 0 || math.IsNaN(queue) {
		queue = 0
	}
	if at <= 0 {
		at = 1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hosts == nil {
		m.hosts = map[string]hostQueue{}
	}
	hq, ok := m.hosts[id]
	if !ok {
		hq.mean = w
	}
	if queue > hq.mean {
		hq.mean += queueRise * (queue - hq.mean)
	} else {
		hq.mean += queueFall * (queue - hq.mean)
	}
	hq.at, hq.maxAge = at, maxAge
	m.hosts[id] = hq
	qmax := 0.0
	for k, h := range m.hosts {
		if at-h.at > h.maxAge {
			delete(m.hosts, k)
			continue
		}
		qmax = max(qmax, h.mean)
	}
	m.bits.Store(math.Float64bits(qmax))
	m.age.Store(int64(maxAge))
	m.at.Store(int64(at))
}

// queueMaxAgeIntervals is how many of its poll intervals a host's polled
// queue keeps counting in Qmax after its latest poll.
const queueMaxAgeIntervals = 6

// weightAt returns w_eff at clock time now for w (weight).
func (r *Router[H, S]) weightAt(now time.Duration) float64 {
	return r.queues.weight(now, r.weight())
}

// weight returns w: WithConcurrencyWeight's, or by default the clients
// measured from the polls (clientCount). The tracker is given it at the
// start and after each poll pair (track.Tracker.SetClients: whether the
// client is one of many, for the rate decrease).
func (r *Router[H, S]) weight() float64 {
	if r.cfg.Weight > 0 {
		return r.cfg.Weight
	}
	if !r.on(track.RuleMeasuredWeight) {
		return 1
	}
	return r.clients.value()
}

// clientCount measures w, the clients like this one sharing the hosts:
// the hosts' completed requests over this client's own answers from them,
// over every host's poll pairs, each weighing exp(-age/clientWindow); at
// least 1, and 1 until clientMinAnswers own answers are counted.
type clientCount struct {
	mu        sync.Mutex
	done, own float64
	at        time.Duration
	bits      atomic.Uint64 // the estimate (float64 bits); 0: none yet
}

const (
	clientWindow     = 5 * time.Second
	clientMinAnswers = 20
	maxClients       = 1e6
)

// add counts one poll pair of a host, ending at clock time at: done
// requests completed there, own of them answered to this client.
func (c *clientCount) add(at time.Duration, done int64, own uint64) {
	if done < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if at > c.at {
		f := math.Exp(-float64(at-c.at) / float64(clientWindow))
		c.done, c.own, c.at = c.done*f, c.own*f, at
	}
	c.done += float64(done)
	c.own += float64(own)
	if c.own >= clientMinAnswers {
		c.bits.Store(math.Float64bits(min(maxClients, max(1, c.done/c.own))))
	}
}

// value returns the estimate, 1 without one.
func (c *clientCount) value() float64 {
	if b := c.bits.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return 1
}

// forget drops host id (no longer polled).
func (m *queueMean) forget(id string) {
	m.mu.Lock()
	delete(m.hosts, id)
	m.mu.Unlock()
}

// max returns Qmax (0 before any poll).
func (m *queueMean) max() float64 { return math.Float64frombits(m.bits.Load()) }

// weight returns w_eff at clock time now for the configured w: Qmax
// counts up to the max age of the latest sample.
func (m *queueMean) weight(now time.Duration, w float64) float64 {
	if w <= 1 {
		return w
	}
	at := m.at.Load()
	if at == 0 || now-time.Duration(at) > time.Duration(m.age.Load()) {
		return w
	}
	return min(w, max(1, m.max()))
}
