// Package route is the driver-free engine behind the host selection
// policies of package policy (gocql v1) and apache/policy (the Apache
// Cassandra Go driver v2): the host table, token-aware replica sets, the
// three ranking strategies (C3, P2C, RoundRobin) with rate control, the
// stall and health rules (and P2C's busy rule), and the pooled per-query plan whose hosts
// are handed out and marked. It imports no driver: a driver's adapter
// instantiates Router with its host type (H) and its SelectedHost interface
// (S), and translates queries, keyspace metadata, errors and session
// events. The rules themselves are specified in package tailroute (the module root).
package route

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/settings"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

// maxCand is the number of hosts ranked per request (fixed array, no
// allocation).
const maxCand = 16

// HostInfo is what the engine reads of a driver's host (both gocql's and
// the v2 driver's *HostInfo have these methods).
type HostInfo interface {
	comparable
	HostID() string
	ConnectAddressAndPort() string
	DataCenter() string
	Rack() string
	Tokens() []string
	IsUp() bool
}

// KeyspaceFunc returns a keyspace's replication strategy class and options
// (the driver's KeyspaceMetadata.StrategyClass and StrategyOptions).
type KeyspaceFunc func(keyspace string) (class string, options map[string]any, err error)

// Hooks are the driver-specific functions a Router calls.
type Hooks struct {
	// Classify maps an attempt's error to a tracker outcome (Mark without
	// an observer).
	Classify func(err error) track.Outcome
	// Logf logs a problem found while serving (the local DC).
	Logf func(format string, a ...any)
}

// Router is the engine of one policy: H is the driver's host type, S its
// SelectedHost interface, which *Selection[H, S] must implement.
type Router[H HostInfo, S any] struct {
	cfg   Config
	hooks Hooks
	tr    *track.Tracker
	clock tracker.Clock

	mu          sync.Mutex // serializes table rebuilds
	tbl         atomic.Pointer[hostTable[H]]
	entries     []*hostEntry[H] // current hosts, in insertion order (under mu)
	partitioner string
	reps        map[string]core.Replication // replication of keyspaces with placement (under mu)

	ksMu       sync.Mutex // serializes keyspace metadata fetches
	getKS      atomic.Pointer[KeyspaceFunc]
	observed   atomic.Bool
	refused    atomic.Bool
	localDC    atomic.Pointer[string] // effective local DC (see WithLocalDC)
	dcProblem  atomic.Pointer[error]  // why the effective local DC differs from the configured one
	rr         atomic.Uint64
	statePool  sync.Pool
	waits      atomic.Uint64
	overRate   atomic.Uint64
	probes     atomic.Uint64
	demoted    atomic.Uint64
	abandoned  atomic.Uint64
	noReplicas atomic.Uint64
	lateSeen   atomic.Bool // the driver's own speculative execution seen (see queryState)

	load     atomic.Pointer[serverLoadPoller[H, S]] // server-load polling, once started; nil = off
	polls    atomic.Int64                           // poll queries in flight (Pick and the observers check for them)
	queues   queueMean                              // the polled queues' mean (w_eff, weight.go)
	clients  clientCount                            // w measured (weight.go)
	polled   bool                                   // the configuration polls (WithServerLoad and C3)
	requests atomic.Uint64                          // plans handed out while polled: what earns poll credit (WithPollBudget)
	offTold  atomic.Bool                            // a host without the polled table was logged

	zonePausedUntil atomic.Int64 // clock time until which no in-zone replica is kept (the zone rule's pause memory, zone.go)

	rand64 func() uint64 // the engine's randomness (WithRand)
	spawn  func(func())  // starts background work (WithSpawn)
}

// hostTable is an immutable snapshot of the hosts, the ring and the replica
// maps; Pick reads it with one atomic load.
type hostTable[H HostInfo] struct {
	hosts  []*hostEntry[H]
	byID   map[string]int32
	local  []int32
	remote []int32
	ring   *core.Ring
	ks     map[string]*ksEntry
}

