package track

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/internal/hist"
)

// Outcome classifies a finished attempt.
type Outcome uint8

const (
	// Success: the server answered (also when the answer is an error of the
	// query itself, such as a syntax error or "not found").
	Success Outcome = iota
	// Failure: the server answered with an error that signals trouble on that
	// host (overloaded, unavailable, bootstrapping, server-side timeouts...).
	// It counts against the host's success rate; its latency moves R_s only
	// when above it (see Observe).
	Failure
	// Lost: no answer, e.g. a client-side timeout or a broken connection.
	// Counts as a failure but is not a response (does not refresh the
	// last-response time or the receive rate).
	Lost
	// Cancelled: the caller gave up (context cancelled or expired, losing
	// speculative attempt). Not a response and not a failure. CQL cannot
	// cancel a request, so the host still serves it: the attempt is counted
	// as orphaned (View.Orphaned) until the host answers a later request,
	// and its elapsed time, a lower bound of its latency, updates R_s when it
	// exceeds R_s (without this, hedging hides exactly the slow samples).
	Cancelled
)

func (o Outcome) String() string {
	switch o {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case Lost:
		return "lost"
	case Cancelled:
		return "cancelled"
	}
	return "unknown"
}

// Attempt is returned by Begin and must be passed to End exactly once.
type Attempt struct {
	gen uint32
}

// Host is the state of one host. All methods are safe for concurrent use and
// lock-free except the rate adaptation, which uses a per-host TryLock.
type Host struct {
	id string
	t  *Tracker

	// osGen packs a generation (high 32 bits) and the outstanding count
	// (os_s, low 32 bits). Reset bumps the generation and zeroes the count;
	// End only decrements when its attempt's generation is current, so
	// attempts abandoned across a reset can never drive the count negative
	// or leave it stuck above zero.
	osGen atomic.Uint64

	resp     ewma         // R_s, nanoseconds
	svc      ewma         // 1/mu_s from feedback, nanoseconds
	queue    ewma         // q_s from feedback
	lastResp atomic.Int64 // clock time of the last response (or of the reset)
	lastFb   atomic.Int64 // clock time of the last Feedback (or of the reset)
	owedFrom atomic.Int64 // clock time the outstanding count last rose from 0
	probedAt atomic.Int64 // clock time of the last ClaimProbe that succeeded
	samples  atomic.Uint64
	censored atomic.Uint64 // censored samples recorded in hist (orphan)

	orphaned     atomic.Int64 // attempts the client gave up on (View.Orphaned)
	orphanedSent atomic.Int64 // latest send time among them
	orphanedAt   atomic.Int64 // clock time of the latest orphaning

	load serverLoad // polled server load (ServerLoad)

	hist   hist.Rolling
	median medianCache
	health healthBuckets
	rate   rateCtl

	// cumulative counts since the host was added, never reset (Prometheus
	// counters): see HostSnapshot.Total*
	totalMeasured  atomic.Uint64 // Observe with Success, Failure or Lost
	totalLatencyNs atomic.Uint64 // sum of their latencies
	totalErrors    atomic.Uint64 // Observe with Failure or Lost
	totalCancelled atomic.Uint64 // Observe with Cancelled
	outOfZone      atomic.Uint64 // CountOutOfZone
}

func newHost(id string, t *Tracker, now time.Duration) *Host {
	h := &Host{id: id, t: t}
	h.hist.Init(t.cfg.LatencyWindow, 2)
	h.health.init(t.cfg.HealthBucket, now)
	h.rate.init(&t.cfg.Rate, now, t.off.On(RuleFullRate))
	h.lastResp.Store(int64(now))
	h.lastFb.Store(int64(now))
	h.owedFrom.Store(int64(now))
	return h
}

// ID returns the host ID.
func (h *Host) ID() string { return h.id }

// Begin records that an attempt was handed to this host at now (os_s += 1).
func (h *Host) Begin(now time.Duration) Attempt {
	v := h.osGen.Add(1)
	if uint32(v) == 1 {
		h.owedFrom.Store(int64(now)) // the host owes a response from now on
	}
	return Attempt{gen: uint32(v >> 32)}
}

// End records that the attempt finished (os_s -= 1). It reports whether the
// attempt was still counted (false after a Reset in between).
func (h *Host) End(a Attempt) bool {
	for {
		old := h.osGen.Load()
		if uint32(old>>32) != a.gen || uint32(old) == 0 {
			return false
		}
		if h.osGen.CompareAndSwap(old, old-1) {
			return true
		}
	}
}

// InFlight returns the outstanding attempts (os_s).
func (h *Host) InFlight() int64 { return int64(uint32(h.osGen.Load())) }

// Answers returns the host's successful answers to this client since it
// was added (cumulative, never reset).
func (h *Host) Answers() uint64 { return h.totalMeasured.Load() - h.totalErrors.Load() }

// SuccessRate returns View.SuccessRate at now without the rest of the View.
func (h *Host) SuccessRate(now time.Duration) float64 {
	return h.health.successRate(now, h.t.successFloor())
}

