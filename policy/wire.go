package policy

import (
	"errors"
	"fmt"

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
	if err := p.sess.Wire(cfg); err != nil {
		return err
	}
	cfg.PoolConfig.HostSelectionPolicy = p
	o := &observer{p: p, next: cfg.QueryObserver, nextBatch: cfg.BatchObserver}
	cfg.QueryObserver = o
	cfg.BatchObserver = o
	p.r.SetObserved()
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
// refused (gocql's Init cannot return an error; Wire refuses a second
// ClusterConfig): the first session keeps being served as before, the
// second gets no hosts (its queries fail with gocql.ErrNoConnections), the
// refusal is logged, with the fix (one Policy per session), through the
// Logger of the ClusterConfig given to Wire (else the driver's default
// logger), and Err returns it.
func (p *Policy) Init(s *gocql.Session) {
	if p.sess.Admit(s, p.r.ForgetHosts, p.refuse) {
		p.r.SetKeyspaceFunc(keyspaceFunc(s.KeyspaceMetadata))
		p.startServerLoad(s)
	}
}

func (p *Policy) refuse() {
	err := fmt.Errorf("policy: a second gocql.Session started with this Policy while the first is open; "+
		"a Policy serves one session (as every gocql HostSelectionPolicy): the first keeps being served, "+
		"the second gets no hosts (its queries fail with %q). Fix: give each session its own Policy "+
		"(policy.New and policy.Wire on the session's own ClusterConfig)", gocql.ErrNoConnections)
	p.sess.Refuse(err) // Err keeps the first refusal
	p.logf("%v", err)
	p.r.Refuse()
}

// Err reports problems found after New while serving a session: a second
// session sharing the policy (see Init; it stays reported, and that second
// session gets no hosts), a local DC that no host is in (see WithLocalDC; the policy
// falls back, and the problem lasts while no host is in it) and a local rack
// that no host of the local DC is in (see WithLocalRack; no replica is
// preferred while it lasts). nil when there are none.
func (p *Policy) Err() error {
	return errors.Join(p.sess.Err(), p.r.DCProblem(), p.r.RackProblem())
}
