// Server-load polling (WithServerLoad, WithPollBudget; the rules: package
// tailroute, "Server load"): the poller, its budget, schedule and counters.

package route

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

// PollDriver is what the poller needs of the adapter.
type PollDriver[H HostInfo] struct {
	// Closed reports whether the session the polls run through is closed.
	Closed func() bool
	// Query runs one poll of host (id is the router's id of it) with ctx,
	// which marks the query as a poll.
	Query func(ctx context.Context, host H, id string) (ThreadPoolSample, error)
	// Permanent reports an error after which the host is not polled again
	// (no such table, not allowed).
	Permanent func(error) bool
}

// serverLoadPoller polls every host of one Router within the budget of
// WithPollBudget.
type serverLoadPoller[H HostInfo, S any] struct {
	r   *Router[H, S]
	drv PollDriver[H]

	mu       sync.Mutex
	running  map[string]bool // host id -> polling loop runs
	skipped  map[string]bool // host id -> not polled (permanent error)
	seen     uint64          // r.requests counted into reqRate
	reqRate  decayRate       // r: the client's request rate
	pollRate decayRate       // the polls sent

	polls, failures, samples atomic.Uint64
}

// Windows of the poller's rates: the request rate r its interval follows,
// and the poll rate ServerLoadCounters reports.
const (
	requestRateWindow = time.Second
	pollRateWindow    = 5 * time.Second
)

// StartServerLoad starts polling through drv (WithServerLoad with C3; a
// no-op otherwise, or when polling runs already). Hosts are picked up as
// they are added; polling stops when drv.Closed reports true.
func (r *Router[H, S]) StartServerLoad(drv PollDriver[H]) {
	if !r.polled {
		return
	}
	now := r.clock.Now()
	sl := &serverLoadPoller[H, S]{r: r, drv: drv, running: map[string]bool{}, skipped: map[string]bool{},
		seen:     r.requests.Load(),
		reqRate:  newDecayRate(requestRateWindow, now),
		pollRate: newDecayRate(pollRateWindow, now)}
	if !r.load.CompareAndSwap(nil, sl) {
		old := r.load.Load() // a new session after the previous one closed polls anew
		if old == nil || !old.drv.Closed() || !r.load.CompareAndSwap(old, sl) {
			return
		}
	}
	r.spawn(sl.supervise)
}

// pollBudget is the budget of WithPollBudget at one time.
type pollBudget struct {
	hosts    int           // M: the hosts polled
	rate     float64       // r: the client's requests per second
	interval time.Duration // I = clamp(M/(share*r), minInterval, maxInterval)
	// spacing is the time between a host's polls: I, or M/(share*r) when
	// that is longer (the credit, earned at share/M per request, then
	// allows no more); I when the client sends nothing.
	spacing time.Duration
	earn    float64 // the credit one request earns each host: share/M
}

// budget returns the budget at clock time now, after counting the
// requests handed out since the previous call into r.
func (sl *serverLoadPoller[H, S]) budget(now time.Duration) pollBudget {
	cfg := &sl.r.cfg
	b := pollBudget{}
	sl.mu.Lock()
	for _, e := range sl.r.tbl.Load().hosts {
		if sl.eligible(e) && !sl.skipped[e.id] {
			b.hosts++
		}
	}
	n := sl.r.requests.Load()
	sl.reqRate.add(now, float64(n-sl.seen))
	sl.seen = n
	b.rate = sl.reqRate.rate(now)
	sl.mu.Unlock()
	b.hosts = max(b.hosts, 1)
	b.earn = cfg.PollShare / float64(b.hosts)
	b.interval = cfg.PollMax
	b.spacing = b.interval
	if b.rate > 0 {
		raw := float64(b.hosts) / (cfg.PollShare * b.rate) * float64(time.Second)
		b.interval = time.Duration(min(max(raw, float64(cfg.PollMin)), float64(cfg.PollMax)))
		b.spacing = max(b.interval, time.Duration(raw))
	}
	return b
}

// eligible reports whether e is a host to poll now: up, and local or
// remote hosts allowed.
func (sl *serverLoadPoller[H, S]) eligible(e *hostEntry[H]) bool {
	return e.isUp() && (e.local || sl.r.cfg.RemoteDCs)
}

