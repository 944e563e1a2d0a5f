package policy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
)

// Server-load polling (WithServerLoad).
//
// Cassandra 4.0+ exposes each node's thread pools in the node-local virtual
// table system_views.thread_pools. With WithServerLoad(interval) the policy
// reads, for every up host, that host's own rows
//
//	SELECT name, active_tasks, pending_tasks, completed_tasks FROM system_views.thread_pools
//
// through the application's session (Init), at consistency ONE, without
// retries, with a timeout of one interval, and routes the query to that
// host itself: Pick recognises its own poll queries by their context (one
// atomic load on the user path, and only while a poll is in flight) and
// hands out just the polled host. Polls are never measured, never counted
// in os_s and never passed to the tracker as user traffic; other query
// observers can skip them with IsServerLoadPoll. Each host is polled on its
// own schedule, every interval times a random factor in [0.8, 1.2), so the
// hosts' polls do not line up.
//
// Cost: one query per host per interval from each application instance:
// at DefaultServerLoadInterval (250ms) 4 queries/s per node per client
// session, each answered from memory by the node (no disk, no replica
// coordination; about 30 rows of a few bytes on Cassandra 4.x).
//
// From each sample, over ReadStage and MutationStage (in Cassandra each has
// its own workers; a node busy in either is slower):
//
//	q_s    = pending + active - w*os_s (os_s: this client's requests on the
//	                                     host while the poll ran; qhat =
//	                                     1 + w*os_s + q_s already counts
//	                                     w*os_s, C3's estimate of all
//	                                     clients' requests, w the
//	                                     ConcurrencyWeight)
//	1/mu_s = mean(active) / X          (Little's law on the workers: X the
//	                                     completed-task rate between two
//	                                     samples, mean(active) the busy
//	                                     workers of both samples; skipped
//	                                     when nothing completed or no worker
//	                                     was seen busy)
//
// A completed count lower than the previous sample's (the node restarted)
// gives no rate: the sample becomes the new baseline. Each sample is stamped
// with the midpoint of its poll and counts in full for 1.5 intervals; after
// that it fades and is dropped after 6 intervals, so a host whose polls stop
// (slow, failing, down) falls back to the client-side estimates (q_s = 0,
// 1/mu_s = R_s). A sample is used only for a host the client does not
// measure itself: nothing observed since the sample, nothing outstanding,
// no response for 1.5 intervals (tracker.ServerLoadWeight), and a polled 1/mu_s only
// when above R_s (then R_s is raised to it): on a host the client uses, its
// own latencies and os_s are fresher, so a stale sample never outweighs
// fresh latency data. The polls tell about the hosts the client's own
// measurements cannot: those it avoids or has left idle, e.g. whether a
// host it left because it was slow still has a queue.
//
// A host that answers Invalid or Unauthorized (Cassandra 3.x has no
// system_views; a role without SELECT on it) is logged once through the
// cluster's gocql Logger (the one Wire saw, else gocql.Logger) and is not
// polled again. A poll that fails otherwise or times out is dropped
// silently and the host is polled again at the next interval; user queries
// never wait for a poll and never see its errors.

// DefaultServerLoadInterval is the poll interval suggested for
// WithServerLoad: 4 polls per second per node and client session.
const DefaultServerLoadInterval = 250 * time.Millisecond

const (
	minServerLoadInterval = 10 * time.Millisecond
	maxServerLoadInterval = time.Minute
)

// WithServerLoad turns on server-load polling every interval (see the
// package's "Server-load polling" section in serverload.go): q_s and 1/mu_s
// of C3's score come from each host's system_views.thread_pools. Off by
// default; DefaultServerLoadInterval is the suggested interval. Allowed
// 10ms..1m.
func WithServerLoad(interval time.Duration) Option {
	return func(c *config) {
		if interval < minServerLoadInterval || interval > maxServerLoadInterval {
			c.fail("policy: WithServerLoad: ServerLoadInterval = %v, allowed %v..%v", interval, minServerLoadInterval, maxServerLoadInterval)
			return
		}
		c.serverLoad = interval
	}
}

// pollKey marks the context of a poll query; its value is the polled host.
type pollKey struct{}

// IsServerLoadPoll reports whether ctx is the context of one of the
// policy's server-load polls; query observers that count user traffic use
// it to skip them.
func IsServerLoadPoll(ctx context.Context) bool {
	if ctx == nil {
		return false
	}
	_, ok := ctx.Value(pollKey{}).(*hostEntry)
	return ok
}

