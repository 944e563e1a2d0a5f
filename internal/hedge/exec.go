package hedge

import (
	"context"
	"sync"
)

// Host is a driver's host handle (*gocql.HostInfo of either driver).
type Host interface {
	comparable
	IsUp() bool
	HostID() string
}

// Selected is a driver's SelectedHost interface.
type Selected[H Host] interface {
	comparable
	Info() H
	Mark(error)
}

// Decision is what Admit decided for one execution.
type Decision int

const (
	// Pass: leave the query alone (not eligible, or its speculative policy
	// cannot be set); the adapter returns the wrapped policy's plan.
	Pass Decision = iota
	// Deny: eligible but not armed; the adapter sets "no speculation".
	Deny
	// Armed: a budget token is held; the adapter sets the Spec the
	// Hedger gives for it (SpecFor) and returns an Exec's NextHost.
	Armed
	// Deferred: Armed, with the hedge deferred by the load rule
	// (DeferredDelay).
	Deferred
)

// Admit counts one execution and decides whether it is armed. eligible
// says the query is idempotent and not opted out, settable that the
// adapter can set its speculative execution policy, up how many hosts are
// up. An Armed or Deferred result counts the execution as armed.
func (h *Hedger) Admit(eligible, settable bool, up int32) Decision {
	h.executions.Add(1)
	now := h.nowNs()
	h.budget.Request(now)
	if h.burst != nil {
		h.burst.Request(now)
	}
	if !eligible {
		return Pass
	}
	h.eligible.Add(1)
	h.maybeRefresh(now)
	r := h.arm(now, up)
	if r != armOK {
		h.suppressed[r].Add(1)
		return Deny
	}
	if !settable {
		h.budget.Release()
		return Pass
	}
	h.armed.Add(1)
	if d := h.deferral(now); d != deferNone {
		h.deferred[d].Add(1)
		return Deferred
	}
	return Armed
}

// arm decides whether an eligible execution is armed, in this order: at
// least 2 hosts up, not one of many clients (load rule), the burst cap,
// the budget. armOK holds a budget token.
func (h *Hedger) arm(now int64, up int32) Reason {
	if up < 2 {
		return ReasonFewHosts
	}
	if h.oneOfMany(now) {
		return ReasonManyClients
	}
	if !h.burstAllows(now) {
		return ReasonBurst
	}
	if h.budget.TryReserve(now) {
		return armOK
	}
	return ReasonBudget
}

// Planner gives an Exec the wrapped policy's plans and the driver's error
// classification; an adapter builds one per wrapped policy.
type Planner[H Host, S Selected[H], Q any] struct {
	H *Hedger
	// Pick returns the wrapped policy's plan for q.
	Pick func(q Q) func() S
	// HostError says whether err says something about the host (overload,
	// timeout, connection trouble) rather than about the request.
	HostError func(err error) bool
}

// maxSkips bounds how many unusable hosts (down or already used) one
// NextHost call skips, against iterators that never end.
const maxSkips = 1024

// Exec is the per-execution state behind the NextHost of an armed
// execution. The driver serialises NextHost calls but Mark comes from the
// attempts' goroutines, so fields are guarded by mu (never contended by
// more than the 2 attempts of one execution).
type Exec[H Host, S Selected[H], Q any] struct {
	pl  *Planner[H, S, Q]
	qry Q
	it  func() S

	mu        sync.Mutex
	calls     int
	permits   int  // attempts that ended with an error and may ask for the next host
	reserved  bool // budget token held
	deferred  bool // armed with the deferred delay: its hedge's outcome is not recorded
	hedged    bool
	spent     bool           // a host of it was marked nil: a pooled plan (policy.Pick) may be recycled, take a fresh one
	settled   bool           // an attempt has succeeded
	hedgeSlot *Slot[H, S, Q] // the hedge's slot once it fired
	slots     [3]Slot[H, S, Q]
	nslots    int
	extra     []*Slot[H, S, Q]
}

// NewExec starts the state of an execution Admit armed (d: Armed or
// Deferred).
func (pl *Planner[H, S, Q]) NewExec(q Q, d Decision) *Exec[H, S, Q] {
	return &Exec[H, S, Q]{pl: pl, qry: q, it: pl.Pick(q), reserved: true, deferred: d == Deferred}
}

func sameHost[H Host](a, b H) bool {
	if a == b {
		return true
	}
	id := a.HostID()
	return id != "" && id == b.HostID()
}

