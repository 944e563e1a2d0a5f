package speculative

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"
)

// Policy wraps a gocql.HostSelectionPolicy (ours or any of gocql's
// built-ins) and arms hedging per query execution. Get one from
// Hedger.Wrap or Wire; install it as cluster.PoolConfig.HostSelectionPolicy.
//
// What it does in Pick, which gocql calls once per execution before it
// reads the query's SpeculativeExecutionPolicy (query_executor.go):
//   - counts the execution against the budget;
//   - leaves non-idempotent queries and queries whose context carries
//     Disable untouched (no hedge for the former: gocql's rule);
//   - for every other *gocql.Query / *gocql.Batch, sets the query's
//     SpeculativeExecutionPolicy: one extra attempt after Hedger.Delay()
//     when at least 2 hosts are up, the burst cap allows it (WithBurstCap)
//     and a budget token could be reserved, otherwise none. gocql v1.7.0 has no cluster-wide speculative
//     setting; doing it here is what makes one Wire call hedge every query.
//
// The returned NextHost never yields a host twice, so the hedge never goes
// to a host that already has an attempt of this execution, and it yields
// hosts in the wrapped policy's order: the hedge gets the next host of the
// ranking (skipping hosts that failed within the error holdoff). Every
// SelectedHost is passed through, Mark included, so the wrapped policy
// sees the same feedback as without the wrapper.
//
// How a hedge is told apart from a retry: gocql serialises NextHost calls
// of one execution but does not say who calls. The first call is the
// primary attempt. A later call is a retry if an attempt ended with an
// error before it (gocql marks the host, then asks the iterator for the
// next one); otherwise it is the hedge (gocql's ticker fired while the
// primary was in flight). The hedge is charged to the budget right then.
type Policy struct {
	h     *Hedger
	inner gocql.HostSelectionPolicy

	upMu sync.Mutex
	up   map[string]struct{}
	upN  atomic.Int32
}

// readyPolicy is a Policy whose wrapped policy is a gocql.ReadyPolicy.
type readyPolicy struct{ *Policy }

func (r readyPolicy) Ready() bool { return r.inner.(gocql.ReadyPolicy).Ready() }

// Wrap returns inner wrapped for hedging; nil means gocql's default,
// RoundRobinHostPolicy. The result implements gocql.ReadyPolicy exactly
// when inner does. Like any HostSelectionPolicy it must not be shared
// between sessions (wrap once per session; the Hedger may be shared).
func (h *Hedger) Wrap(inner gocql.HostSelectionPolicy) gocql.HostSelectionPolicy {
	if inner == nil {
		inner = gocql.RoundRobinHostPolicy()
	}
	p := &Policy{h: h, inner: inner, up: map[string]struct{}{}}
	if _, ok := inner.(gocql.ReadyPolicy); ok {
		return readyPolicy{p}
	}
	return p
}

// Hedger returns the Hedger this policy arms queries for.
func (p *Policy) Hedger() *Hedger { return p.h }

// Inner returns the wrapped policy.
func (p *Policy) Inner() gocql.HostSelectionPolicy { return p.inner }

func hostKey(h *gocql.HostInfo) string { return h.ConnectAddressAndPort() }

func (p *Policy) setUp(h *gocql.HostInfo, up bool) {
	if h == nil {
		return
	}
	k := hostKey(h)
	p.upMu.Lock()
	if up {
		p.up[k] = struct{}{}
	} else {
		delete(p.up, k)
	}
	p.upN.Store(int32(len(p.up)))
	p.upMu.Unlock()
}

func (p *Policy) AddHost(h *gocql.HostInfo) { p.setUp(h, h.IsUp()); p.inner.AddHost(h) }

// AddHosts adds hosts in bulk (gocql uses it when the policy has it).
func (p *Policy) AddHosts(hosts []*gocql.HostInfo) {
	for _, h := range hosts {
		p.setUp(h, h.IsUp())
	}
	if b, ok := p.inner.(interface{ AddHosts([]*gocql.HostInfo) }); ok {
		b.AddHosts(hosts)
		return
	}
	for _, h := range hosts {
		p.inner.AddHost(h)
	}
}
func (p *Policy) RemoveHost(h *gocql.HostInfo)                { p.setUp(h, false); p.inner.RemoveHost(h) }
func (p *Policy) HostUp(h *gocql.HostInfo)                    { p.setUp(h, true); p.inner.HostUp(h) }
func (p *Policy) HostDown(h *gocql.HostInfo)                  { p.setUp(h, false); p.inner.HostDown(h) }
func (p *Policy) SetPartitioner(s string)                     { p.inner.SetPartitioner(s) }
func (p *Policy) KeyspaceChanged(e gocql.KeyspaceUpdateEvent) { p.inner.KeyspaceChanged(e) }
func (p *Policy) Init(s *gocql.Session)                       { p.inner.Init(s) }
func (p *Policy) IsLocal(h *gocql.HostInfo) bool              { return p.inner.IsLocal(h) }

