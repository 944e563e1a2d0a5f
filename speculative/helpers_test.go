package speculative

import (
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/hedge"
	"github.com/tailroute/tailroute/tracker"
)

// newFakeClock returns the injectable clock of the tests.
func newFakeClock() *tracker.ManualClock { return tracker.NewManualClock(time.Hour) }

// fakeSource is a LatencySource returning a settable value.
type fakeSource struct {
	d     atomic.Int64
	ok    atomic.Bool
	lastQ atomic.Uint64 // math.Float64bits of the last q asked
	calls atomic.Int64
	fn    func(q float64) time.Duration // when set, the answer (always ok)
}

func (s *fakeSource) set(d time.Duration, ok bool) { s.d.Store(int64(d)); s.ok.Store(ok) }

func (s *fakeSource) LatencyQuantile(q float64) (time.Duration, bool) {
	s.calls.Add(1)
	s.lastQ.Store(uint64(q*1e6 + 0.5))
	if s.fn != nil {
		return s.fn(q), true
	}
	return time.Duration(s.d.Load()), s.ok.Load()
}

func newHost(ip string) *gocql.HostInfo {
	h := new(gocql.HostInfo)
	h.SetConnectAddress(net.ParseIP(ip))
	h.SetHostID("id-" + ip)
	return h
}

// fakePolicy is an inner HostSelectionPolicy whose plan is a fixed host
// list (duplicates allowed) and which records Marks.
type fakePolicy struct {
	mu    sync.Mutex
	plan  []*gocql.HostInfo
	marks map[*gocql.HostInfo][]error
	added []*gocql.HostInfo
}

func newFakePolicy(plan ...*gocql.HostInfo) *fakePolicy {
	return &fakePolicy{plan: plan, marks: map[*gocql.HostInfo][]error{}}
}

type fakeSel struct {
	p *fakePolicy
	h *gocql.HostInfo
}

func (s *fakeSel) Info() *gocql.HostInfo { return s.h }
func (s *fakeSel) Mark(err error) {
	s.p.mu.Lock()
	s.p.marks[s.h] = append(s.p.marks[s.h], err)
	s.p.mu.Unlock()
}

func (p *fakePolicy) marksOf(h *gocql.HostInfo) []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.marks[h]...)
}

func (p *fakePolicy) AddHost(h *gocql.HostInfo) {
	p.mu.Lock()
	p.added = append(p.added, h)
	p.mu.Unlock()
}
func (p *fakePolicy) RemoveHost(*gocql.HostInfo)                {}
func (p *fakePolicy) HostUp(*gocql.HostInfo)                    {}
func (p *fakePolicy) HostDown(*gocql.HostInfo)                  {}
func (p *fakePolicy) SetPartitioner(string)                     {}
func (p *fakePolicy) KeyspaceChanged(gocql.KeyspaceUpdateEvent) {}
func (p *fakePolicy) Init(*gocql.Session)                       {}
func (p *fakePolicy) IsLocal(*gocql.HostInfo) bool              { return true }
func (p *fakePolicy) Pick(gocql.ExecutableQuery) gocql.NextHost {
	p.mu.Lock()
	plan := append([]*gocql.HostInfo(nil), p.plan...)
	p.mu.Unlock()
	i := 0
	return func() gocql.SelectedHost {
		if i >= len(plan) {
			return nil
		}
		h := plan[i]
		i++
		return &fakeSel{p: p, h: h}
	}
}

// readyFake is a fakePolicy that is also a gocql.ReadyPolicy.
type readyFake struct {
	*fakePolicy
	ready bool
}

func (r *readyFake) Ready() bool { return r.ready }

// specType returns the dynamic type of the query's speculative execution
// policy (gocql has no getter), nil when unset.
func specType(q any) reflect.Type {
	v := reflect.ValueOf(q).Elem().FieldByName("spec")
	if v.IsNil() {
		return nil
	}
	return v.Elem().Type()
}

// specDelay returns the delay of the speculative policy Pick set on q.
func specDelay(q *gocql.Query) time.Duration {
	v := reflect.ValueOf(q).Elem().FieldByName("spec")
	v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem() // gocql keeps it unexported
	return v.Interface().(*hedge.Spec).Delay()
}

var (
	armedType = reflect.TypeOf(&hedge.Spec{})
	noneType  = reflect.TypeOf(gocql.NonSpeculativeExecution{})
)

// reqErr is a gocql.RequestError with a given code.
type reqErr struct{ code int }

func (e reqErr) Code() int       { return e.code }
func (e reqErr) Message() string { return "injected" }
func (e reqErr) Error() string   { return "injected request error" }
