package route

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
)

// queryState is the plan of one query execution (one Pick). gocql never
// calls one iterator concurrently (its speculative executor wraps it in a
// mutex), but Mark may run concurrently with NextHost on another selection.
//
// States are pooled. A sequential execution (seq: not idempotent, so gocql
// never speculates it) is recycled at its first Mark(nil), after which
// gocql uses neither the iterator nor the host again. A possibly
// speculative one (idempotent) is reference counted: one reference for the
// plan, dropped at the execution's first Mark(nil) (an attempt chain of
// gocql ends there, and the query's result is decided), and one per host
// handed out, dropped at that host's last Mark: Mark(nil), or
// Mark(context.Canceled) from a wrapper giving back a host it pulled but
// did not use. The last reference recycles the state. An attempt that
// failed keeps its reference (gocql may retry it on the same host or ask
// the iterator for the next one), so an execution with an error leaves its
// state to the garbage collector.
//
// gocql v1.7.0 can still call the iterator after the first Mark(nil): its
// own speculative executor (a SpeculativeExecutionPolicy set on the query,
// rather than speculative.Wire, which takes a fresh plan instead) starts an
// attempt if its timer fires between that Mark and the result reaching it.
// Such a late call must never touch a recycled state unsafely nor take a
// later execution's plan. Three rules make it so:
//   - each execution gets its NextHost from one of planTickets tickets of the
//     state, stamped with the execution's generation; a call through a stale
//     ticket, or on a state with no reference left, returns nil (the late
//     attempt finds no host; the executor already has its result);
//   - every plan access (Pick's set-up, NextHost) holds the state's own mutex
//     (never shared between states or hosts), so even a call that slips
//     through is race-free;
//   - the first late call seen (stale ticket, no reference left, or a call
//     after the plan's first Mark(nil)) tells the policy that gocql's own
//     speculation is in use: from then on idempotent states are no longer
//     pooled (one allocation per idempotent Pick), and it is logged once.
//     A ticket is reused only after planTickets more executions of the same
//     state, so only a late call delayed that long before the first
//     detection could still take a host of another execution's plan.
//
// WithDriverSpeculation turns pooling of idempotent states off from the
// start.
type queryState[H HostInfo, S any] struct {
	mu       sync.Mutex // plan access: Pick's set-up and NextHost
	r        *Router[H, S]
	tbl      *hostTable[H]
	replicas []int32 // replica set of the token (aliases the replica map)
	routed   bool
	pin      int32         // pinned query: 1 + the host's index, -1 for an unknown host, 0 not pinned
	seq      atomic.Bool   // not idempotent: recycled at the first Mark(nil)
	refs     atomic.Int32  // idempotent: plan + hosts handed out and not finally marked
	planDone atomic.Bool   // idempotent: the plan's reference was dropped
	gen      atomic.Uint32 // execution generation, one per Pick
	tickets  [planTickets]planTicket[H, S]
	noPool   bool // never recycled (WithDriverSpeculation)

	phase   uint8
	cand    [maxCand]core.Candidate
	known   [maxCand]knownService // rankC3's scratch, filled per ranking (not zeroed per request)
	ncand   int
	pos     int
	fbStart int
	fbPos   int
	rnd     core.Rand
	now     time.Duration // clock read by rank
	haveNow bool

	sels [4]Selection[H, S]
	nsel int
	last *Selection[H, S]
}

// planTickets is the number of NextHost tickets per state (see queryState).
const planTickets = 32

// planTicket is the NextHost of one execution of a state.
type planTicket[H HostInfo, S any] struct {
	st   *queryState[H, S]
	gen  atomic.Uint32 // generation the ticket was issued for
	next func() S      // t.nextHost, bound once
}

// issue starts a new execution on st and returns its NextHost. A ticket's
// method value is bound on its first use.
func (st *queryState[H, S]) issue(seq bool) func() S {
	g := st.gen.Add(1)
	t := &st.tickets[g%planTickets]
	if t.next == nil {
		t.st = st
		t.next = t.nextHost
	}
	t.gen.Store(g)
	st.seq.Store(seq)
	if !seq {
		st.planDone.Store(false)
		st.refs.Store(1)
	}
	return t.next
}