type disableKey struct{}

// Disable returns a context that opts a query out of hedging:
// q.WithContext(speculative.Disable(ctx)). The wrapped policy then leaves
// the query's own SpeculativeExecutionPolicy (gocql's default: none) alone.
func Disable(ctx context.Context) context.Context {
	return context.WithValue(ctx, disableKey{}, true)
}

func disabled(ctx context.Context) bool { return ctx != nil && ctx.Value(disableKey{}) != nil }

// setSpec sets the speculative execution policy of a query or batch.
func setSpec(q gocql.ExecutableQuery, sp gocql.SpeculativeExecutionPolicy) bool {
	switch q := q.(type) {
	case *gocql.Query:
		q.SetSpeculativeExecutionPolicy(sp)
		return true
	case *gocql.Batch:
		q.SpeculativeExecutionPolicy(sp)
		return true
	}
	return false
}

// Pick implements gocql.HostSelectionPolicy; see Policy.
func (p *Policy) Pick(qry gocql.ExecutableQuery) gocql.NextHost {
	h := p.h
	h.executions.Add(1)
	now := h.nowNs()
	h.budget.Request(now)
	if h.burst != nil {
		h.burst.Request(now)
	}
	if qry == nil || !qry.IsIdempotent() || disabled(qry.Context()) {
		return p.inner.Pick(qry)
	}
	h.eligible.Add(1)
	h.maybeRefresh(now)
	switch {
	case p.upN.Load() < 2:
		h.tooFewHosts.Add(1)
	case !h.burstAllows(now):
		h.burstDenied.Add(1)
	case !h.budget.TryReserve(now):
		h.budgetDenied.Add(1)
	default:
		if !setSpec(qry, &h.spec) {
			h.budget.Release()
			return p.inner.Pick(qry)
		}
		h.armed.Add(1)
		st := &execState{h: h, p: p, qry: qry, it: p.inner.Pick(qry), reserved: true}
		return st.next
	}
	setSpec(qry, gocql.NonSpeculativeExecution{})
	return p.inner.Pick(qry)
}

// maxSkips bounds how many unusable hosts (down or already used) one
// NextHost call skips, against iterators that never end.
const maxSkips = 1024

// execState is the per-execution state behind the NextHost of an armed
// execution. gocql serialises NextHost calls but Mark comes from the
// attempts' goroutines, so fields are guarded by mu (never contended by
// more than the 2 attempts of one execution).
type execState struct {
	h   *Hedger
	p   *Policy
	qry gocql.ExecutableQuery
	it  gocql.NextHost

	mu        sync.Mutex
	calls     int
	permits   int  // attempts that ended with an error and may ask for the next host
	reserved  bool // budget token held
	hedged    bool
	spent     bool      // a host of it was marked nil: a pooled plan (policy.Pick) may be recycled, take a fresh one
	settled   bool      // an attempt has succeeded
	hedgeSlot *hostSlot // the hedge's slot once it fired
	slots     [3]hostSlot
	nslots    int
	extra     []*hostSlot
}

func sameHost(a, b *gocql.HostInfo) bool {
	if a == b {
		return true
	}
	id := a.HostID()
	return id != "" && id == b.HostID()
}

func (st *execState) seen(info *gocql.HostInfo) bool {
	for i := 0; i < st.nslots; i++ {
		if sameHost(st.slots[i].info, info) {
			return true
		}
	}
	for _, s := range st.extra {
		if sameHost(s.info, info) {
			return true
		}
	}
	return false
}

// release gives a host pulled from the wrapped iterator but not handed to
// gocql back to the wrapped policy: Mark(context.Canceled), "no attempt was
// made", so a policy that counts hosts in flight from NextHost to Mark (ours
// does, os_s) stays balanced, and ours records no measurement for it.
func release(sel gocql.SelectedHost) { sel.Mark(context.Canceled) }

