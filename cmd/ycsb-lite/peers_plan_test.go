package main

import (
	"slices"
	"testing"
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// fakeCore excludes the hosts in out and keeps the replicas' order.
type fakeCore struct {
	out  map[int32]bool
	sent []int32
}

func (f *fakeCore) Order(_ time.Duration, r []int32) int {
	slices.SortStableFunc(r, func(a, b int32) int {
		switch {
		case f.out[a] == f.out[b]:
			return 0
		case f.out[a]:
			return 1
		}
		return -1
	})
	k := 0
	for _, s := range r {
		if !f.out[s] {
			k++
		}
	}
	return k
}
func (f *fakeCore) Sent(_ time.Duration, s int32)                               { f.sent = append(f.sent, s) }
func (f *fakeCore) Done(time.Duration, int32, time.Duration, selector.Feedback) {}
func (f *fakeCore) Reset(time.Duration, int32)                                  {}
func (f *fakeCore) Excluded(_ time.Duration, s int32) bool                      { return f.out[s] }

// TestPeerPlanOrder: the C++ driver's LatencyAwareQueryPlan over a
// token-aware plan: replicas a, b, c then fallback d, e, with b and e
// excluded, is a, c, d, then b, e; every host handed out is Sent.
func TestPeerPlanOrder(t *testing.T) {
	f := &fakeCore{}
	p := newPeerState(f, nil)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		p.id(k)
	}
	f.out = map[int32]bool{p.id("b"): true, p.id("e"): true}
	plan := []string{"a", "b", "c", "*d", "*e"}
	next := func() string {
		if len(plan) == 0 {
			return ""
		}
		h := plan[0]
		plan = plan[1:]
		return h
	}
	isFallback := func(h string) bool { return h[0] == '*' }
	key := func(h string) string { return h[len(h)-1:] }
	pl := peerPlan(p, next, isFallback, key)
	var got []string
	for h := pl(); h != ""; h = pl() {
		got = append(got, key(h))
	}
	if want := []string{"a", "c", "d", "b", "e"}; !slices.Equal(got, want) {
		t.Errorf("plan %v, want %v", got, want)
	}
	if len(f.sent) != 5 {
		t.Errorf("sent %v, want every host once", f.sent)
	}
}
