package policy

import (
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/policy/core"
	"github.com/tailroute/tailroute/tracker"
)

// queryState is the plan of one query execution (one Pick). gocql never
// calls one iterator concurrently (its speculative executor wraps it in a
// mutex), but Mark may run concurrently with NextHost on another selection.
type queryState struct {
	p        *Policy
	tbl      *hostTable
	next     gocql.NextHost // st.nextHost, bound once per state object
	replicas []int32        // replica set of the token (aliases the replica map)
	routed   bool
	pooled   bool

	phase   uint8
	cand    [maxCand]core.Candidate
	ncand   int
	pos     int
	fbStart int
	fbPos   int
	rnd     core.Rand
	now     time.Duration // clock read by rank
	haveNow bool

	sels [4]selection
	nsel int
	last *selection
}

const (
	phaseRank = iota
	phaseRanked
	phaseRemoteReplicas
	phaseLocalFallback
	phaseRemoteFallback
	phaseDone
)

func (st *queryState) reset() {
	st.tbl = nil
	st.replicas = nil
	st.phase = phaseRank
	st.haveNow = false
	st.ncand, st.pos, st.fbPos = 0, 0, 0
	for i := 0; i < st.nsel && i < len(st.sels); i++ {
		st.sels[i] = selection{}
	}
	st.nsel = 0
	st.last = nil
}

func (st *queryState) release() {
	st.reset()
	st.p.statePool.Put(st)
}

// nextHost is the gocql.NextHost of the plan.
func (st *queryState) nextHost() gocql.SelectedHost {
	p := st.p
	if st.tbl == nil {
		return nil // recycled (see Pick): a misbehaving caller gets an empty plan
	}
	if st.pooled && st.last != nil && st.last.marks.Load() == 0 {
		// Sequential execution (non-idempotent): asking for another host
		// without marking the previous one means gocql skipped it (no pool or
		// no connection); end that attempt without a measurement.
		st.last.marks.Store(1)
		st.last.e.h.End(st.last.att)
		p.abandoned.Add(1)
	}
	e := st.advance()
	if e == nil {
		return nil
	}
	var s *selection
	if st.nsel < len(st.sels) {
		s = &st.sels[st.nsel]
	} else {
		s = &selection{}
	}
	st.nsel++
	s.st, s.e = st, e
	var now time.Duration
	if st.nsel == 1 && st.haveNow {
		now = st.now // read by rank just now: save a clock read
	} else {
		now = p.clock.Now()
	}
	s.start = now
	s.att = e.h.BeginAt(now)
	if p.rateLimited() {
		e.h.ConsumeToken(now)
	}
	st.last = s
	return s
}

func (p *Policy) rateLimited() bool { return p.cfg.rateControl && p.cfg.strategy == C3 }

// advance returns the next host of the plan, or nil at the end.
func (st *queryState) advance() *hostEntry {
	t := st.tbl
	for {
		switch st.phase {
		case phaseRank:
			st.rank()
			st.phase = phaseRanked
		case phaseRanked:
			for st.pos < st.ncand {
				e := t.hosts[st.cand[st.pos].Host]
				st.pos++
				if e.isUp() {
					return e
				}
			}
			st.phase = phaseRemoteReplicas
		case phaseRemoteReplicas:
			if st.p.cfg.remoteDCs {
				for st.pos < st.ncand+len(st.replicas) {
					e := t.hosts[st.replicas[st.pos-st.ncand]]
					st.pos++
					if !e.local && e.isUp() {
						return e
					}
				}
			}
			st.phase = phaseLocalFallback
			st.fbPos = 0
		case phaseLocalFallback:
			for st.fbPos < len(t.local) {
				i := t.local[(st.fbStart+st.fbPos)%len(t.local)]
				st.fbPos++
				if !st.inCand(i) && t.hosts[i].isUp() {
					return t.hosts[i]
				}
			}
			st.phase = phaseRemoteFallback
			st.fbPos = 0
		case phaseRemoteFallback:
			if st.p.cfg.remoteDCs {
				for st.fbPos < len(t.remote) {
					i := t.remote[(st.fbStart+st.fbPos)%len(t.remote)]
					st.fbPos++
					if !inList(st.replicas, i) && t.hosts[i].isUp() {
						return t.hosts[i]
					}
				}
			}
			st.phase = phaseDone
		default:
			return nil
		}
	}
}

func (st *queryState) inCand(i int32) bool {
	for k := 0; k < st.ncand; k++ {
		if st.cand[k].Host == i {
			return true
		}
	}
	return false
}

func inList(a []int32, x int32) bool {
	for _, v := range a {
		if v == x {
			return true
		}
	}
	return false
}