// nextHost is the driver's NextHost of one execution; stale calls get
// nil.
func (t *planTicket[H, S]) nextHost() S {
	var none S
	st := t.st
	g := t.gen.Load()
	if st.seq.Load() {
		st.mu.Lock()
		var s *Selection[H, S]
		if g == st.gen.Load() {
			s = st.nextHost()
		} else {
			st.r.lateCall()
		}
		st.mu.Unlock()
		if s == nil {
			return none
		}
		return any(s).(S)
	}
	for { // take a reference unless none is left (recycled)
		r := st.refs.Load()
		if r <= 0 {
			st.r.lateCall()
			return none
		}
		if st.refs.CompareAndSwap(r, r+1) {
			break
		}
	}
	sel := none
	st.mu.Lock()
	if g == st.gen.Load() {
		if st.planDone.Load() {
			st.r.lateCall() // a second attempt chain after the result was decided
		}
		if s := st.nextHost(); s != nil {
			sel = any(s).(S)
		}
	} else {
		st.r.lateCall()
	}
	st.mu.Unlock()
	st.unref(1)
	return sel
}

// lateCall records that an iterator was called after its execution ended:
// gocql's own speculative execution is in use, so idempotent states are no
// longer pooled (see queryState).
func (p *Router[H, S]) lateCall() {
	if p.lateSeen.CompareAndSwap(false, true) {
		p.hooks.Logf("the driver's own speculative execution detected (a plan was asked for a host after its result); idempotent query plans are no longer pooled (speculative.Wire hedges without this cost, or set tailroute.WithDriverSpeculation)")
	}
}

const (
	phaseRank = iota
	phaseRanked
	phaseRemoteReplicas
	phaseLocalFallback
	phaseRemoteFallback
	phaseDone
)

func (st *queryState[H, S]) reset() {
	st.tbl = nil
	st.replicas = nil
	st.pin = 0
	st.phase = phaseRank
	st.haveNow = false
	st.ncand, st.pos, st.fbPos = 0, 0, 0
	for i := 0; i < st.nsel && i < len(st.sels); i++ {
		st.sels[i] = Selection[H, S]{}
	}
	st.nsel = 0
	st.last = nil
}

func (st *queryState[H, S]) release() {
	if st.noPool {
		return
	}
	st.tickets[st.gen.Load()%planTickets].gen.Store(0) // the execution's iterator is spent
	st.reset()
	st.r.statePool.Put(st)
}

// unref drops n references of an idempotent execution's state and
// recycles it with the last one. The caller must not touch st afterwards.
func (st *queryState[H, S]) unref(n int32) {
	if st.refs.Add(-n) == 0 {
		st.release()
	}
}

// nextHost returns the plan's next host (nil at the end).
func (st *queryState[H, S]) nextHost() *Selection[H, S] {
	p := st.r
	if st.tbl == nil {
		return nil // recycled (see Pick): a misbehaving caller gets an empty plan
	}
	seq := st.seq.Load()
	if seq && st.last != nil && st.last.marks.Load() == 0 {
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
	var s *Selection[H, S]
	if st.nsel < len(st.sels) {
		s = &st.sels[st.nsel]
	} else {
		s = &Selection[H, S]{}
	}
	st.nsel++
	s.st, s.e = st, e
	if st.pin == 0 {
		p.countZone(e)
	}
	if !seq {
		st.refs.Add(1)
	}
	var now time.Duration
	if st.nsel == 1 && st.haveNow {
		now = st.now // read by rank just now: save a clock read
	} else {
		now = p.clock.Now()
	}
	s.start = now
	s.att = e.h.Begin(now)
	if p.rateLimited() {
		e.h.ConsumeToken(now)
	}
	st.last = s
	return s
}

func (p *Router[H, S]) rateLimited() bool {
	return p.cfg.RateControl && strategy(&p.cfg) == tailroute.C3
}

// advance returns the next host of the plan, or nil at the end.
func (st *queryState[H, S]) advance() *hostEntry[H] {
	t := st.tbl
	for {
		switch st.phase {
		case phaseRank:
			if st.pin != 0 { // pinned: that host alone, up or not, as the driver does
				st.phase = phaseDone
				if st.pin > 0 {
					return t.hosts[st.pin-1]
				}
				return nil
			}
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
			if st.r.cfg.RemoteDCs {
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
			if st.r.cfg.RemoteDCs {
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

func (st *queryState[H, S]) inCand(i int32) bool {
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
