package policy

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/policy/core"
	"github.com/tailroute/tailroute/tracker"
)

// maxCand is the number of hosts ranked per request (fixed array, no
// allocation).
const maxCand = 16

// Policy is a gocql.HostSelectionPolicy: token-aware, ranking replicas with
// C3 (default), P2C or RoundRobin, fed by a tracker. Like every gocql policy
// it serves one Session.
type Policy struct {
	cfg   config
	tr    *tracker.Tracker
	clock tracker.Clock

	mu          sync.Mutex // serializes table rebuilds
	tbl         atomic.Pointer[hostTable]
	entries     []*hostEntry // current hosts, in insertion order (under mu)
	partitioner string
	reps        map[string]core.Replication // replication of keyspaces with placement (under mu)

	ksMu       sync.Mutex // serializes keyspace metadata fetches
	getKS      atomic.Pointer[func(string) (*gocql.KeyspaceMetadata, error)]
	sessionKS  atomic.Pointer[string]
	observed   atomic.Bool
	wired      atomic.Pointer[gocql.ClusterConfig] // set once by Wire
	session    atomic.Pointer[gocql.Session]       // the session served (Init)
	refused    atomic.Pointer[error]               // set when a second session shares the policy
	localDC    atomic.Pointer[string]              // effective local DC (see WithLocalDC)
	dcProblem  atomic.Pointer[error]               // why the effective local DC differs from the configured one
	rr         atomic.Uint64
	statePool  sync.Pool
	waits      atomic.Uint64
	overRate   atomic.Uint64
	probes     atomic.Uint64
	demoted    atomic.Uint64
	abandoned  atomic.Uint64
	noReplicas atomic.Uint64
	lateSeen   atomic.Bool // gocql's own speculative execution seen (see queryState)

	load  *serverLoadPoller // WithServerLoad; nil = off
	polls atomic.Int64      // poll queries in flight (Pick checks for them)
}

