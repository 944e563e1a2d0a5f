package route

import (
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/track"
)

// rank fills st.cand with the up local replicas (or, without token
// information, a random sample of up local hosts) and orders them.
func (st *queryState[H, S]) rank() {
	p := st.r
	t := st.tbl
	st.rnd = core.Rand(p.rand64())
	n := 0
	if st.routed {
		for _, i := range st.replicas {
			if n == maxCand {
				break
			}
			e := t.hosts[i]
			if e.local && e.up.Load() { // gocql's own state is checked at hand-out
				st.cand[n] = core.Candidate{Host: i}
				n++
			}
		}
	} else if len(t.local) > 0 {
		start := st.rnd.Intn(len(t.local))
		for k := 0; k < len(t.local) && n < p.cfg.MaxCandidates; k++ {
			i := t.local[(start+k)%len(t.local)]
			if t.hosts[i].up.Load() {
				st.cand[n] = core.Candidate{Host: i}
				n++
			}
		}
	}
	st.ncand = n
	st.fbStart = int(st.rnd.Next() >> 33) // fallback starts at a random host
	if n == 0 {
		return
	}
	c := st.cand[:n]
	switch strategy(&p.cfg) {
	case tailroute.RoundRobin:
		core.OrderRoundRobin(c, p.rr.Add(1))
	case tailroute.P2C:
		now := p.clock.Now()
		st.now, st.haveNow = now, true
		for k := range c {
			h := t.hosts[c[k].Host].h
			c[k].InFlight = h.Outstanding(now)
			c[k].Busy = h.Busy(now, int64(p.cfg.BusyInFlight), p.cfg.BusyNoResponse)
			c[k].Success = float32(h.SuccessRate(now))
		}
		st.demote(c)
		core.OrderP2C(c, &st.rnd)
		if st.probe(c, now) {
			p.probes.Add(1)
		}
	default:
		st.rankC3(c)
	}
}

// rankC3 implements Algorithm 1 with the C3 score: materially less healthy
// replicas last (core.DemoteUnhealthy), sort by score, probe a demoted
// replica when one is due, then send to the first replica within its rate;
// if none is, wait for the next rate window (bounded by
// MaxBackpressureWait) and then send to the best within rate, or to the
// best replica anyway.
func (st *queryState[H, S]) rankC3(c []core.Candidate) {
	p := st.r
	t := st.tbl
	cfg := &p.cfg
	now := p.clock.Now()
	st.now, st.haveNow = now, true
	limited := p.rateLimited()
	zone := cfg.LocalRack != ""
	known := &st.known
	for k := range c {
		h := t.hosts[c[k].Host].h
		v := &known[k].view
		h.ReadView(v, now)
		w, workers := p.scoreWeights(v, now)
		c[k].Score = p.scoreWith(v, w, workers)
		if p.polled || zone {
			known[k].set(c[k].Host, w, workers)
		}
		c[k].InFlight = v.Outstanding()
		c[k].Success = float32(v.SuccessRate)
		if limited {
			c[k].InRate = !p.stalled(v) && h.WithinRate(now)
		}
	}
	st.demote(c)
	eligible := core.OrderByScore(c, &st.rnd)
	if p.polled && p.on(track.RuleKnownSlow) {
		st.knownSlowBehind(c, eligible, known[:len(c)], now)
	}
	if zone {
		st.keepInZone(c, eligible, known[:len(c)], now)
	}
	if st.probe(c, now) {
		return
	}
	if !limited || core.PromoteInRate(c, eligible) {
		return
	}
	// Backpressure: every eligible replica is over its sending rate.
	if cfg.MaxWait > 0 {
		wait := t.hosts[c[0].Host].h.UntilNextRateWindow(now)
		if wait > cfg.MaxWait {
			wait = cfg.MaxWait
		}
		p.waits.Add(1)
		p.clock.Sleep(wait)
		now = p.clock.Now()
		st.now = now
		for k := 0; k < eligible; k++ { // the rates alone, not the stall ("Rate control")
			c[k].InRate = t.hosts[c[k].Host].h.WithinRate(now)
		}
		if core.PromoteInRate(c, eligible) {
			return
		}
	}
	p.overRate.Add(1) // send to the best replica anyway
}

// demote applies the health rule (core.DemoteUnhealthy) to the filled
// candidates.
func (st *queryState[H, S]) demote(c []core.Candidate) {
	if n := core.DemoteUnhealthy(c, &st.rnd, st.r.cfg.HealthTol); n > 0 {
		st.r.demoted.Add(uint64(n))
	}
}

