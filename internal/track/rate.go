package track

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// window counters: one atomic word, window id << 24 | count.
const (
	winCountBits = 24
	winCountMax  = 1<<winCountBits - 1
)

func winPack(id int64, n uint64) uint64  { return uint64(id)<<winCountBits | n }
func winUnpack(w uint64) (int64, uint64) { return int64(w >> winCountBits), w & winCountMax }

// rateCtl is the per-host rate limiter and controller. srate is read
// lock-free by the picker; Algorithm 2 runs under a per-host TryLock on the
// completion path (a completion that finds another goroutine adapting the
// same host skips adaptation; the next one catches up).
type rateCtl struct {
	cfg      *tracker.RateConfig
	interval int64
	fullRate bool // RuleFullRate

	srate atomic.Uint64 // float64 bits, requests per Interval
	sent  windowPair    // sent requests (Algorithm 1 tokens)
	recv  windowPair    // responses (rrate)

	mu   sync.Mutex
	r0   float64 // saturation rate R0 at the last decrease
	tDec int64   // T_dec
	tInc int64   // T_inc
	decs atomic.Uint64
	incs atomic.Uint64
}

func (r *rateCtl) init(cfg *tracker.RateConfig, now time.Duration, fullRate bool) {
	r.cfg, r.fullRate = cfg, fullRate
	r.interval = int64(cfg.Interval)
	r.reset(now)
}

func (r *rateCtl) reset(now time.Duration) {
	r.mu.Lock()
	r.srate.Store(math.Float64bits(r.cfg.InitialRate))
	r.r0 = r.cfg.InitialRate
	// Place T_dec one saddle in the past so that the cubic curve already
	// stands at R0 = InitialRate: an increase right after start never lowers
	// srate below its initial value.
	r.tDec = int64(now) - int64(r.cfg.Saddle)
	r.tInc = math.MinInt64 / 2
	id := int64(now) / r.interval
	r.sent.reset(id)
	r.recv.reset(id)
	r.mu.Unlock()
}

func (r *rateCtl) rate() float64 { return math.Float64frombits(r.srate.Load()) }

// withinRate reports whether fewer than srate requests were sent in the
// current window (Algorithm 1, line 4).
func (r *rateCtl) withinRate(now time.Duration) bool {
	return float64(r.sentInWindow(now)) < r.rate()
}

// consume counts one request sent in the current window (consume_token).
func (r *rateCtl) consume(now time.Duration) { r.sent.incr(r.window(now)) }

// window is the id of the rate window holding now.
func (r *rateCtl) window(now time.Duration) int64 { return int64(now) / r.interval }

// usedFullRate reports whether the client sent at least srate requests in
// the current or the previous window, i.e. whether the rate limit was what
// bounded its sending (not its own demand).
func (r *rateCtl) usedFullRate(now time.Duration, srate float64) bool {
	cur, prev := r.sent.counts(r.window(now))
	return float64(cur) >= srate || float64(prev) >= srate
}

// windowPair counts events in fixed windows (one atomic word each): the
// current window and the one before it.
type windowPair struct{ cur, prev atomic.Uint64 }

// reset starts window id empty, with an empty window before it.
func (w *windowPair) reset(id int64) {
	w.cur.Store(winPack(id, 0))
	w.prev.Store(winPack(id-1, 0))
}

// incr counts one event in window id; when that starts a new window, the
// one it replaces becomes prev if it was window id-1, else prev is empty.
func (w *windowPair) incr(id int64) {
	old, changed := winIncr(&w.cur, id)
	if oid, _ := winUnpack(old); changed && oid < id {
		if oid == id-1 {
			w.prev.Store(old)
		} else {
			w.prev.Store(winPack(id-1, 0))
		}
	}
}

// counts returns the events in window id and in window id-1.
func (w *windowPair) counts(id int64) (cur, prev uint64) {
	cid, cn := winUnpack(w.cur.Load())
	switch cid {
	case id:
		if pid, pn := winUnpack(w.prev.Load()); pid == id-1 {
			prev = pn
		}
		return cn, prev
	case id - 1:
		return 0, cn // nothing yet in window id
	}
	return 0, 0
}

// winIncr adds one to the window counter w for window cur, starting a new
// window when w holds an older one. It returns the word it replaced and
// whether it changed w (not when w is saturated or already past cur).
func winIncr(w *atomic.Uint64, cur int64) (old uint64, changed bool) {
	for {
		old = w.Load()
		id, n := winUnpack(old)
		var nw uint64
		switch {
		case id == cur:
			if n >= winCountMax {
				return old, false
			}
			nw = winPack(cur, n+1)
		case id < cur:
			nw = winPack(cur, 1)
		default:
			return old, false
		}
		if w.CompareAndSwap(old, nw) {
			return old, true
		}
	}
}