// hostTable is an immutable snapshot of the hosts, the ring and the replica
// maps; Pick reads it with one atomic load.
type hostTable struct {
	hosts  []*hostEntry
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

type hostEntry struct {
	info  *gocql.HostInfo
	id    string
	dc    string
	rack  string
	local bool
	h     *tracker.Host
	up    *atomic.Bool // the policy's view (HostUp/HostDown); shared by entries of the same host
}

func (e *hostEntry) isUp() bool { return e.up.Load() && e.info.IsUp() }

// New returns a Policy. Options are validated once; an invalid option yields
// an error naming the option, the field, the value and the allowed range.
func New(opts ...Option) (*Policy, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if len(cfg.errs) > 0 {
		return nil, errors.Join(cfg.errs...)
	}
	tr, err := tracker.New(cfg.tracker)
	if err != nil {
		return nil, err
	}
	cfg.tracker = tr.Config()
	p := &Policy{cfg: cfg, tr: tr, clock: tr.Clock(), reps: map[string]core.Replication{}}
	if cfg.keyspaceMetadata != nil {
		f := cfg.keyspaceMetadata
		p.getKS.Store(&f)
	}
	p.statePool.New = func() any { return &queryState{p: p} }
	p.tbl.Store(&hostTable{byID: map[string]int32{}, ks: map[string]*ksEntry{}})
	dc := cfg.localDC
	p.localDC.Store(&dc)
	if cfg.serverLoad > 0 {
		p.load = newServerLoadPoller(p, cfg.serverLoad)
	}
	return p, nil
}

// Tracker returns the policy's tracker (per-host state, LatencyQuantile).
func (p *Policy) Tracker() *tracker.Tracker { return p.tr }

// LatencyQuantile returns the cluster-wide q-quantile of recent attempt
// latencies (see tracker.Tracker.LatencyQuantile); false with too few
// samples. It lets the policy serve as a speculative-delay source directly.
func (p *Policy) LatencyQuantile(q float64) (time.Duration, bool) { return p.tr.LatencyQuantile(q) }

// Strategy returns the ranking strategy.
func (p *Policy) Strategy() Strategy { return p.cfg.strategy }

// IsLocal reports whether host is in the local DC (always true without
// WithLocalDC). The local DC is the one WithLocalDC names, or what the
// policy falls back to when no host is in it (see WithLocalDC).
func (p *Policy) IsLocal(host *gocql.HostInfo) bool {
	dc := *p.localDC.Load()
	return dc == "" || host.DataCenter() == dc
}

func hostID(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddressAndPort()
}

// AddHost adds or updates a host.
func (p *Policy) AddHost(host *gocql.HostInfo) { p.AddHosts([]*gocql.HostInfo{host}) }

// AddHosts adds or updates several hosts with one rebuild (gocql calls it at
// session start).
func (p *Policy) AddHosts(hosts []*gocql.HostInfo) {
	if len(hosts) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, info := range hosts {
		if info == nil {
			continue
		}
		id := hostID(info)
		e := &hostEntry{info: info, id: id, dc: info.DataCenter(), rack: info.Rack(), h: p.tr.Host(id)}
		e.local = p.cfg.localDC == "" || e.dc == p.cfg.localDC
		replaced := false
		for i, old := range p.entries {
			if old.id == id {
				e.up = old.up
				p.entries[i] = e
				replaced = true
				break
			}
		}
		if !replaced {
			e.up = new(atomic.Bool)
			e.up.Store(true)
			p.entries = append(p.entries, e)
		}
	}
	p.rebuildLocked()
}

// RemoveHost forgets a host.
func (p *Policy) RemoveHost(host *gocql.HostInfo) {
	if host == nil {
		return
	}
	id := hostID(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, e := range p.entries {
		if e.id == id {
			p.entries = append(p.entries[:i:i], p.entries[i+1:]...)
			p.tr.Remove(id)
			p.rebuildLocked()
			return
		}
	}
}

// HostUp marks a host up. A host that was down restarts as a clean slate
// (tracker.Host.Reset): it is scored with cluster-wide priors and so gets
// traffic again at once.
func (p *Policy) HostUp(host *gocql.HostInfo) {
	if host == nil {
		return
	}
	e := p.entry(hostID(host))
	if e == nil {
		p.AddHost(host)
		return
	}
	if !e.up.Swap(true) {
		e.h.Reset()
	}
}

// HostDown marks a host down: it is not handed out until HostUp. Its
// in-flight count is reset (attempts still outstanding no longer count), so
// attempts gocql abandons without Mark cannot skew it.
func (p *Policy) HostDown(host *gocql.HostInfo) {
	if host == nil {
		return
	}
	if e := p.entry(hostID(host)); e != nil {
		if e.up.Swap(false) {
			e.h.Reset()
		}
	}
}

func (p *Policy) entry(id string) *hostEntry {
	t := p.tbl.Load()
	if i, ok := t.byID[id]; ok {
		return t.hosts[i]
	}
	return nil
}

// SetPartitioner is called by gocql with the cluster's partitioner. Token
// awareness needs Murmur3Partitioner; with another partitioner requests are
// ranked over a sample of local hosts.
func (p *Policy) SetPartitioner(partitioner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partitioner != partitioner {
		p.partitioner = partitioner
		p.rebuildLocked()
	}
}

// KeyspaceChanged is called by gocql on schema changes: the keyspace's
// replication is fetched again (or forgotten when it was dropped).
func (p *Policy) KeyspaceChanged(ev gocql.KeyspaceUpdateEvent) {
	if ev.Keyspace == "" {
		return
	}
	if strings.EqualFold(ev.Change, "DROPPED") {
		p.mu.Lock()
		delete(p.reps, ev.Keyspace)
		p.rebuildLocked()
		p.mu.Unlock()
		return
	}
	p.loadKeyspace(ev.Keyspace, true)
}

// loadKeyspace fetches the keyspace's replication and installs its replica
// map. It never holds p.mu while talking to the cluster.
func (p *Policy) loadKeyspace(ks string, force bool) *ksEntry {
	p.ksMu.Lock()
	defer p.ksMu.Unlock()
	if !force {
		if e, ok := p.tbl.Load().ks[ks]; ok && (e.rm != nil || e.retryAt == 0 || p.clock.Now() < e.retryAt) {
			return e
		}
	}
	var md *gocql.KeyspaceMetadata
	err := errNoSession
	if fp := p.getKS.Load(); fp != nil {
		md, err = (*fp)(ks)
	}
	var rep core.Replication
	ok := false
	if err == nil && md != nil {
		rep, ok, _ = core.ParseReplication(md.StrategyClass, md.StrategyOptions)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		p.reps[ks] = rep
	} else {
		delete(p.reps, ks)
	}
	old := p.tbl.Load()
	t := *old
	t.ks = make(map[string]*ksEntry, len(old.ks)+1)
	for k, v := range old.ks {
		t.ks[k] = v
	}
	e := &ksEntry{}
	switch {
	case ok && t.ring != nil:
		e.rm = t.ring.Replicas(rep)
	case err != nil:
		e.retryAt = p.clock.Now() + time.Second // transient? try again in a second
	}
	t.ks[ks] = e
	p.tbl.Store(&t)
	return e
}

// rebuildLocked builds a new table from p.entries (p.mu held).
func (p *Policy) rebuildLocked() {
	if p.refused.Load() != nil {
		p.tbl.Store(&hostTable{byID: map[string]int32{}, ks: map[string]*ksEntry{}})
		return
	}
	p.resolveLocalDCLocked()
	t := &hostTable{
		hosts: append([]*hostEntry(nil), p.entries...),
		byID:  make(map[string]int32, len(p.entries)),
		ks:    make(map[string]*ksEntry, len(p.reps)),
	}
	for i, e := range t.hosts {
		t.byID[e.id] = int32(i)
		if e.local {
			t.local = append(t.local, int32(i))
		} else {
			t.remote = append(t.remote, int32(i))
		}
	}
	if strings.HasSuffix(p.partitioner, "Murmur3Partitioner") {
		nodes := make([]core.Node, len(t.hosts))
		ok, ntok := true, 0
		for i, e := range t.hosts {
			nodes[i] = core.Node{ID: e.id, DC: e.dc, Rack: e.rack}
			for _, s := range e.info.Tokens() {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					ok = false
					break
				}
				nodes[i].Tokens = append(nodes[i].Tokens, v)
				ntok++
			}
		}
		if ok && ntok > 0 {
			t.ring = core.NewRing(nodes)
		}
	}
	if t.ring != nil {
		for ks, rep := range p.reps {
			t.ks[ks] = &ksEntry{rm: t.ring.Replicas(rep)}
		}
	}
	p.tbl.Store(t)
}

// Pick returns the query plan of one execution: the local replicas of the
// query's token ranked by the strategy, then remote replicas (WithRemoteDCs),
// then the other hosts as fallback (local first). Down hosts are skipped.
//
// Replica sets are computed here from HostInfo.Tokens() and the keyspace's
// replication (Session.KeyspaceMetadata), with the same placement algorithm
// as gocql, rather than by wrapping gocql's TokenAwareHostPolicy: wrapping
// costs its allocations on every Pick (a map, a closure and the fallback
// iterator), hides where replicas end (we would have to infer it from the
// first call of the fallback) and hands hosts out one at a time, while
// ranking needs the whole replica set up front. Our own map is looked up
// with a binary search and no allocation; TestReplicaSetsMatchGocql checks
// the sets against gocql's on the same ring.
//
// The per-query state comes from a sync.Pool. A non-idempotent query's is
// recycled when a host is marked with a nil error: gocql v1.7.0 never
// speculates such queries and returns right after Mark(nil). An idempotent
// query may run speculatively on several goroutines, so its state is
// reference counted (see queryState) and recycled when the execution's
// first Mark(nil) has happened and every host handed out has had its last
// Mark. After the first Mark(nil) the iterator must not be called again:
// gocql v1.7.0 starts a speculative attempt after that only if its timer
// fires in the instant between that Mark and the result reaching the
// executor; speculative.Policy, the supported way to hedge, takes a fresh
// plan instead of calling this one then. gocql's own speculative execution
// is detected at its first late call, after which idempotent states are not
// pooled; WithDriverSpeculation does so from the start. Wrappers that call
// the iterator themselves must follow the same rule, give back a host they pulled but do not use with
// Mark(context.Canceled), and not use a SelectedHost after its last Mark
// (read Info before).
func (p *Policy) Pick(qry gocql.ExecutableQuery) gocql.NextHost {
	if qry != nil && p.polls.Load() > 0 {
		if next := p.pollPlan(qry); next != nil {
			return next // the policy's own server-load poll (serverload.go)
		}
	}
	t := p.tbl.Load()
	seq := qry != nil && !qry.IsIdempotent()
	var st *queryState
	if !seq && (p.cfg.driverSpec || p.lateSeen.Load()) {
		st = &queryState{p: p, noPool: true}
	} else {
		st = p.statePool.Get().(*queryState)
	}
	tbl, replicas, routed := p.route(t, qry)
	st.mu.Lock()
	next := st.issue(seq)
	st.tbl, st.replicas, st.routed = tbl, replicas, routed
	st.mu.Unlock()
	if !routed {
		p.noReplicas.Add(1)
	}
	return next
}

// route returns the table to use and the replica set of the query's token
// (routed is false without token information).
func (p *Policy) route(t *hostTable, qry gocql.ExecutableQuery) (*hostTable, []int32, bool) {
	if qry == nil || t.ring == nil {
		return t, nil, false
	}
	key, err := qry.GetRoutingKey()
	if err != nil || key == nil {
		return t, nil, false
	}
	ks := qry.Keyspace()
	e := t.ks[ks]
	if (e == nil || (e.rm == nil && e.retryAt != 0 && p.clock.Now() >= e.retryAt)) && ks != "" {
		e = p.loadKeyspace(ks, false)
		t = p.tbl.Load()
	}
	if e == nil || e.rm == nil {
		return t, nil, false
	}
	return t, e.rm.Lookup(core.Murmur3Token(key)), true
}

var errNoSession = errors.New("policy: no session")

// rand64 returns a random seed for one request.
func rand64() uint64 { return rand.Uint64() }