// probe moves the first demoted candidate that is due a probe (WithProbe)
// to the front and reports whether it did: a replica ranked last for its
// health gets no traffic otherwise, and its recovery would go unseen. One
// with nothing in flight is due when its track.Host.ClaimProbe(now,
// ProbeAfter) succeeds, i.e. when nothing was sent to it for ProbeAfter,
// at most once per ProbeAfter per host and client. A replica avoided for
// its latency is not probed: its estimates fade instead (ForgetAfter).
func (st *queryState[H, S]) probe(c []core.Candidate, now time.Duration) bool {
	for k := 1; k < len(c); k++ {
		if c[k].Demoted && c[k].InFlight == 0 && st.tbl.hosts[c[k].Host].h.ClaimProbe(now, st.r.cfg.ProbeAfter) {
			core.PromoteHost(c, c[k].Host)
			st.r.probes.Add(1)
			return true
		}
	}
	return false
}

// score is the C3 score Psi_s of a host's view (core.C3Score), with W_s
// the host's polled active_tasks_limit, else WithServerWorkers, as long as
// the host answers: W_s workers drain the queue ahead only while they
// serve. A host that has owed responses for a Silence longer than
// drainSilence(w) x R_s has shown at most that over Silence of the service
// rate W_s assumes, so its W_s is scaled by it (never below 1, the paper's
// single queue). A paused host thus loses the drain credit within a few R_s
// instead of collecting W_s times as many requests before its queue term
// repels them; a host answering within that keeps its W_s. With server-load polling
// the concurrency weight is w_eff = min(w, max(1, Qmax)) (queueMean), and
// likewise only while the host answers: silent longer than R_s, the
// reduction w - w_eff shrinks by R_s/Silence. The tail term k/mu_s
// (WithTailTerm) is added to Psi_s. Health is
// not part of it: dividing by successRate^3 is no match for qhat^3 (one
// more request in flight on a healthy replica outweighs a 50 % failure
// rate), so health orders replicas before the score does
// (core.DemoteUnhealthy).
func (p *Router[H, S]) score(v *track.View, now time.Duration) float64 {
	w, workers := p.scoreWeights(v, now)
	return p.scoreWith(v, w, workers)
}

// scoreWith is score with the weights scoreWeights returned.
func (p *Router[H, S]) scoreWith(v *track.View, w, workers float64) float64 {
	return core.C3Score(v.ResponseTime, v.ServiceTime, v.QueueSize, v.Outstanding(), w, workers) + p.cfg.TailTerm*v.ServiceTime
}

// scoreWeights returns the concurrency weight w and the worker count W_s
// the score drains a host's queue with (see score).
func (p *Router[H, S]) scoreWeights(v *track.View, now time.Duration) (w, workers float64) {
	w = p.weight()
	if p.polled && !v.HasFeedback && p.on(track.RuleQueueWeight) {
		weff := p.queues.weight(now, w)
		if s := float64(v.Silence); weff < w && s > v.ResponseTime && p.on(track.RuleDrainSilence) {
			// Short queues say nothing of a host that has stopped
			// answering: as W_s, the credit shrinks by R_s/Silence.
			weff = w - (w-weff)*v.ResponseTime/s
		}
		w = weff
	}
	workers = v.Workers
	if workers <= 0 || !p.on(track.RulePolledWorkers) {
		workers = p.cfg.Workers
	}
	if workers > 1 && v.Silence > 0 && p.on(track.RuleDrainSilence) {
		// W_s counts while the host answers: past a silence of
		// drainSilence(w) x R_s it shrinks by that over the silence.
		quiet := drainSilence(w) * v.ResponseTime
		if s := float64(v.Silence); s > quiet {
			workers = max(1, workers*quiet/s)
		}
	}
	return w, workers
}

// drainSilence is the silence, in R_s, after which a host's W_s starts to
// shrink for the concurrency weight w in force: w/2 within [1/2, 1]
// (package tailroute, "W_s workers", says why).
func drainSilence(w float64) float64 { return min(1, max(0.5, w/2)) }

// knownService is what the known-slow and zone rules read of a candidate:
// its View as rankC3 read it, its polled 1/mu_s (0: none), its service
// time as the faster replica (the polled 1/mu_s, else R_s; 0: neither),
// its R_s and the weights its score used (scoreWeights), from which
// expectOf gives its expected response time when a rule needs it.
type knownService struct {
	view               track.View
	host               int32
	polled, fast, resp float64
	w, workers         float64
}

// set fills k for host from k.view and its score's weights.
func (k *knownService) set(host int32, w, workers float64) {
	v := &k.view
	k.host, k.polled, k.fast, k.resp, k.w, k.workers = host, v.ServerServiceTime, v.ServerServiceTime, v.ResponseTime, w, workers
	if k.fast <= 0 && v.HasSamples {
		k.fast = v.ResponseTime
	}
}

// expectOf is k's expected response time (expectedResponse); 0 for
// noKnownService.
func (p *Router[H, S]) expectOf(k *knownService) float64 {
	return p.expectedWith(&k.view, k.w, k.workers)
}

// The known-slow rule's ratios (package tailroute, "Known-slow replicas"):
// of the service times, of the expected response times, and of the
// client's mean latency to its median; and the samples a median needs.
const (
	slowServiceRatio = 3.0
	slowExpectRatio  = 1.5
	slowMedianRatio  = 1.5
	slowMedianMin    = 3
)

