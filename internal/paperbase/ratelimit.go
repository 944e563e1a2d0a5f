package paperbase

import (
	"math"
	"time"
)

// RateParams are the C3 paper's rate-control parameters (§3.2, §4), as
// absim sets them (origin/table simulations/client.py, experiment.py and
// the published factorial.py at c5d5488). C3 and RR (absim's
// "round_robin" with --backpressure) both use them.
type RateParams struct {
	// Interval is the rate interval (δ): sending and receive rates are
	// counted in requests per Interval. absim: --rateInterval 20 (ms).
	Interval time.Duration
	// Beta is the multiplicative decrease (β): srate <- srate·β on a
	// decrease, and the cubic term ∛(β·R0/γ). absim: --cubicBeta 0.2.
	Beta float64
	// Gamma is the cubic scaling factor (γ, absim's cubicC), in requests
	// per Interval per ms³. absim: --cubicC 0.000004.
	Gamma float64
	// SMax caps one rate increase (s_max), in requests per Interval.
	// absim: --cubicSmax 10.
	SMax float64
	// Hysteresis is the hysteresis period as a multiple of Interval: no
	// decrease until now - T_inc > Hysteresis·Interval. absim:
	// --hysterisisFactor 2.
	Hysteresis float64
	// InitialRate is the initial sending rate (srate) and saturation rate
	// (R0) per server. absim: RateLimiter(..., 10, rateInterval) and
	// valueOfLastDecrease = 10 (client.py:59-63).
	InitialRate float64
	// MaxTokens is the token bucket's size (and initial content). absim:
	// maxTokens = 10 (client.py:59-61, 510-518).
	MaxTokens float64
	// ReceiveAlpha is the weight of the last interval's response count in
	// the receive rate (rrate) EWMA. absim: alpha = 0.1 (client.py:560).
	ReceiveAlpha float64
	// MinRate is the floor of a decreased rate. absim: max(rate, 0.01)
	// (client.py:365-366).
	MinRate float64
}

// DefaultRateParams returns absim's published values (see RateParams).
func DefaultRateParams() RateParams {
	return RateParams{
		Interval:     20 * time.Millisecond,
		Beta:         0.2,
		Gamma:        0.000004,
		SMax:         10,
		Hysteresis:   2,
		InitialRate:  10,
		MaxTokens:    10,
		ReceiveAlpha: 0.1,
		MinRate:      0.01,
	}
}

func (p RateParams) validate() {
	if p.Interval <= 0 || p.Beta <= 0 || p.Beta >= 1 || p.Gamma <= 0 || p.SMax <= 0 ||
		p.Hysteresis < 0 || p.InitialRate <= 0 || p.MaxTokens < 1 || p.ReceiveAlpha <= 0 ||
		p.ReceiveAlpha > 1 || p.MinRate <= 0 {
		panic("paperbase: invalid RateParams")
	}
}

// ms converts a virtual time to absim's clock unit (float milliseconds).
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// round9 is Python's round(x, 9), which absim applies to token counts and
// waiting times (client.py:527, 533).
func round9(x float64) float64 { return math.Round(x*1e9) / 1e9 }

// limiter is one client's state for one server: absim's RateLimiter,
// ReceiveRate and the per-server fields of Client.updateRates.
type limiter struct {
	rate     float64 // srate, requests per Interval
	tokens   float64 // bucket content as of lastSent
	lastSent float64 // ms
	lastDec  float64 // T_dec, ms
	lastInc  float64 // T_inc, ms
	r0       float64 // R0, rate at the last decrease
	rrate    float64 // receive-rate EWMA, responses per Interval
	rcount   float64 // responses since the last tick
	rtick    int64   // index of the last receive-rate tick applied
}

// rateControl is the per-server rate limiting, CUBIC adaptation and the
// backpressure bookkeeping shared by C3 and RR.
type rateControl struct {
	p          RateParams
	intervalMs float64
	lim        []limiter
	// Per replica group (keyed by its first replica): the replica whose
	// token absim forces to 1 when the backlog's wait ends, and when.
	forceRep []int32
	forceAt  []float64
	// The last replica Choose returned (its token is already consumed):
	// a Sent to another server is a shadow read.
	chosen    int32
	hasChosen bool
}

func newRateControl(p RateParams, servers int) rateControl {
	p.validate()
	rc := rateControl{
		p:          p,
		intervalMs: ms(p.Interval),
		lim:        make([]limiter, servers),
		forceRep:   make([]int32, servers),
		forceAt:    make([]float64, servers),
		chosen:     -1,
	}
	for i := range rc.lim {
		rc.lim[i] = limiter{rate: p.InitialRate, tokens: p.MaxTokens, r0: p.InitialRate}
		rc.forceRep[i] = -1
	}
	return rc
}