// supervise starts a polling loop for every host that has none, every
// minInterval, until the session closes.
func (sl *serverLoadPoller[H, S]) supervise() {
	t := sl.newTimer(sl.r.cfg.PollMin)
	defer t.Stop()
	for {
		if sl.drv.Closed() {
			return
		}
		for _, e := range sl.r.tbl.Load().hosts {
			sl.mu.Lock()
			if !sl.running[e.id] && !sl.skipped[e.id] {
				sl.running[e.id] = true
				id := e.id
				sl.r.spawn(func() { sl.loop(id) })
			}
			sl.mu.Unlock()
		}
		<-t.C()
		t.Reset(sl.r.cfg.PollMin)
	}
}

// newTimer returns a timer of the router's clock (tracker.TimerClock),
// else of the wall clock, so the poll schedule follows the clock the
// policy was given (tests: tracker.ManualClock).
func (sl *serverLoadPoller[H, S]) newTimer(d time.Duration) tracker.Timer {
	if tc, ok := sl.r.clock.(tracker.TimerClock); ok {
		return tc.NewTimer(d)
	}
	return tracker.SystemClock{}.NewTimer(d)
}

// creditSlack absorbs the rounding of credits summed from share/M per
// request (3 requests of 1/3 make a credit).
const creditSlack = 1e-9

// loop polls one host, within its share of the budget, until it is
// removed, skipped or the session closes. Its bucket starts full (one
// credit), earns share/M per request and holds at most one credit; a poll
// spends one. Its first poll comes within minInterval (at random, so the
// hosts' polls do not line up); until the host has its first 1/mu_s
// estimate, up to WarmPolls turns come every minInterval, with or without
// a credit (the warm-up); each later turn is due I times a random
// factor in [0.8, 1.2) after the previous one, with I as it is when the
// loop looks (at least every pollRecheck minIntervals), never below
// minInterval; when a turn finds no credit, the next try comes when the
// missing credit is earned at the current rate, if that is sooner.
func (sl *serverLoadPoller[H, S]) loop(id string) {
	defer func() {
		sl.mu.Lock()
		delete(sl.running, id)
		sl.mu.Unlock()
		sl.r.queues.forget(id)
	}()
	var est LoadEstimator
	credit, seen := 1.0, sl.r.requests.Load()
	warm := WarmPolls // warm-up turns left
	if !sl.r.on(track.RuleWarmup) {
		warm = 0
	}
	rnd := core.Rand(sl.r.rand64())
	jitter := 0.8 + 0.4*rnd.Float()
	polled, last := false, time.Duration(0)                                      // the previous turn's clock time
	timer := sl.newTimer(time.Duration(rnd.Float() * float64(sl.r.cfg.PollMin))) // spread the first polls
	defer timer.Stop()
	for {
		<-timer.C()
		if sl.drv.Closed() {
			return
		}
		e := sl.r.entry(id)
		if e == nil {
			return // removed
		}
		now := sl.r.clock.Now()
		b := sl.budget(now)
		n := sl.r.requests.Load()
		credit = min(1, credit+float64(n-seen)*b.earn)
		seen = n
		// The turn is due I x jitter after the previous one, with I as it
		// is now: a client whose requests pick up polls sooner.
		due := last + time.Duration(float64(b.interval)*jitter)
		eligible := sl.eligible(e)
		var next time.Duration
		switch {
		case polled && now < due && warm == 0:
			next = due - now
		case !eligible || credit >= 1-creditSlack || warm > 0:
			// a turn: it polls an eligible host, with a credit or in
			// the warm-up (spending what credit there is)
			last, polled, jitter = now, true, 0.8+0.4*rnd.Float()
			if eligible {
				credit = max(credit-1, 0)
				warm = max(warm-1, 0)
				if !sl.pollOnce(e, &est, b.interval, b.spacing) {
					return
				}
				if est.last > 0 {
					warm = 0 // the first estimate: the warm-up is over
				}
			}
			next = time.Duration(float64(b.interval) * jitter)
			if warm > 0 {
				next = sl.r.cfg.PollMin
			}
		case b.rate > 0:
			next = time.Duration((1 - credit) / (b.earn * b.rate) * float64(time.Second))
		default:
			next = b.interval
		}
		timer.Reset(min(max(next, sl.r.cfg.PollMin), pollRecheck*sl.r.cfg.PollMin))
	}
}

// pollRecheck is how many minIntervals a host's loop sleeps at most before
// it looks at the budget again, so that a turn follows a rising request
// rate (a shorter I) within that time.
const pollRecheck = 4

// WarmPolls bounds a host's warm-up (package tailroute, "Server load"):
// the turns at minInterval, credit or not, until its first 1/mu_s
// estimate, which takes estimatorMinPairs+1 samples at the least.
const WarmPolls = 2 * estimatorMinPairs