// knownSlowBehind applies the known-slow rule (package tailroute,
// "Known-slow replicas") to the ordered candidates: it moves one of them
// ahead of the first, or none. The medians are read only once the cheaper
// bounds leave the rule in play.
func (st *queryState[H, S]) knownSlowBehind(c []core.Candidate, eligible int, known []knownService, now time.Duration) {
	if eligible < 2 {
		return
	}
	fastest := fastestOther(c, eligible, 0, known)
	if fastest <= 0 {
		return
	}
	first := lookupKnown(known, c[0].Host)
	h := st.tbl.hosts[c[0].Host].h
	svc := slowService(first, h, fastest, now)
	if svc < slowServiceRatio*fastest {
		return
	}
	var expect float64
	if svc > first.view.ServiceTime {
		v := first.view
		v.ResponseTime, v.ServiceTime = max(v.ResponseTime, svc), svc
		expect = st.r.expectedResponse(&v, now)
	} else {
		expect = st.r.expectOf(first)
	}
	best := -1
	var bestExpect float64
	for k := 1; k < eligible; k++ {
		o := lookupKnown(known, c[k].Host)
		if o.fast <= 0 {
			continue
		}
		oe := st.r.expectOf(o)
		if oe <= 0 || expect <= slowExpectRatio*oe {
			continue
		}
		fast := o.fast
		if med, n := st.tbl.hosts[c[k].Host].h.LatencyMedian(now); n >= slowMedianMin {
			fast = max(fast, float64(med))
		}
		if svc < slowServiceRatio*fast {
			continue
		}
		if best < 0 || oe < bestExpect {
			best, bestExpect = k, oe
		}
	}
	if best > 0 {
		core.PromoteHost(c, c[best].Host)
	}
}

// fastestOther is the least service time as the faster replica
// (knownService.fast) among the eligible candidates other than the one at
// position skip; 0 when none has one.
func fastestOther(c []core.Candidate, eligible, skip int, known []knownService) float64 {
	fastest := 0.0
	for k := 0; k < eligible; k++ {
		if k == skip {
			continue
		}
		if o := lookupKnown(known, c[k].Host); o.fast > 0 && (fastest == 0 || o.fast < fastest) {
			fastest = o.fast
		}
	}
	return fastest
}

// slowService is the service time the known-slow rule credits a replica
// with when it is compared with one serving in fastest: its polled 1/mu_s
// or, if higher, its R_s (which fades while the replica is avoided,
// tracker.Config.ForgetAfter) when that is at least slowServiceRatio x
// fastest, but at most slowMedianRatio x the median of the client's
// latencies there (from slowMedianMin samples on; without them the polled
// 1/mu_s alone).
func slowService(k *knownService, h *track.Host, fastest float64, now time.Duration) float64 {
	svc := k.polled
	if k.resp > svc && k.resp >= slowServiceRatio*fastest {
		if med, n := h.LatencyMedian(now); n >= slowMedianMin {
			svc = max(svc, min(k.resp, slowMedianRatio*float64(med)))
		}
	}
	return svc
}

func lookupKnown(known []knownService, host int32) *knownService {
	for i := range known {
		if known[i].host == host {
			return &known[i]
		}
	}
	return &noKnownService
}

// noKnownService is lookupKnown's answer for a host not in known: every
// field zero (nothing known). Read only.
var noKnownService knownService

// expectedResponse is the linear counterpart of score: the time a request
// sent to the host now is expected to take (core.ExpectedResponse, the
// queue ahead drained by W_s workers, then its own service), plus the tail
// term k/mu_s, with the weights score uses.
func (p *Router[H, S]) expectedResponse(v *track.View, now time.Duration) float64 {
	w, workers := p.scoreWeights(v, now)
	return p.expectedWith(v, w, workers)
}

// expectedWith is expectedResponse with the weights scoreWeights returned.
func (p *Router[H, S]) expectedWith(v *track.View, w, workers float64) float64 {
	return core.ExpectedResponse(v.ResponseTime, v.ServiceTime, v.QueueSize, v.Outstanding(), w, workers) + p.cfg.TailTerm*v.ServiceTime
}

// stalled reports whether a host owes responses and has been silent for
// max(StallMin, StallFactor*R_s) (see WithStall).
func (p *Router[H, S]) stalled(v *track.View) bool {
	return v.Silence > 0 && float64(v.Silence) >= p.stallThreshold(v)
}

// stallThreshold is the silence after which a host that owes answers is
// stalled (WithStall): max(StallMin, StallFactor x R_s), in nanoseconds.
func (p *Router[H, S]) stallThreshold(v *track.View) float64 {
	return max(float64(p.cfg.StallMin), p.cfg.StallFactor*v.ResponseTime)
}

// on reports whether rule r is on (see WithoutRules).
func (p *Router[H, S]) on(r track.Rule) bool { return p.tr.Off().On(r) }