// pollHost is the host of a poll query's plan: no measurement, no os_s.
type pollHost struct{ e *hostEntry }

func (h pollHost) Info() *gocql.HostInfo { return h.e.info }
func (h pollHost) Mark(error)            {}

// pollPlan returns the plan of a poll query (just the polled host), or nil
// when qry is not a poll.
func (p *Policy) pollPlan(qry gocql.ExecutableQuery) gocql.NextHost {
	e, ok := qry.Context().Value(pollKey{}).(*hostEntry)
	if !ok {
		return nil
	}
	done := false
	return func() gocql.SelectedHost {
		if done || !e.isUp() {
			return nil
		}
		done = true
		return pollHost{e}
	}
}

// isPoll reports whether ctx belongs to a poll (cheap when none runs).
func (p *Policy) isPoll(ctx context.Context) bool {
	return p.polls.Load() > 0 && IsServerLoadPoll(ctx)
}

// ThreadPoolSample is one poll of a host: the sums over ReadStage and
// MutationStage, at clock time At.
type ThreadPoolSample struct {
	At        time.Duration
	Active    float64
	Pending   float64
	Completed int64
	Own       float64 // w*os_s: what C3's qhat already counts for the host during the poll
}

// loadEstimator turns successive samples of one host into q_s and 1/mu_s.
type loadEstimator struct {
	prev    ThreadPoolSample
	hasPrev bool
}

// add returns q_s and 1/mu_s (0: no estimate from this sample) for s.
func (le *loadEstimator) add(s ThreadPoolSample) (queue float64, serviceTime time.Duration) {
	queue = max(s.Pending+s.Active-s.Own, 0)
	if le.hasPrev {
		dc := s.Completed - le.prev.Completed
		dt := s.At - le.prev.At
		busy := (s.Active + le.prev.Active) / 2
		if dc > 0 && dt > 0 && busy > 0 {
			// Little's law: busy workers = completion rate * service time.
			serviceTime = time.Duration(busy * float64(dt) / float64(dc))
		}
		// dc < 0: counters reset (restart); s is the new baseline.
	}
	le.prev, le.hasPrev = s, true
	return queue, serviceTime
}

// serverLoadPoller polls every host of one Policy.
type serverLoadPoller struct {
	p        *Policy
	interval time.Duration

	mu      sync.Mutex
	sess    *gocql.Session
	running map[string]bool // host id -> polling loop runs
	skipped map[string]bool // host id -> no system_views: not polled

	// query runs one poll of e; tests replace it.
	query func(ctx context.Context, s *gocql.Session, e *hostEntry) (ThreadPoolSample, error)

	polls, failures, samples atomic.Uint64
}

func newServerLoadPoller(p *Policy, interval time.Duration) *serverLoadPoller {
	return &serverLoadPoller{p: p, interval: interval, running: map[string]bool{}, skipped: map[string]bool{},
		query: queryThreadPools}
}

func (sl *serverLoadPoller) logf(format string, args ...any) { sl.p.logf(format, args...) }

// start polls through s; hosts are picked up as they are added.
func (sl *serverLoadPoller) start(s *gocql.Session) {
	sl.mu.Lock()
	if sl.sess != nil && !sl.sess.Closed() {
		sl.mu.Unlock()
		return
	}
	sl.sess = s
	sl.mu.Unlock()
	go sl.supervise(s)
}

// supervise starts a polling loop for every host that has none, every
// interval, until the session closes.
func (sl *serverLoadPoller) supervise(s *gocql.Session) {
	t := time.NewTicker(sl.interval)
	defer t.Stop()
	for {
		if s.Closed() {
			return
		}
		for _, e := range sl.p.tbl.Load().hosts {
			sl.mu.Lock()
			if !sl.running[e.id] && !sl.skipped[e.id] {
				sl.running[e.id] = true
				go sl.loop(s, e.id)
			}
			sl.mu.Unlock()
		}
		<-t.C
	}
}