type ksEntry struct {
	rm      *core.ReplicaMap // nil: no token-aware placement for this keyspace
	retryAt time.Duration    // for nil rm after a metadata error: when to try again (0: never, until KeyspaceChanged)
}

type hostEntry[H HostInfo] struct {
	info  H
	id    string
	dc    string
	rack  string
	local bool
	h     *track.Host
	up    *atomic.Bool // the policy's view (HostUp/HostDown); shared by entries of the same host
}

func (e *hostEntry[H]) isUp() bool { return e.up.Load() && e.info.IsUp() }

// New returns a Router. Options are validated once; an invalid option
// yields an error naming the option, the field, the value and the allowed
// range.
func New[H HostInfo, S any](hooks Hooks, opts ...tailroute.Option) (*Router[H, S], error) {
	set, err := settings.Build(settings.Routing, opts)
	if err != nil {
		return nil, err
	}
	cfg := set.Route
	if _, ok := any((*Selection[H, S])(nil)).(S); !ok {
		return nil, errors.New("route: *Selection[H, S] does not implement the driver's SelectedHost interface")
	}
	tr, err := track.New(cfg.Tracker)
	if err != nil {
		return nil, err
	}
	cfg.Tracker = tr.Config()
	tr.SetOff(track.Rule(cfg.Off))
	if hooks.Logf == nil {
		hooks.Logf = func(string, ...any) {}
	}
	r := &Router[H, S]{cfg: cfg, hooks: hooks, tr: tr, clock: tr.Clock(), reps: map[string]core.Replication{}}
	r.rand64, r.spawn = cfg.Rand, cfg.Spawn
	if r.rand64 == nil {
		r.rand64 = rand.Uint64
	}
	if r.spawn == nil {
		r.spawn = func(f func()) { go f() }
	}
	r.polled = cfg.ServerLoad && strategy(&cfg) == tailroute.C3
	if cfg.KeyspaceFunc != nil {
		f := KeyspaceFunc(cfg.KeyspaceFunc)
		r.getKS.Store(&f)
	}
	r.statePool.New = func() any { return &queryState[H, S]{r: r} }
	r.tbl.Store(&hostTable[H]{byID: map[string]int32{}, ks: map[string]*ksEntry{}})
	dc := cfg.LocalDC
	r.localDC.Store(&dc)
	tr.SetClients(r.weight())
	return r, nil
}

// Config returns the validated configuration.
func (r *Router[H, S]) Config() *Config { return &r.cfg }

// Tracker returns the tracker (per-host state, LatencyQuantile).
func (r *Router[H, S]) Tracker() *track.Tracker { return r.tr }

// LatencyQuantile returns the tracker's cluster-wide q-quantile of recent
// attempt latencies (track.Tracker.LatencyQuantile). With MaxSilence and
// HedgeRoom it makes the Router a hedger's source (tailroute.LoadSource),
// which the adapters' policies pass on.
func (r *Router[H, S]) LatencyQuantile(q float64) (time.Duration, bool) {
	return r.tr.LatencyQuantile(q)
}

// MaxSilence returns the tracker's longest silence of a host with attempts
// in flight (track.Tracker.MaxSilence).
func (r *Router[H, S]) MaxSilence() time.Duration { return r.tr.MaxSilence() }

// Strategy returns the ranking strategy.
func (r *Router[H, S]) Strategy() tailroute.Strategy { return strategy(&r.cfg) }

// SetKeyspaceFunc sets where keyspace replication comes from (the
// session), unless WithKeyspaceFunc set it.
func (r *Router[H, S]) SetKeyspaceFunc(f KeyspaceFunc) {
	if r.cfg.KeyspaceFunc == nil && f != nil {
		r.getKS.Store(&f)
	}
}