// rank fills st.cand with the up local replicas (or, without token
// information, a random sample of up local hosts) and orders them.
func (st *queryState) rank() {
	p := st.p
	t := st.tbl
	st.rnd = core.Rand(rand64())
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
		for k := 0; k < len(t.local) && n < p.cfg.maxCandidates; k++ {
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
	switch p.cfg.strategy {
	case RoundRobin:
		core.OrderRoundRobin(c, p.rr.Add(1))
	case P2C:
		now := p.clock.Now()
		st.now, st.haveNow = now, true
		for k := range c {
			h := t.hosts[c[k].Host].h
			c[k].InFlight = h.Outstanding(now)
			c[k].Busy = h.Busy(now, int64(p.cfg.busyInFlight), p.cfg.busyNoResponse)
		}
		core.OrderP2C(c, &st.rnd)
	default:
		st.rankC3(c)
	}
}

// rankC3 implements Algorithm 1 with the C3 score: sort by score (busy hosts
// last while a majority is healthy), occasionally probe a stale replica, then
// send to the first replica within its rate; if none is, wait for the next
// rate window (bounded by MaxBackpressureWait) and then send to the best
// within rate, or to the best replica anyway.
func (st *queryState) rankC3(c []core.Candidate) {
	p := st.p
	t := st.tbl
	cfg := &p.cfg
	now := p.clock.Now()
	st.now, st.haveNow = now, true
	busyN := int64(cfg.busyInFlight)
	limited := p.rateLimited()
	for k := range c {
		h := t.hosts[c[k].Host].h
		v := h.View(now)
		c[k].Score = p.score(v)
		c[k].InFlight = v.Outstanding()
		c[k].Busy = v.Busy(busyN, cfg.busyNoResponse)
		c[k].Stale = v.InFlight == 0 && v.SinceResponse >= cfg.probeAfter
		if limited {
			c[k].InRate = !p.stalled(v) && h.WithinRate(now)
		}
	}
	eligible := core.OrderByScore(c, &st.rnd, cfg.jitter)
	if cfg.probeP > 0 && st.rnd.Float() < cfg.probeP && core.PromoteStale(c, eligible) {
		p.probes.Add(1)
		return
	}
	if !limited || core.PromoteInRate(c, eligible) {
		return
	}
	// Backpressure: every eligible replica is over its sending rate.
	if cfg.maxWait > 0 {
		wait := t.hosts[c[0].Host].h.UntilNextRateWindow(now)
		if wait > cfg.maxWait {
			wait = cfg.maxWait
		}
		p.waits.Add(1)
		p.clock.Sleep(wait)
		now = p.clock.Now()
		st.now = now
		for k := 0; k < eligible; k++ {
			c[k].InRate = t.hosts[c[k].Host].h.WithinRate(now)
		}
		if core.PromoteInRate(c, eligible) {
			return
		}
	}
	p.overRate.Add(1) // send to the best replica anyway
}

// score is the C3 score of a host's view, Psi_s divided by successRate^3 so
// that hosts answering with errors sink.
func (p *Policy) score(v tracker.View) float64 {
	s := core.C3Score(v.ResponseTime, v.ServiceTime, v.QueueSize, v.Outstanding(), p.cfg.weight)
	if sr := v.SuccessRate; sr < 1 {
		s /= sr * sr * sr
	}
	return s
}

// stalled reports whether a host owes responses and has been silent for
// max(StallMin, StallFactor*R_s) (see WithStall).
func (p *Policy) stalled(v tracker.View) bool {
	return v.Silence > 0 && float64(v.Silence) >= max(float64(p.cfg.stallMin), p.cfg.stallFactor*v.ResponseTime)
}

// selection is a gocql.SelectedHost: one host handed out by a plan.
type selection struct {
	st       *queryState
	e        *hostEntry
	att      tracker.Attempt
	start    time.Duration
	lastMark time.Duration
	marks    atomic.Uint32
}

// Info returns the host.
func (s *selection) Info() *gocql.HostInfo { return s.e.info }

// Mark is called by gocql after each attempt on this host (more than once
// when the retry policy retries on the same host). The first Mark ends the
// attempt begun at NextHost (os_s -= 1, exactly once). Without Wire, Mark is
// also the measurement (latency since NextHost, or since the previous Mark
// for a retry); with Wire the observer measures, because Mark(nil) is also
// what a cancelled attempt gets.
func (s *selection) Mark(err error) {
	st := s.st
	if st == nil {
		return // recycled (see Pick)
	}
	p := st.p
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
		s.e.h.ObserveAt(now, now-from, classify(nil, err))
	}
	if err == nil && st.pooled {
		st.release()
	}
}