// pollOnce polls e once (interval: I, the poll's timeout) and records the
// sample, its queue fresh for 1.5 I and its service time for 1.5 spacings
// (pollBudget.spacing, until the next poll); false means "stop polling
// this host".
func (sl *serverLoadPoller[H, S]) pollOnce(e *hostEntry[H], est *LoadEstimator, interval, spacing time.Duration) bool {
	r := sl.r
	ctx, cancel := context.WithTimeout(withPoll(context.Background(), e.id), interval)
	defer cancel()
	sl.polls.Add(1)
	r.polls.Add(1)
	t0, own0 := r.clock.Now(), e.h.InFlight()
	sl.mu.Lock()
	sl.pollRate.add(t0, 1)
	sl.mu.Unlock()
	smp, err := sl.drv.Query(ctx, e.info, e.id)
	t1, own1 := r.clock.Now(), e.h.InFlight()
	r.polls.Add(-1)
	if err != nil {
		sl.failures.Add(1)
		if sl.drv.Permanent != nil && sl.drv.Permanent(err) {
			sl.mu.Lock()
			sl.skipped[e.id] = true
			sl.mu.Unlock()
			if r.offTold.CompareAndSwap(false, true) {
				r.hooks.Logf("host %s answers %v to %s: server-load polling is off for this host and for every other host "+
					"that answers so (logged once; Cassandra 4.0+ has the table)", e.info.ConnectAddressAndPort(), err, ThreadPoolsQuery)
			}
			return false
		}
		return !sl.drv.Closed()
	}
	smp.At = t0 + (t1-t0)/2
	smp.Own = r.weightAt(t1) * float64(own0+own1) / 2
	smp.Answers = e.h.Answers()
	q, svc := est.Add(smp)
	e.h.ServerLoad(smp.At, q, svc, interval*3/2, spacing*3/2)
	r.queues.add(e.id, smp.At, smp.Pending+smp.Active, r.weight(), queueMaxAgeIntervals*interval)
	if done, own, ok := est.Pair(); ok {
		r.clients.add(smp.At, done, own)
		r.tr.SetClients(r.weight())
	}
	e.h.ServerWorkers(smp.Workers)
	sl.samples.Add(1)
	return true
}

// decayRate is an exponentially weighted event rate: each event counts
// exp(-age/tau), so the rate is about the events of the last tau per tau;
// until tau has passed since start it is scaled up to the time counted.
type decayRate struct {
	tau       time.Duration
	start, at time.Duration // clock time of the first count and of v
	v         float64       // the decayed count of events
}

func newDecayRate(tau, now time.Duration) decayRate { return decayRate{tau: tau, start: now, at: now} }

// add counts n events at clock time now.
func (d *decayRate) add(now time.Duration, n float64) {
	d.decay(now)
	d.v += n
}

// rate returns the events per second at clock time now.
func (d *decayRate) rate(now time.Duration) float64 {
	d.decay(now)
	counted := 1 - math.Exp(-float64(now-d.start)/float64(d.tau)) // the weight of the time since start
	if counted <= 0 {
		return 0
	}
	return d.v / d.tau.Seconds() / counted
}

func (d *decayRate) decay(now time.Duration) {
	if now > d.at {
		d.v *= math.Exp(-float64(now-d.at) / float64(d.tau))
		d.at = now
	}
}

// ServerLoadCounters are the poller's cumulative counters (see package
// stats).
type ServerLoadCounters = tailroute.ServerLoadCounters

// ServerLoadCounters returns the poller's counters (zero without polling).
func (r *Router[H, S]) ServerLoadCounters() ServerLoadCounters {
	sl := r.load.Load()
	if sl == nil {
		return ServerLoadCounters{}
	}
	now := r.clock.Now()
	b := sl.budget(now)
	c := ServerLoadCounters{Requests: r.requests.Load(), Polls: sl.polls.Load(), Failures: sl.failures.Load(), Samples: sl.samples.Load(),
		Interval: b.interval,
		QueueMax: r.queues.max(),
		Weight:   r.weightAt(now),
		Clients:  r.clients.value()}
	sl.mu.Lock()
	c.PollsPerSecond = sl.pollRate.rate(now) / float64(b.hosts)
	for id := range sl.skipped {
		c.Skipped = append(c.Skipped, id)
	}
	sl.mu.Unlock()
	return c
}