// loop polls one host every jittered interval until it is removed, skipped
// or the session closes.
func (sl *serverLoadPoller) loop(s *gocql.Session, id string) {
	defer func() {
		sl.mu.Lock()
		delete(sl.running, id)
		sl.mu.Unlock()
	}()
	var est loadEstimator
	timer := time.NewTimer(time.Duration(rand.Int64N(int64(sl.interval)))) // spread the first polls
	defer timer.Stop()
	for {
		<-timer.C
		if s.Closed() {
			return
		}
		e := sl.p.entry(id)
		if e == nil {
			return // removed
		}
		if e.isUp() && (e.local || sl.p.cfg.remoteDCs) {
			if !sl.pollOnce(s, e, &est) {
				return
			}
		}
		timer.Reset(time.Duration(float64(sl.interval) * (0.8 + 0.4*rand.Float64())))
	}
}

// pollOnce polls e once and records the sample; false means "stop polling
// this host".
func (sl *serverLoadPoller) pollOnce(s *gocql.Session, e *hostEntry, est *loadEstimator) bool {
	p := sl.p
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), pollKey{}, e), sl.interval)
	defer cancel()
	sl.polls.Add(1)
	p.polls.Add(1)
	t0, own0 := p.clock.Now(), e.h.InFlight()
	smp, err := sl.query(ctx, s, e)
	t1, own1 := p.clock.Now(), e.h.InFlight()
	p.polls.Add(-1)
	if err != nil {
		sl.failures.Add(1)
		if permanentPollError(err) {
			sl.mu.Lock()
			sl.skipped[e.id] = true
			sl.mu.Unlock()
			sl.logf("host %s answers %v to %s: server-load polling is off for this host (Cassandra 4.0+ has the table)",
				e.info.ConnectAddressAndPort(), err, threadPoolsQuery)
			return false
		}
		return !s.Closed()
	}
	smp.At = t0 + (t1-t0)/2
	smp.Own = sl.p.cfg.weight * float64(own0+own1) / 2
	q, svc := est.add(smp)
	e.h.ServerLoad(smp.At, q, svc, sl.interval*3/2)
	sl.samples.Add(1)
	return true
}

// permanentPollError: the host will never answer the poll (no such table,
// not allowed).
func permanentPollError(err error) bool {
	var re gocql.RequestError
	if errors.As(err, &re) {
		c := re.Code()
		return c == gocql.ErrCodeInvalid || c == gocql.ErrCodeUnauthorized || c == gocql.ErrCodeSyntax
	}
	return false
}

const threadPoolsQuery = "SELECT name, active_tasks, pending_tasks, completed_tasks FROM system_views.thread_pools"

// queryThreadPools reads e's ReadStage and MutationStage rows.
func queryThreadPools(ctx context.Context, s *gocql.Session, e *hostEntry) (ThreadPoolSample, error) {
	iter := s.Query(threadPoolsQuery).WithContext(ctx).Consistency(gocql.One).RetryPolicy(nil).Idempotent(false).Iter()
	var (
		smp             ThreadPoolSample
		name            string
		active, pending int
		completed       int64
		found           int
	)
	for iter.Scan(&name, &active, &pending, &completed) {
		if name == "ReadStage" || name == "MutationStage" {
			smp.Active += float64(active)
			smp.Pending += float64(pending)
			smp.Completed += completed
			found++
		}
	}
	if err := iter.Close(); err != nil {
		return smp, err
	}
	if h := iter.Host(); h != nil && hostID(h) != e.id {
		return smp, fmt.Errorf("poll of %s answered by %s", e.id, hostID(h)) // never counts for the wrong host
	}
	if found == 0 {
		return smp, errNoStages
	}
	return smp, nil
}

var errNoStages = errors.New("policy: system_views.thread_pools has no ReadStage or MutationStage row")

// ServerLoadCounters are the poller's cumulative counters.
type ServerLoadCounters struct {
	Polls    uint64   // poll queries sent
	Failures uint64   // polls that failed or timed out
	Samples  uint64   // samples recorded
	Skipped  []string // hosts not polled (no system_views.thread_pools, not allowed)
}

// ServerLoadCounters returns the poller's counters (zero without
// WithServerLoad).
func (p *Policy) ServerLoadCounters() ServerLoadCounters {
	sl := p.load
	if sl == nil {
		return ServerLoadCounters{}
	}
	c := ServerLoadCounters{Polls: sl.polls.Load(), Failures: sl.failures.Load(), Samples: sl.samples.Load()}
	sl.mu.Lock()
	for id := range sl.skipped {
		c.Skipped = append(c.Skipped, id)
	}
	sl.mu.Unlock()
	return c
}
