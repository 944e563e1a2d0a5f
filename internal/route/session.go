package route

import (
	"errors"
	"sync/atomic"
)

// Sessions is the wiring and session state of a policy adapter: the
// ClusterConfig it is wired to (one, by Wire), the session it serves (one
// at a time, by Init) and the refusal of a second session. C is the
// driver's ClusterConfig type, T its Session type.
type Sessions[C, T any, PT interface {
	*T
	Closed() bool
}] struct {
	wired   atomic.Pointer[C]
	cur     atomic.Pointer[T]
	refused atomic.Pointer[error]
}

// Wire records cfg as the ClusterConfig the policy is wired to; an error
// when the policy was wired before (to cfg or to another ClusterConfig: a
// second Wire would measure every attempt twice or share the policy between
// sessions).
func (s *Sessions[C, T, PT]) Wire(cfg *C) error {
	if s.wired.CompareAndSwap(nil, cfg) {
		return nil
	}
	if s.wired.Load() == cfg {
		return errors.New("policy: Wire: p is already wired to this cfg; call Wire once")
	}
	return errors.New("policy: Wire: p is already wired to another gocql.ClusterConfig; " +
		"a Policy serves one session: create one Policy per ClusterConfig with policy.New")
}

// Wired returns the ClusterConfig given to Wire (nil before).
func (s *Sessions[C, T, PT]) Wired() *C { return s.wired.Load() }

// Admit decides what Init does with session t, as a Policy serves one
// session at a time (as every driver HostSelectionPolicy). It reports
// whether the adapter starts serving t: true for the first session, and for
// a new one after the previous one closed, when forget is called first (the
// new session is served from a clean slate). For a second session while the
// first is open it calls refuse and returns false; for nil, the session
// already served, or after a refusal it returns false and does nothing.
func (s *Sessions[C, T, PT]) Admit(t PT, forget, refuse func()) bool {
	if t == nil || s.refused.Load() != nil {
		return false
	}
	for {
		old := s.cur.Load()
		if old == (*T)(t) {
			return false
		}
		if old != nil && !PT(old).Closed() {
			refuse()
			return false
		}
		if s.cur.CompareAndSwap(old, (*T)(t)) {
			if old != nil {
				forget()
			}
			return true
		}
	}
}

// Refuse records why the policy serves no session any more; true the first
// time (the adapter then logs err and calls Router.Refuse).
func (s *Sessions[C, T, PT]) Refuse(err error) bool { return s.refused.CompareAndSwap(nil, &err) }

// Err returns the error given to Refuse, nil before.
func (s *Sessions[C, T, PT]) Err() error {
	if e := s.refused.Load(); e != nil {
		return *e
	}
	return nil
}
