package vsim

import (
	"fmt"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// The scheduler: one event queue in virtual time, and the engine's
// background work (the server-load poller's goroutines) run as processes
// that hold a baton. Exactly one goroutine runs at any moment: a runner
// (the goroutine popping events) or the one process it woke, which runs
// until it parks (a timer's C, Sleep, a poll's round trip) or ends and
// hands the baton back. Events at the same instant run in the order they
// were scheduled, so a run is a pure function of its configuration and seed.
//
// A runner that calls Sleep (the engine's bounded backpressure wait of C3's
// Algorithm 1, inside Pick) parks too: a fresh runner goroutine takes over
// the loop, and the one that pops the sleeper's wake-up hands the loop
// back to it and ends.

// evKind says what an event does; the scheduler's own kinds come first,
// the model's (model.go) after evModel.
type evKind uint8

const (
	evStart  evKind = iota // a spawned process starts (fn)
	evTimer                // an engine timer expires (t, gen)
	evWake                 // a parked process resumes (p)
	evResume               // a parked runner resumes (ch)
	evModel                // first of the model's kinds
)

type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	i    int32 // the model's server or client index
	gen  uint64
	r    *request
	p    *proc
	t    *vtimer
	ch   chan struct{}
	fn   func()
}

// proc is a process: a goroutine of the engine's background work.
type proc struct{ ch chan struct{} }

// sched is the event loop and the virtual clock (a tracker.TimerClock).
type sched struct {
	now   time.Duration
	seq   uint64
	heap  []event
	yield chan struct{} // a process hands the baton back to its runner
	cur   *proc         // the process holding the baton; nil: a runner
	procs int           // live processes
	done  chan struct{}
	model func(ev *event) // the model's events
}

func newSched(model func(ev *event)) *sched {
	return &sched{yield: make(chan struct{}), done: make(chan struct{}), model: model}
}

// at schedules ev at virtual time at.
func (s *sched) at(at time.Duration, ev event) {
	if at < s.now {
		at = s.now
	}
	ev.at, ev.seq = at, s.seq
	s.seq++
	s.heap = append(s.heap, ev)
	s.up(len(s.heap) - 1)
}

func (s *sched) less(i, j int) bool {
	a, b := &s.heap[i], &s.heap[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (s *sched) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !s.less(j, i) {
			break
		}
		s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
		j = i
	}
}

func (s *sched) pop() event {
	h := s.heap
	n := len(h) - 1
	ev := h[0]
	h[0] = h[n]
	h[n] = event{}
	s.heap = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && s.less(r, l) {
			j = r
		}
		if !s.less(j, i) {
			break
		}
		s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
		i = j
	}
	return ev
}

// run pops events until the queue is empty (then it closes done) or it has
// handed the loop back to a runner that slept.
func (s *sched) run() {
	for len(s.heap) > 0 {
		ev := s.pop()
		s.now = ev.at
		switch ev.kind {
		case evStart:
			p := &proc{ch: make(chan struct{}, 1)}
			s.procs++
			s.cur = p
			go func() {
				ev.fn()
				s.procs--
				s.yield <- struct{}{}
			}()
			<-s.yield
			s.cur = nil
		case evTimer:
			t := ev.t
			if ev.gen != t.gen || !t.armed {
				continue // stopped or reset since
			}
			t.armed = false
			if t.parked == nil {
				select {
				case t.c <- s.now:
				default:
				}
				continue
			}
			s.cur, t.parked = t.parked, nil
			t.c <- s.now
			<-s.yield
			s.cur = nil
		case evWake:
			s.cur = ev.p
			ev.p.ch <- struct{}{}
			<-s.yield
			s.cur = nil
		case evResume:
			ev.ch <- struct{}{}
			return // the resumed runner carries on with the loop
		default:
			s.model(&ev)
		}
	}
	close(s.done)
}

// park hands the baton of the current process back to its runner and
// waits to be woken (the caller has scheduled its evWake).
func (s *sched) park() {
	p := s.cur
	s.yield <- struct{}{}
	<-p.ch
}

// Now returns the virtual time.
func (s *sched) Now() time.Duration { return s.now }

// Sleep parks the caller for d of virtual time.
func (s *sched) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	if p := s.cur; p != nil {
		s.at(s.now+d, event{kind: evWake, p: p})
		s.park()
		return
	}
	ch := make(chan struct{})
	s.at(s.now+d, event{kind: evResume, ch: ch})
	go s.run()
	<-ch
}

// spawn starts f as a process at the current virtual time (the engine's
// `go f()`, route.WithSpawn).
func (s *sched) spawn(f func()) { s.at(s.now, event{kind: evStart, fn: f}) }

// NewTimer returns a timer of the virtual clock (tracker.TimerClock).
func (s *sched) NewTimer(d time.Duration) tracker.Timer {
	t := &vtimer{s: s, c: make(chan time.Duration, 1)}
	t.Reset(d)
	return t
}

// vtimer is a tracker.Timer in virtual time. A process that receives from
// C parks: C hands the baton back and the expiry wakes the process.
type vtimer struct {
	s      *sched
	c      chan time.Duration
	gen    uint64
	armed  bool
	parked *proc // the process waiting on C
}

func (t *vtimer) C() <-chan time.Duration {
	if len(t.c) > 0 {
		return t.c
	}
	if t.s.cur == nil || !t.armed {
		panic(fmt.Sprintf("vsim: a timer's C() waited on outside a process or while stopped (cur %v armed %v gen %d)", t.s.cur != nil, t.armed, t.gen))
	}
	t.parked = t.s.cur
	t.s.yield <- struct{}{}
	return t.c
}

func (t *vtimer) Reset(d time.Duration) {
	t.gen++
	t.armed = true
	t.s.at(t.s.now+max(d, 0), event{kind: evTimer, t: t, gen: t.gen})
}

func (t *vtimer) Stop() { t.gen++; t.armed = false }

var _ tracker.TimerClock = (*sched)(nil)