func (st *Exec[H, S, Q]) seen(info H) bool {
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
// the driver back to the wrapped policy: Mark(context.Canceled), "no attempt
// was made", so a policy that counts hosts in flight from NextHost to Mark
// (ours does, os_s) stays balanced, and ours records no measurement for it.
func release[H Host, S Selected[H]](sel S) { sel.Mark(context.Canceled) }

// pull returns the wrapped iterator's next host that is up and not yet
// used by this execution; the hosts it skips are released.
func (st *Exec[H, S, Q]) pull() (S, bool) {
	var zeroS S
	var zeroH H
	if st.spent {
		st.it, st.spent = st.pl.Pick(st.qry), false
	}
	for i := 0; i < maxSkips; i++ {
		sel := st.it()
		if sel == zeroS {
			return zeroS, false
		}
		if info := sel.Info(); info != zeroH && info.IsUp() && !st.seen(info) {
			return sel, true
		}
		release[H](sel)
	}
	return zeroS, false
}

func (st *Exec[H, S, Q]) hand(sel S) *Slot[H, S, Q] {
	var s *Slot[H, S, Q]
	if st.nslots < len(st.slots) {
		s = &st.slots[st.nslots]
		st.nslots++
	} else {
		s = new(Slot[H, S, Q])
		st.extra = append(st.extra, s)
	}
	s.st, s.sel, s.info = st, sel, sel.Info()
	return s
}

// Next is the execution's NextHost: the primary attempt's host first, then
// a retry's (after an attempt ended with an error) or the hedge's (the
// driver's speculative timer fired). nil when the plan is exhausted; the
// adapter returns a nil interface then.
func (st *Exec[H, S, Q]) Next() *Slot[H, S, Q] {
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
	sel, ok := st.pull()
	if !ok {
		if st.reserved && !st.hedged {
			st.reserved = false
			st.pl.H.budget.Release()
		}
		return nil
	}
	return st.hand(sel)
}

// hedge picks the hedge's host: the next host of the ranking that did not
// fail within the error holdoff, else the first one that did, else none.
// Skipped hosts are released.
func (st *Exec[H, S, Q]) hedge() *Slot[H, S, Q] {
	h := st.pl.H
	st.hedged = true
	now := h.nowNs()
	var target, fallback S
	var haveTarget, haveFallback bool
	for !haveTarget {
		sel, ok := st.pull()
		if !ok {
			break
		}
		if !h.recentlyFailed(sel.Info(), now) {
			target, haveTarget = sel, true
		} else if !haveFallback {
			fallback, haveFallback = sel, true
		} else {
			release[H](sel)
		}
	}
	switch {
	case !haveTarget:
		target, haveTarget = fallback, haveFallback
	case haveFallback:
		release[H](fallback)
	}
	if !haveTarget {
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

// Slot is a SelectedHost handed to the driver for one execution: it passes
// everything to the wrapped policy's SelectedHost and keeps the
// execution's bookkeeping. *Slot implements the driver's SelectedHost.
//
// The host is read once, when handed out: a pooled policy (policy.Pick) may
// recycle its SelectedHost after the host's last Mark.
type Slot[H Host, S Selected[H], Q any] struct {
	st     *Exec[H, S, Q]
	sel    S
	info   H
	marked bool // guarded by st.mu
}

// Info returns the host.
func (s *Slot[H, S, Q]) Info() H { return s.info }

// Mark passes err to the wrapped policy's SelectedHost and settles the
// execution's bookkeeping (retry permits, the hedge race, the budget token).
func (s *Slot[H, S, Q]) Mark(err error) {
	st := s.st
	h := st.pl.H
	if err == nil {
		// after Mark(nil) a pooled plan must not be asked again (policy.Pick)
		st.mu.Lock()
		st.spent = true
		st.mu.Unlock()
	}
	s.sel.Mark(err)
	var zeroH H
	if s.info != zeroH && st.pl.HostError(err) {
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
		// the first success decides the race (the driver returns the first
		// result; the loser, cancelled, is marked nil later)
		st.settled = true
		switch {
		case st.hedgeSlot == nil:
		case s == st.hedgeSlot:
			h.won.Add(1)
			if !st.deferred {
				h.outcomes.add(h.nowNs(), true)
			}
		default:
			h.lost.Add(1)
			if !st.deferred {
				h.outcomes.add(h.nowNs(), false)
			}
		}
	}
	if st.reserved && !st.hedged {
		// the first attempt ended before the hedge fired: give the token back
		st.reserved = false
		h.budget.Release()
	}
	st.mu.Unlock()
}
