package route

import (
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Sessions is the wiring and session state of a policy adapter: the
// ClusterConfig it is wired to (one, by Wire), the session it serves (one
// at a time, by Init) and the refusal of a second session: the served
// session keeps being served, the refused one gets no hosts (Serves). C is
// the driver's ClusterConfig type, T its Session type.
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
// first is open it calls refuse and returns false (the first stays served);
// for nil or the session already served it returns false and does nothing.
func (s *Sessions[C, T, PT]) Admit(t PT, forget, refuse func()) bool {
	if t == nil {
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

// Refuse records why a second session is not served; true the first time
// (the adapter then logs err and calls Router.Refuse).
func (s *Sessions[C, T, PT]) Refuse(err error) bool { return s.refused.CompareAndSwap(nil, &err) }

// Err returns the error given to Refuse, nil before.
func (s *Sessions[C, T, PT]) Err() error {
	if e := s.refused.Load(); e != nil {
		return *e
	}
	return nil
}

// Serves reports whether a query (the driver's statement given to Pick) is
// to get hosts: always until a session was refused; after that only the
// served session's queries (and any whose session cannot be told, which
// keeps the served session working whatever the driver's version).
func (s *Sessions[C, T, PT]) Serves(q any) bool {
	if s.refused.Load() == nil {
		return true
	}
	sp := SessionOf(q)
	return sp == nil || sp == unsafe.Pointer(s.cur.Load())
}

// sessionFields caches, per statement type, the index of its session field
// (-1: none).
var sessionFields sync.Map // reflect.Type -> int

// SessionOf returns the session that issued q, a driver statement, or nil
// when it cannot be told. The drivers' HostSelectionPolicy.Pick is given
// the statement only; both drivers' statement types (gocql's *Query and
// *Batch, the v2 driver's internal query and batch) keep their session in
// an unexported pointer field named session, read here without a copy.
func SessionOf(q any) unsafe.Pointer {
	v := reflect.ValueOf(q)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	e := v.Elem()
	i, ok := sessionFields.Load(e.Type())
	if !ok {
		i = -1
		if f, found := e.Type().FieldByName("session"); found && len(f.Index) == 1 && f.Type.Kind() == reflect.Pointer {
			i = f.Index[0]
		}
		sessionFields.Store(e.Type(), i)
	}
	if i.(int) < 0 {
		return nil
	}
	return e.Field(i.(int)).UnsafePointer()
}