// getTokens is absim's RateLimiter.getTokens.
func (rc *rateControl) getTokens(s int32, now float64) float64 {
	l := &rc.lim[s]
	return math.Min(rc.p.MaxTokens, l.tokens+l.rate/rc.intervalMs*(now-l.lastSent))
}

// tryAcquire is absim's RateLimiter.tryAcquire: 0 if a token is there
// (and the accrued tokens are stored), else the ms to wait for one.
func (rc *rateControl) tryAcquire(s int32, now float64) float64 {
	tokens := rc.getTokens(s, now)
	if round9(tokens) >= 1 {
		rc.lim[s].tokens = tokens
		return 0
	}
	return round9((1 - tokens) * rc.intervalMs / rc.lim[s].rate)
}

// consume is absim's RateLimiter.update, on a real send.
func (rc *rateControl) consume(s int32, now float64) {
	rc.lim[s].lastSent = now
	rc.lim[s].tokens--
	rc.chosen, rc.hasChosen = s, true
}

// sent is told of every send: the one Choose just returned was already
// charged; any other (a shadow read) is absim's RateLimiter.forceUpdates.
func (rc *rateControl) sent(s int32) {
	if rc.hasChosen && rc.chosen == s {
		rc.hasChosen = false
		return
	}
	rc.lim[s].tokens = math.Max(rc.lim[s].tokens-1, 0)
}

// applyForce replays absim's BackpressureScheduler after its wait
// (client.py:490-499): the replica with the shortest wait gets tokens = 1
// and lastSent = the wake time, once, at the group's next Choose at or
// after that time.
func (rc *rateControl) applyForce(group int32, now float64) {
	r := rc.forceRep[group]
	if r < 0 || now < rc.forceAt[group] {
		return
	}
	rc.lim[r].tokens = 1
	rc.lim[r].lastSent = rc.forceAt[group]
	rc.forceRep[group] = -1
}

// first is Algorithm 1's send step over order, the replicas in the order
// to try: the first with a token gets the request (its token taken);
// without one, the group's head request waits for the replica that has a
// token soonest (backlog), retryAfter > 0.
func (rc *rateControl) first(order []int32, group int32, now float64) (int32, time.Duration) {
	minWait, minRep := math.Inf(1), int32(-1)
	for _, s := range order {
		w := rc.tryAcquire(s, now)
		if w == 0 {
			rc.consume(s, now)
			return s, 0
		}
		if w < minWait {
			minWait, minRep = w, s
		}
	}
	return -1, rc.backlog(group, minRep, now, minWait)
}

// backlog records that the group's head request waits wait ms for replica
// r, and returns the retryAfter to give the simulator (at least 1 ns).
func (rc *rateControl) backlog(group, r int32, now, wait float64) time.Duration {
	rc.forceRep[group] = r
	rc.forceAt[group] = now + wait
	d := time.Duration(math.Ceil(wait * float64(time.Millisecond)))
	if d < 1 {
		d = 1
	}
	return d
}

// receive counts a response into the receive rate: the EWMA ticks every
// Interval from time 0 (absim's ReceiveRate process), applied lazily
// here; a tick at exactly now is applied before the count.
func (rc *rateControl) receive(s int32, now time.Duration) {
	l := &rc.lim[s]
	tick := int64(now / rc.p.Interval)
	if tick > l.rtick {
		a := rc.p.ReceiveAlpha
		l.rrate = a*l.rcount + (1-a)*l.rrate
		if k := tick - l.rtick; k > 1 {
			l.rrate *= math.Pow(1-a, float64(k-1))
		}
		l.rcount = 0
		l.rtick = tick
	}
	l.rcount++
}

// adapt is absim's Client.updateRates (client.py:322-369), the paper's
// Algorithm 2 lines 3-11.
func (rc *rateControl) adapt(s int32, now float64) {
	l := &rc.lim[s]
	p := &rc.p
	send, recv := l.rate, l.rrate
	switch {
	case send < recv:
		t := now - l.lastDec
		l.lastInc = now
		k := t - math.Cbrt(l.r0*p.Beta/p.Gamma)
		next := p.Gamma*k*k*k + l.r0
		if next-send > p.SMax {
			l.rate += p.SMax
		} else {
			l.rate = next
		}
	case recv == 0:
	case send > recv && now-l.lastInc > rc.intervalMs*p.Hysteresis:
		l.r0 = send
		l.rate = math.Max(l.rate*p.Beta, p.MinRate)
		l.lastDec = now
	}
}

// done is the rate-control part of a response (absim's ResponseHandler:
// receiveRate.add(1), then updateRates).
func (rc *rateControl) done(s int32, now time.Duration) {
	rc.receive(s, now)
	rc.adapt(s, ms(now))
}
