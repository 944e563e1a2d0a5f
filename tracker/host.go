package tracker

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
	owedFrom atomic.Int64 // clock time the outstanding count last rose from 0
	probedAt atomic.Int64 // clock time of the last ClaimProbe that succeeded
	samples  atomic.Uint64

	orphaned     atomic.Int64 // attempts the client gave up on (View.Orphaned)
	orphanedSent atomic.Int64 // latest send time among them
	orphanedAt   atomic.Int64 // clock time of the latest orphaning

	load serverLoad // polled server load (ServerLoad)

	hist   hist.Rolling
	health healthBuckets
	rate   rateCtl

	// cumulative counts since the host was added, never reset (Prometheus
	// counters): see HostSnapshot.Total*
	totalMeasured  atomic.Uint64 // Observe with Success, Failure or Lost
	totalLatencyNs atomic.Uint64 // sum of their latencies
	totalErrors    atomic.Uint64 // Observe with Failure or Lost
	totalCancelled atomic.Uint64 // Observe with Cancelled
}

func newHost(id string, t *Tracker, now time.Duration) *Host {
	h := &Host{id: id, t: t}
	h.hist.Init(t.cfg.LatencyWindow, 2)
	h.health.init(t.cfg.HealthBucket, now)
	h.rate.init(&t.cfg.Rate, now)
	h.lastResp.Store(int64(now))
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
		h.resp.add(float64(latency), h.sampleWeight(now))
		h.hist.Record(now, latency)
	}
	h.samples.Add(1)
	h.health.record(now, o == Success)
	if response {
		h.lastResp.Store(int64(now))
		h.rate.countResponse(now)
	}
	h.rate.adapt(now)
}