// pull returns the wrapped iterator's next host that is up and not yet
// used by this execution; the hosts it skips are released.
func (st *execState) pull() gocql.SelectedHost {
	if st.spent {
		st.it, st.spent = st.p.inner.Pick(st.qry), false
	}
	for i := 0; i < maxSkips; i++ {
		sel := st.it()
		if sel == nil {
			return nil
		}
		if info := sel.Info(); info != nil && info.IsUp() && !st.seen(info) {
			return sel
		}
		release(sel)
	}
	return nil
}

func (st *execState) hand(sel gocql.SelectedHost) *hostSlot {
	var s *hostSlot
	if st.nslots < len(st.slots) {
		s = &st.slots[st.nslots]
		st.nslots++
	} else {
		s = new(hostSlot)
		st.extra = append(st.extra, s)
	}
	s.st, s.sel, s.info = st, sel, sel.Info()
	return s
}

func (st *execState) next() gocql.SelectedHost {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.calls++
	if st.calls > 1 {
		if st.permits > 0 {
			st.permits--
		} else if !st.hedged {
			return st.hedge()
		}
	}
	sel := st.pull()
	if sel == nil {
		if st.reserved && !st.hedged {
			st.reserved = false
			st.h.budget.Release()
		}
		return nil
	}
	return st.hand(sel)
}

// hedge picks the hedge's host: the next host of the ranking that did not
// fail within the error holdoff, else the first one that did, else none.
// Skipped hosts are released.
func (st *execState) hedge() gocql.SelectedHost {
	h := st.h
	st.hedged = true
	now := h.nowNs()
	var target, fallback gocql.SelectedHost
	for target == nil {
		sel := st.pull()
		if sel == nil {
			break
		}
		if !h.recentlyFailed(sel.Info(), now) {
			target = sel
		} else if fallback == nil {
			fallback = sel
		} else {
			release(sel)
		}
	}
	switch {
	case target == nil:
		target = fallback
	case fallback != nil:
		release(fallback)
	}
	if target == nil {
		h.noTarget.Add(1)
		if st.reserved {
			st.reserved = false
			h.budget.Release()
		}
		return nil
	}
	h.hedges.Add(1)
	if !st.reserved {
		h.unreserved.Add(1)
	}
	h.budget.Charge(now, st.reserved)
	if h.burst != nil {
		h.burst.Charge(now, false)
	}
	st.reserved = false
	st.hedgeSlot = st.hand(target)
	h.hedgesInFlight.Add(1)
	return st.hedgeSlot
}

// hostSlot is a SelectedHost handed to gocql for one execution: it passes
// everything to the wrapped policy's SelectedHost and keeps the
// execution's bookkeeping.
//
// The host is read once, when handed out: a pooled policy (policy.Pick) may
// recycle its SelectedHost after the host's last Mark.
type hostSlot struct {
	st     *execState
	sel    gocql.SelectedHost
	info   *gocql.HostInfo
	marked bool // guarded by st.mu
}

func (s *hostSlot) Info() *gocql.HostInfo { return s.info }

func (s *hostSlot) Mark(err error) {
	st := s.st
	h := st.h
	if err == nil {
		// after Mark(nil) a pooled plan must not be asked again (policy.Pick)
		st.mu.Lock()
		st.spent = true
		st.mu.Unlock()
	}
	s.sel.Mark(err)
	if isHostError(err) {
		h.hostError(s.info, h.nowNs())
	}
	st.mu.Lock()
	if err != nil {
		st.permits++
	}
	if s == st.hedgeSlot && !s.marked {
		h.hedgesInFlight.Add(-1)
	}
	s.marked = true
	if err == nil && !st.settled {
		// the first success decides the race (gocql returns the first
		// result; the loser, cancelled, is marked nil later)
		st.settled = true
		switch {
		case st.hedgeSlot == nil:
		case s == st.hedgeSlot:
			h.won.Add(1)
		default:
			h.lost.Add(1)
		}
	}
	if st.reserved && !st.hedged {
		// the first attempt ended before the hedge fired: give the token back
		st.reserved = false
		h.budget.Release()
	}
	st.mu.Unlock()
}

// isHostError says whether err says something about the host (overload,
// timeout, connection trouble) rather than about the request.
func isHostError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, gocql.ErrNotFound) {
		return false
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		switch re.Code() {
		case gocql.ErrCodeServer, gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded,
			gocql.ErrCodeBootstrapping, gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout,
			gocql.ErrCodeReadFailure, gocql.ErrCodeWriteFailure:
			return true
		}
		return false
	}
	return true
}

var (
	_ gocql.HostSelectionPolicy = (*Policy)(nil)
	_ gocql.ReadyPolicy         = readyPolicy{}
)