// SetObserved says that an observer measures every attempt: Mark then only
// ends the attempt.
func (r *Router[H, S]) SetObserved() { r.observed.Store(true) }

// IsLocal reports whether a host of data center dc is local (always true
// without WithLocalDC). The local DC is the one WithLocalDC names, or what
// the router falls back to when no host is in it.
func (r *Router[H, S]) IsLocal(dc string) bool {
	l := *r.localDC.Load()
	return l == "" || dc == l
}

// DCProblem returns why the effective local DC differs from the configured
// one (nil when it does not).
func (r *Router[H, S]) DCProblem() error {
	if e := r.dcProblem.Load(); e != nil {
		return *e
	}
	return nil
}

// Query is what a plan needs of a query: its routing key (nil or an error
// without token information), keyspace and idempotence.
type Query struct {
	Key        []byte
	KeyErr     error
	Keyspace   string
	Idempotent bool
	None       bool   // no query at all (Pick(nil))
	Pinned     string // host ID the query is pinned to (v2's Query.SetHostID); "" none
}

// Pick returns the query plan of one execution (see policy.Policy.Pick for
// the plan and the rules of the pooled state).
func (r *Router[H, S]) Pick(q Query) func() S {
	if r.polled && !q.None && q.Pinned == "" {
		r.requests.Add(1) // poll credit (WithPollBudget); polls are pinned (v2) or planned by PollPlan (v1)
	}
	t := r.tbl.Load()
	seq := !q.None && !q.Idempotent
	var st *queryState[H, S]
	if !seq && (r.cfg.DriverSpec || r.lateSeen.Load()) {
		st = &queryState[H, S]{r: r, noPool: true}
	} else {
		st = r.statePool.Get().(*queryState[H, S])
	}
	if q.Pinned != "" {
		pin := int32(-1)
		if i, ok := t.byID[q.Pinned]; ok {
			pin = i + 1
		}
		st.mu.Lock()
		next := st.issue(seq)
		st.tbl, st.pin = t, pin
		st.mu.Unlock()
		return next
	}
	tbl, replicas, routed := r.route(t, q)
	st.mu.Lock()
	next := st.issue(seq)
	st.tbl, st.replicas, st.routed = tbl, replicas, routed
	st.mu.Unlock()
	if !routed {
		r.noReplicas.Add(1)
	}
	return next
}

// Routable reports whether token information (a ring) is known; without
// it a query's routing key is not needed.
func (r *Router[H, S]) Routable() bool { return r.tbl.Load().ring != nil }

// Replicas returns the replica hosts of a query's token, false without
// token information (tests compare them with the driver's).
func (r *Router[H, S]) Replicas(q Query) ([]H, bool) {
	t, reps, ok := r.route(r.tbl.Load(), q)
	if !ok {
		return nil, false
	}
	out := make([]H, len(reps))
	for i, k := range reps {
		out[i] = t.hosts[k].info
	}
	return out, true
}

// Hosts returns the known hosts, in insertion order.
func (r *Router[H, S]) Hosts() []H {
	t := r.tbl.Load()
	out := make([]H, len(t.hosts))
	for i, e := range t.hosts {
		out[i] = e.info
	}
	return out
}

// route returns the table to use and the replica set of the query's token
// (routed is false without token information).
func (r *Router[H, S]) route(t *hostTable[H], q Query) (*hostTable[H], []int32, bool) {
	if q.None || t.ring == nil || q.KeyErr != nil || q.Key == nil {
		return t, nil, false
	}
	ks := q.Keyspace
	e := t.ks[ks]
	if (e == nil || (e.rm == nil && e.retryAt != 0 && r.clock.Now() >= e.retryAt)) && ks != "" {
		e = r.loadKeyspace(ks, false)
		t = r.tbl.Load()
	}
	if e == nil || e.rm == nil {
		return t, nil, false
	}
	return t, e.rm.Lookup(core.Murmur3Token(q.Key)), true
}