// sampleWeight is the weight alpha' of a new R_s sample at now
// (Config.AgeDecay): 1-(1-alpha)*exp(-dt/tau), dt the time since the last
// response.
func (h *Host) sampleWeight(now time.Duration) float64 {
	a, tau := h.t.cfg.EWMAAlpha, h.t.cfg.AgeDecay
	dt := now - time.Duration(h.lastResp.Load())
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

// orphan records an attempt the client gave up on after latency (see
// Cancelled and View.Orphaned).
func (h *Host) orphan(now, latency time.Duration) {
	sent := int64(now - latency)
	for {
		old := h.orphanedSent.Load()
		if sent <= old || h.orphanedSent.CompareAndSwap(old, sent) {
			break
		}
	}
	if h.orphansExpired(now, h.orphanedAt.Swap(int64(now))) {
		h.orphaned.Store(0) // the earlier ones expired: they must not come back
	}
	h.orphaned.Add(1)
	// A censored sample: the attempt would have taken at least latency.
	// It says something only when that is more than R_s.
	if r, ok := h.resp.get(); ok && float64(latency) > r {
		h.resp.add(float64(latency), h.t.cfg.EWMAAlpha)
		h.hist.Record(now, latency)
	}
}

// Orphaned returns View.Orphaned: attempts the client gave up on that the
// host may still be serving. They stop counting when the host answers a
// request sent after all of them, after ForgetAfter without a new one, or
// on Reset.
func (h *Host) Orphaned(now time.Duration) int64 {
	n := h.orphaned.Load()
	if n <= 0 {
		return 0
	}
	if h.orphansExpired(now, h.orphanedAt.Load()) {
		return 0
	}
	return n
}

// orphansExpired reports whether orphans last added at time at no longer
// count at now: ForgetAfter has passed without a new one.
func (h *Host) orphansExpired(now time.Duration, at int64) bool {
	fa := h.t.cfg.ForgetAfter
	return fa > 0 && now-time.Duration(at) > fa
}

// Outstanding is os_s as rankers use it: attempts in flight plus orphaned
// ones (see View.Orphaned).
func (h *Host) Outstanding(now time.Duration) int64 { return h.InFlight() + h.Orphaned(now) }

// Outstanding is Host.Outstanding read from a View.
func (v View) Outstanding() int64 { return v.InFlight + v.Orphaned }

// Feedback records server-reported queue size (q_s) and service time
// (1/mu_s), smoothed by EWMA.
func (h *Host) Feedback(queueSize float64, serviceTime time.Duration) {
	a := h.t.cfg.EWMAAlpha
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
	h.health.reset(now)
	h.rate.reset(now)
	h.lastResp.Store(int64(now))
	h.owedFrom.Store(int64(now))
	h.orphaned.Store(0)
	h.orphanedSent.Store(0)
}

// View is what ranking needs to know about a host, read at one instant.
type View struct {
	InFlight      int64         // os_s
	ResponseTime  float64       // R_s in ns; the mean R_s of the hosts with samples (or DefaultResponseTime) when the host has none; pulled toward the other hosts' mean when the host is idle and stale (Config.ForgetAfter)
	ServiceTime   float64       // 1/mu_s in ns: feedback EWMA, else ResponseTime
	QueueSize     float64       // q_s: feedback EWMA, else 0
	HasSamples    bool          // R_s is the host's own
	HasFeedback   bool          // ServiceTime and QueueSize come from the server
	SuccessRate   float64       // weighted success ratio of the rolling buckets, 1 with no data
	SinceResponse time.Duration // time since the last response (or since the host was added/reset)
	// Silence is how long the host has owed a response without giving one:
	// the time since the later of its last response and the moment its
	// outstanding count last rose from zero; 0 when nothing is outstanding.
	// It grows from the first moment of a stall (a GC pause, a frozen
	// process), long before the stalled requests return to move R_s.
	Silence time.Duration
	// Orphaned counts attempts the client gave up on (Cancelled: a losing
	// hedge, an expired context) that the host is presumably still serving:
	// CQL has no cancel. Not part of InFlight (they owe no response the
	// client will see, so they do not make Silence); rankers add them to
	// the outstanding count (os_s) of the C3 score.
	Orphaned int64
	// ServerLoadWeight is the weight (0..1) of the polled server-load sample
	// in QueueSize and ServiceTime (see Host.ServerLoad and
	// ServerLoadWeight); 0 without a usable sample or with payload feedback.
	// ServerLoadAge is that sample's age.
	ServerLoadWeight float64
	ServerLoadAge    time.Duration
	// Workers is W_s, the requests the server serves at once, as polled
	// (Host.ServerWorkers); 0 when unknown.
	Workers float64
}

// View reads the host's ranking inputs at time now.
func (h *Host) View(now time.Duration) View {
	t := h.t
	v := View{InFlight: h.InFlight(), Orphaned: h.Orphaned(now), Workers: float64(h.load.workers.Load())}
	if r, ok := h.resp.get(); ok {
		v.ResponseTime, v.HasSamples = r, true
	} else {
		v.ResponseTime = t.priorResponseTime()
	}
	if s, ok := h.svc.get(); ok {
		v.ServiceTime, v.HasFeedback = s, true
		v.QueueSize, _ = h.queue.get()
	} else {
		v.ServiceTime = v.ResponseTime
	}
	v.SuccessRate = h.health.successRate(now, t.successFloor())
	v.SinceResponse = now - time.Duration(h.lastResp.Load())
	if v.InFlight > 0 {
		v.Silence = h.silence(now, v.SinceResponse)
	} else if f, ok := h.forgetFactor(v.SinceResponse); ok {
		// Idle and not heard from for a while: trust old estimates less.
		if v.HasSamples {
			prior := t.priorResponseTimeExcept(h)
			v.ResponseTime = prior + (v.ResponseTime-prior)*f
			if !v.HasFeedback {
				v.ServiceTime = v.ResponseTime
			}
		}
		v.QueueSize *= f
	}
	if !v.HasFeedback && h.applyServerLoad(&v, now) {
		floorResponseTime(&v)
	}
	return v
}

// forgetFactor is the weight old estimates keep after since without a
// response (Config.ForgetAfter), and whether any forgetting applies.
func (h *Host) forgetFactor(since time.Duration) (float64, bool) {
	fa := h.t.cfg.ForgetAfter
	if fa <= 0 || since <= fa {
		return 1, false
	}
	return math.Exp(-float64(since-fa) / float64(fa)), true
}

// silence is View.Silence for a host with requests outstanding.
func (h *Host) silence(now, sinceResponse time.Duration) time.Duration {
	s := now - time.Duration(h.owedFrom.Load())
	if sinceResponse < s {
		s = sinceResponse
	}
	if s < 0 {
		return 0
	}
	return s
}

// Silence returns View.Silence: how long the host has owed a response
// without giving one (0 when nothing is outstanding).
func (h *Host) Silence(now time.Duration) time.Duration {
	if h.InFlight() == 0 {
		return 0
	}
	return h.silence(now, h.SinceResponse(now))
}

// SinceResponse returns the time since the last response (or since the host
// was added or reset).
func (h *Host) SinceResponse(now time.Duration) time.Duration {
	return now - time.Duration(h.lastResp.Load())
}

// Busy reports the DataStax busy-node condition: at least minInFlight
// outstanding requests (orphaned ones included) and no response for at
// least noResponse.
func (h *Host) Busy(now time.Duration, minInFlight int64, noResponse time.Duration) bool {
	return busy(h.Outstanding(now), h.SinceResponse(now), minInFlight, noResponse)
}

// Busy is Host.Busy read from a View.
func (v View) Busy(minInFlight int64, noResponse time.Duration) bool {
	return busy(v.Outstanding(), v.SinceResponse, minInFlight, noResponse)
}

// busy is the DataStax busy-node rule, written once for Host and View.
func busy(outstanding int64, sinceResponse time.Duration, minInFlight int64, noResponse time.Duration) bool {
	return outstanding >= minInFlight && sinceResponse >= noResponse
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

// LatencyQuantile returns the q-quantile of this host's recent latencies and
// false when fewer than MinQuantileSamples were recorded in the window.
func (h *Host) LatencyQuantile(q float64) (time.Duration, bool) {
	if !(q > 0 && q <= 1) {
		return 0, false
	}
	d, n := h.hist.Quantile(h.t.clock.Now(), q)
	return d, n >= uint64(h.t.cfg.MinQuantileSamples)
}

// HostSnapshot is a point-in-time copy of a host's state.
type HostSnapshot struct {
	ID            string
	InFlight      int64         // os_s
	Orphaned      int64         // see View.Orphaned
	ResponseTime  time.Duration // R_s (0 when no sample)
	ServiceTime   time.Duration // 1/mu_s from feedback (0 when none)
	QueueSize     float64       // q_s from feedback
	HasFeedback   bool
	Samples       uint64  // attempts observed since the host was added or reset
	Responses     uint64  // finished attempts in the rolling health window
	Successes     uint64  // successful attempts in the rolling health window
	SuccessRate   float64 // weighted success ratio (see View)
	SinceResponse time.Duration
	Silence       time.Duration // see View.Silence
	Rate          float64       // srate, requests per rate Interval
	ReceiveRate   float64       // rrate, responses per rate Interval
	SentInWindow  uint64        // requests sent in the current rate window
	RateDecreases uint64        // Algorithm 2 decrease events
	RateIncreases uint64        // Algorithm 2 increase events
	P50, P99      time.Duration
	QuantilesOK   bool // P50/P99 are based on at least MinQuantileSamples samples

	// Cumulative since the host was added, not cleared by Reset (what
	// Prometheus counters need): attempts observed with any outcome, those
	// measured (every outcome but Cancelled) and the sum of their latencies,
	// and those that ended in Failure or Lost.
	TotalAttempts uint64
	TotalMeasured uint64
	TotalLatency  time.Duration
	TotalErrors   uint64

	// ServerQueue and ServerServiceTime are the latest polled server-load
	// sample (q_s, smoothed 1/mu_s; see Host.ServerLoad) and ServerLoadAge
	// its age; HasServerLoad is false before the first sample.
	ServerQueue       float64
	ServerServiceTime time.Duration
	ServerLoadAge     time.Duration
	HasServerLoad     bool
	ServerWorkers     int64 // W_s as polled (Host.ServerWorkers); 0 = unknown
}

// Snapshot returns a copy of the host's state.
func (h *Host) Snapshot() HostSnapshot {
	now := h.t.clock.Now()
	s := HostSnapshot{ID: h.id, InFlight: h.InFlight(), Orphaned: h.Orphaned(now), ServerWorkers: h.load.workers.Load()}
	if r, ok := h.resp.get(); ok {
		s.ResponseTime = time.Duration(r)
	}
	if v, ok := h.svc.get(); ok {
		s.ServiceTime, s.HasFeedback = time.Duration(v), true
		s.QueueSize, _ = h.queue.get()
	}
	if at := h.load.at.Load(); at != 0 {
		s.HasServerLoad, s.ServerLoadAge = true, now-time.Duration(at)
		s.ServerQueue = math.Float64frombits(h.load.queue.Load())
		if v, ok := h.load.svc.get(); ok {
			s.ServerServiceTime = time.Duration(v)
		}
	}
	s.Samples = h.samples.Load()
	s.Responses, s.Successes = h.health.counts(now)
	s.SuccessRate = h.health.successRate(now, h.t.successFloor())
	s.SinceResponse = h.SinceResponse(now)
	s.Silence = h.Silence(now)
	s.Rate = h.rate.rate()
	s.ReceiveRate = h.rate.receiveRate(now)
	s.SentInWindow = h.rate.sentInWindow(now)
	s.RateDecreases = h.rate.decs.Load()
	s.RateIncreases = h.rate.incs.Load()
	var n uint64
	s.P50, n = h.hist.Quantile(now, 0.5)
	s.P99, _ = h.hist.Quantile(now, 0.99)
	s.QuantilesOK = n >= uint64(h.t.cfg.MinQuantileSamples)
	s.TotalMeasured = h.totalMeasured.Load()
	s.TotalAttempts = s.TotalMeasured + h.totalCancelled.Load()
	s.TotalLatency = time.Duration(h.totalLatencyNs.Load())
	s.TotalErrors = h.totalErrors.Load()
	return s
}
