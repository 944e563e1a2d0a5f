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

// Admission is what Init does with a session.
type Admission int

const (
	// Ignore: nil, the session already served, or the policy refused one.
	Ignore Admission = iota
	// Start serving the first session.
	Start
	// Restart: serve a new session after the previous one closed, from a
	// clean slate (ForgetHosts).
	Restart
	// Refuse: a second session while the first is open; the adapter calls
	// Refuse with its error.
	Refuse
)

// Admit decides what Init does with session t: a Policy serves one session
// at a time, as every driver HostSelectionPolicy.
func (s *Sessions[C, T, PT]) Admit(t PT) Admission {
	if t == nil || s.refused.Load() != nil {
		return Ignore
	}
	for {
		old := s.cur.Load()
		if old == (*T)(t) {
			return Ignore
		}
		if old != nil && !PT(old).Closed() {
			return Refuse
		}
		if s.cur.CompareAndSwap(old, (*T)(t)) {
			if old != nil {
				return Restart
			}
			return Start
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