// sentInWindow returns the requests sent in the current window.
func (r *rateCtl) sentInWindow(now time.Duration) uint64 {
	n, _ := r.sent.counts(r.window(now))
	return n
}

// untilNextWindow returns the time until the sending window rolls over.
func (r *rateCtl) untilNextWindow(now time.Duration) time.Duration {
	return time.Duration(r.interval - int64(now)%r.interval)
}

func (r *rateCtl) countResponse(now time.Duration) { r.recv.incr(r.window(now)) }

// receiveRate (rrate) is the number of responses in the last Interval,
// estimated from the current and previous fixed windows (sliding-window
// approximation: prev*(1-elapsed fraction) + current).
func (r *rateCtl) receiveRate(now time.Duration) float64 {
	frac := float64(int64(now)%r.interval) / float64(r.interval)
	cur, prev := r.recv.counts(r.window(now))
	return float64(cur) + float64(prev)*(1-frac)
}

// adapt runs Algorithm 2 lines 3-11 at time now, with one change: the
// decrease (srate > rrate) only applies while the client actually sends at
// its full rate (usedFullRate), or while the hosts queue (queueing: the
// polled hosts hold more than QueueingLoad times their W_s requests on
// average, ManyClientsLoad times for a client that is one of many;
// RuleQueueing, RuleManyClients). When the client's own demand is below srate,
// rrate measures that demand, not the server's capacity, and is below srate
// by construction; decreasing then would pin srate to the demand of the
// last window and divert every burst to worse replicas (TCP's
// congestion-window validation, RFC 7661, makes the same exception for
// application-limited senders). While the hosts queue, the servers' queues
// bound the answers, not the client's demand.
func (r *rateCtl) adapt(now time.Duration, queueing bool) {
	if !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	c := r.cfg
	t := int64(now)
	srate := r.rate()
	rrate := r.receiveRate(now)
	switch {
	case srate > rrate && t-r.tInc > int64(c.Hysteresis) && (!r.fullRate || queueing || r.usedFullRate(now, srate)):
		r.r0 = srate
		srate *= c.Beta
		if srate < c.MinRate {
			srate = c.MinRate
		}
		r.tDec = t
		r.decs.Add(1)
	case srate < rrate:
		dT := float64(t - r.tDec)
		r.tInc = t
		k := float64(c.Saddle) // = cbrt(Beta*R0/gamma) with gamma = Beta*R0/Saddle^3
		x := (dT - k) / k
		curve := c.Beta*r.r0*x*x*x + r.r0 // gamma*(dT - K)^3 + R0
		srate = math.Min(srate+c.SMax, curve)
		if srate < c.MinRate {
			srate = c.MinRate
		}
		r.incs.Add(1)
	default:
		return
	}
	r.srate.Store(math.Float64bits(srate))
}

// CubicRate evaluates the cubic growth curve of Algorithm 2 line 10,
// gamma*(dT - cbrt(beta*R0/gamma))^3 + R0, with gamma chosen so that the
// curve returns to R0 after saddle: gamma = beta*R0/saddle^3.
func CubicRate(dT, saddle time.Duration, beta, r0 float64) float64 {
	gamma := beta * r0 / math.Pow(float64(saddle), 3)
	d := float64(dT) - math.Cbrt(beta*r0/gamma)
	return gamma*d*d*d + r0
}

// WithinRate reports whether the host is within its sending rate srate for
// the current window (Algorithm 1, line 4).
func (h *Host) WithinRate(now time.Duration) bool { return h.rate.withinRate(now) }

// ConsumeToken counts one request against the host's sending rate.
func (h *Host) ConsumeToken(now time.Duration) { h.rate.consume(now) }

// UntilNextRateWindow returns the time until the host's sending window rolls
// over and its tokens are replenished.
func (h *Host) UntilNextRateWindow(now time.Duration) time.Duration {
	return h.rate.untilNextWindow(now)
}

// Rate returns the current sending rate srate (requests per Interval).
func (h *Host) Rate() float64 { return h.rate.rate() }

// ReceiveRate returns rrate (responses in the last Interval).
func (h *Host) ReceiveRate(now time.Duration) float64 { return h.rate.receiveRate(now) }
