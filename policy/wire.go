package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gocql/gocql"
)

// Wire installs p as cfg's host selection policy and installs its query and
// batch observers (chaining observers already set), so that the tracker
// learns each attempt's real outcome: the observer sees the attempt's error,
// where Mark sees nil for a cancelled attempt. Call it before
// cfg.CreateSession, and before wrappers of the policy such as
// speculative.Wire (they wrap the policy already installed).
//
// A Policy is wired once, to one ClusterConfig, and serves one session at a
// time (see Init). Wire replaces a HostSelectionPolicy already set (such as
// one of gocql's), but returns an error, and changes nothing, when cfg or p
// is nil, when p was already wired (to cfg or to another ClusterConfig: a
// second Wire would measure every attempt twice or share p between
// sessions), or when the policy already set wraps another (it has an Inner
// method, as the hedging policy of speculative.Wire: replacing it would
// silently turn hedging off).
func Wire(cfg *gocql.ClusterConfig, p *Policy) error {
	if cfg == nil {
		return errors.New("policy: Wire: cfg = nil, want the *gocql.ClusterConfig the session is created from")
	}
	if p == nil {
		return errors.New("policy: Wire: p = nil, want a *Policy from policy.New")
	}
	if w, ok := cfg.PoolConfig.HostSelectionPolicy.(wrapper); ok {
		return fmt.Errorf("policy: Wire: cfg.PoolConfig.HostSelectionPolicy is already %T wrapping %T "+
			"(e.g. speculative.Wire): call policy.Wire first, then the wrapper, which wraps the policy installed", w, w.Inner())
	}
	if !p.wired.CompareAndSwap(nil, cfg) {
		if p.wired.Load() == cfg {
			return errors.New("policy: Wire: p is already wired to this cfg; call Wire once")
		}
		return errors.New("policy: Wire: p is already wired to another gocql.ClusterConfig; " +
			"a Policy serves one session: create one Policy per ClusterConfig with policy.New")
	}
	cfg.PoolConfig.HostSelectionPolicy = p
	o := &observer{p: p, next: cfg.QueryObserver, nextBatch: cfg.BatchObserver}
	cfg.QueryObserver = o
	cfg.BatchObserver = o
	p.observed.Store(true)
	return nil
}

// wrapper is a HostSelectionPolicy wrapping another (speculative.Policy).
type wrapper interface {
	Inner() gocql.HostSelectionPolicy
}

// Init is called by gocql when a session starts; the policy uses the
// session's keyspace metadata for replica placement.
//
// A Policy serves one session at a time, as every gocql HostSelectionPolicy
// (gocql's PoolConfig.HostSelectionPolicy doc). A new session after the
// previous one was closed (a ClusterConfig reused to reconnect) is served
// from a clean slate: hosts and their statistics are forgotten and come
// again from the new session. A second session while the first is open is
// refused: the policy cannot tell the two sessions' queries apart, so from
// then on it returns no hosts to either (their queries fail with
// gocql.ErrNoConnections), logs why through the Logger of the ClusterConfig
// given to Wire (else gocql.Logger), and Err returns the error.
func (p *Policy) Init(s *gocql.Session) {
	if s == nil || p.refused.Load() != nil {
		return
	}
	for {
		old := p.session.Load()
		if old == s {
			return
		}
		if old != nil && !old.Closed() {
			p.refuse()
			return
		}
		if p.session.CompareAndSwap(old, s) {
			if old != nil {
				p.forgetHosts()
			}
			break
		}
	}
	if p.cfg.keyspaceMetadata == nil {
		f := s.KeyspaceMetadata
		p.getKS.Store(&f)
	}
	if p.load != nil {
		p.load.start(s)
	}
}

func (p *Policy) refuse() {
	err := fmt.Errorf("policy: a second gocql.Session started with this Policy while the first is open; "+
		"a Policy serves one session (as every gocql HostSelectionPolicy), and it now returns no hosts "+
		"to either session (queries fail with %q): give each session its own Policy "+
		"(policy.New and policy.Wire on the session's own ClusterConfig)", gocql.ErrNoConnections)
	if !p.refused.CompareAndSwap(nil, &err) {
		return
	}
	p.logf("%v", err)
	p.mu.Lock()
	p.rebuildLocked()
	p.mu.Unlock()
}

// forgetHosts drops every host and keyspace placement (a new session
// after the previous one closed).
func (p *Policy) forgetHosts() {
	p.ksMu.Lock()
	defer p.ksMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.entries {
		p.tr.Remove(e.id)
	}
	p.entries = nil
	clear(p.reps)
	p.rebuildLocked()
}

// Err reports problems found after New while serving a session: a second
// session sharing the policy (see Init; permanent, the policy then serves
// no hosts) and a local DC that no host is in (see WithLocalDC; the policy
// falls back, and the problem lasts while no host is in it). nil when there
// are none.
func (p *Policy) Err() error {
	var errs []error
	if e := p.refused.Load(); e != nil {
		errs = append(errs, *e)
	}
	if e := p.dcProblem.Load(); e != nil {
		errs = append(errs, *e)
	}
	return errors.Join(errs...)
}

// logf logs through the Logger of the ClusterConfig given to Wire, else
// through gocql.Logger, as gocql logs its own messages.
func (p *Policy) logf(format string, a ...any) {
	var l gocql.StdLogger = gocql.Logger
	if c := p.wired.Load(); c != nil && c.Logger != nil {
		l = c.Logger
	}
	l.Printf("tailroute/policy: "+format, a...)
}

// resolveLocalDCLocked sets the effective local DC from the configured one
// and the hosts' DCs (see WithLocalDC), marks each entry local or remote, and
// logs when the effective local DC changes (p.mu held).
func (p *Policy) resolveLocalDCLocked() {
	want := p.cfg.localDC
	eff, problem := want, error(nil)
	if want != "" && len(p.entries) > 0 {
		var dcs []string
		for _, e := range p.entries {
			if !slices.Contains(dcs, e.dc) {
				dcs = append(dcs, e.dc)
			}
		}
		slices.Sort(dcs)
		if !slices.Contains(dcs, want) {
			var folded []string
			for _, dc := range dcs {
				if strings.EqualFold(dc, want) {
					folded = append(folded, dc)
				}
			}
			quoted := make([]string, len(dcs))
			for i, dc := range dcs {
				quoted[i] = fmt.Sprintf("%q", dc)
			}
			if len(folded) == 1 {
				eff = folded[0]
				problem = fmt.Errorf("policy: WithLocalDC(%q): no host is in data center %q (the hosts' data centers: %s); "+
					"using %q, which differs only in case: fix the name", want, want, strings.Join(quoted, ", "), eff)
			} else {
				eff = ""
				problem = fmt.Errorf("policy: WithLocalDC(%q): no host is in data center %q (the hosts' data centers: %s); "+
					"every host is treated as local until a host of %q appears: fix the name", want, want, strings.Join(quoted, ", "), want)
			}
		}
	}
	changed := *p.localDC.Load() != eff
	if changed {
		p.localDC.Store(&eff)
	}
	switch {
	case problem != nil:
		p.dcProblem.Store(&problem) // with the latest list of data centers
		if changed {
			p.logf("%v", problem)
		}
	case p.dcProblem.Swap(nil) != nil:
		p.logf("WithLocalDC(%q): hosts of data center %q found", want, want)
	}
	for i, e := range p.entries {
		if local := eff == "" || e.dc == eff; e.local != local {
			c := *e
			c.local = local
			p.entries[i] = &c
		}
	}
}