// Observe records one attempt finished at now: latency from send to
// completion and its outcome. See Outcome for what each kind updates. A Success's latency
// always moves R_s and the latency histogram; a Failure's or Lost's only
// when it is above R_s: an error is a lower bound of the host's response
// time, so fast errors (Overloaded, Unavailable, a refused connection)
// cannot make a failing host look fast, while slow ones (a read timeout
// after service, a client timeout) make it look slow.
func (h *Host) Observe(now, latency time.Duration, o Outcome) {
	if latency < 0 {
		latency = 0
	}
	if o == Cancelled {
		h.totalCancelled.Add(1)
		h.orphan(now, latency)
		return
	}
	h.totalMeasured.Add(1)
	h.totalLatencyNs.Add(uint64(latency))
	if o != Success {
		h.totalErrors.Add(1)
	}
	response := o == Success || o == Failure
	if response && h.orphaned.Load() != 0 && int64(now-latency) >= h.orphanedSent.Load() {
		// The host answered a request sent after every orphaned one: a
		// server works through its queue in order, so those are done too.
		h.orphaned.Store(0)
	}
	if f, ok := h.forgetFactor(now - time.Duration(h.lastResp.Load())); ok && response {
		// first response after a long silence: the old estimates are what
		// View showed (forgotten toward the prior), not what was stored.
		// Not for a lost attempt: it does not end the silence, and each one
		// would forget again (a timing-out host's R_s would shrink).
		h.resp.decay(h.t.priorResponseTimeExcept(h), f)
		h.queue.decay(0, f)
	}
	if o == Success || h.failureRaises(latency) {
		h.resp.addCapped(float64(latency), h.answerWeight(now, float64(latency)), h.t.cfg.SampleCap)
		h.hist.Record(now, latency)
	}
	h.samples.Add(1)
	h.health.record(now, o == Success)
	if response {
		h.lastResp.Store(int64(now))
		h.rate.countResponse(now)
	}
	h.rate.adapt(now, h.t.hostsQueue(now))
}

// sampleWeight is the weight alpha' of a new R_s sample at now
// (Config.AgeDecay): ageWeight of the time since the last response.
func (h *Host) sampleWeight(now time.Duration) float64 {
	return h.ageWeight(now - time.Duration(h.lastResp.Load()))
}

// FastAnswerWeight is the weight of an answer faster than R_s for a client
// that is one of many (RuleFastAnswer; package tailroute, "Fast
// answers"): the weight the C3 paper gives every sample.
const FastAnswerWeight = 0.9

// answerWeight is the weight of R_s sample x at now: sampleWeight, or at
// least FastAnswerWeight for a sample below R_s while RuleFastAnswer
// applies.
func (h *Host) answerWeight(now time.Duration, x float64) float64 {
	a := h.sampleWeight(now)
	if h.t.fastAnswers() {
		if r, ok := h.resp.get(); ok && x < r {
			a = max(a, FastAnswerWeight)
		}
	}
	return a
}

// ageWeight is 1-(1-alpha)*exp(-dt/tau) (Config.AgeDecay), the weight of
// a sample that comes dt after the one before it; alpha when AgeDecay is
// off.
func (h *Host) ageWeight(dt time.Duration) float64 {
	a, tau := h.t.cfg.EWMAAlpha, h.t.cfg.AgeDecay
	if tau <= 0 || dt <= 0 {
		return a
	}
	return 1 - (1-a)*math.Exp(-float64(dt)/float64(tau))
}

// failureRaises reports whether a failed or lost attempt's latency moves R_s
// and the histogram: only when it is above R_s (above the prior when the
// host has no sample yet). An error is a lower bound of what a successful
// answer would have taken, never evidence of speed: an Overloaded or
// Unavailable answer comes back at once, a connection error even sooner,
// and counting them would make a failing host look fast. Errors that take
// time (a server read/write timeout after service, a client timeout) are
// above R_s and raise it, so a host that fails slowly looks slow as well as
// unhealthy.
func (h *Host) failureRaises(latency time.Duration) bool {
	r, ok := h.resp.get()
	if !ok {
		r = h.t.priorResponseTimeExcept(h)
	}
	return float64(latency) > r
}

// Feedback records server-reported queue size (q_s) and service time
// (1/mu_s), smoothed by EWMA with the age-weighted alpha' of R_s
// (Config.AgeDecay), dt being the time since the host's last Feedback.
func (h *Host) Feedback(queueSize float64, serviceTime time.Duration) {
	now := h.t.clock.Now()
	a := h.ageWeight(now - time.Duration(h.lastFb.Swap(int64(now))))
	if queueSize >= 0 {
		h.queue.add(queueSize, a)
	}
	if serviceTime >= 0 {
		h.svc.add(float64(serviceTime), a)
	}
}

// Reset forgets everything about the host (used when it comes back up): the
// host starts again as a clean slate, scored with cluster-wide priors.
// Attempts begun before the reset are no longer counted as outstanding.
func (h *Host) Reset() {
	now := h.t.clock.Now()
	for {
		old := h.osGen.Load()
		if h.osGen.CompareAndSwap(old, (old>>32+1)<<32) {
			break
		}
	}
	h.resp.reset()
	h.svc.reset()
	h.queue.reset()
	h.load.reset()
	h.samples.Store(0)
	h.hist.Reset()
	h.median.reset()
	h.health.reset(now)
	h.rate.reset(now)
	h.lastResp.Store(int64(now))
	h.lastFb.Store(int64(now))
	h.owedFrom.Store(int64(now))
	h.orphaned.Store(0)
	h.orphanedSent.Store(0)
}
