package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/selector"
)

// fakeSource stands in for gocql's token-aware policy: Pick yields the
// replicas, then the other hosts marked as fallback (as markedFallback does).
type fakeSource struct {
	gocql.HostSelectionPolicy // nil: other methods are not used
	replicas, others          []*gocql.HostInfo
}

type fakeSelected struct{ h *gocql.HostInfo }

func (f fakeSelected) Info() *gocql.HostInfo { return f.h }
func (f fakeSelected) Mark(error)            {}

func (s *fakeSource) Pick(gocql.ExecutableQuery) gocql.NextHost {
	i := 0
	return func() gocql.SelectedHost {
		defer func() { i++ }()
		switch {
		case i < len(s.replicas):
			return fakeSelected{s.replicas[i]}
		case i < len(s.replicas)+len(s.others):
			return fallbackHost{fakeSelected{s.others[i-len(s.replicas)]}}
		}
		return nil
	}
}

func dsHostInfo(ip string) *gocql.HostInfo {
	h := &gocql.HostInfo{}
	h.SetConnectAddress(net.ParseIP(ip))
	h.SetHostID(ip)
	return h
}

// testDatastax returns the policy over nReplicas replicas ("10.0.0.1"..)
// and nOthers non-replicas ("10.0.1.1"..) with a manual clock.
func testDatastax(nReplicas, nOthers int) (*datastaxPolicy, []*gocql.HostInfo, *time.Duration) {
	src := &fakeSource{}
	for i := range nReplicas {
		src.replicas = append(src.replicas, dsHostInfo("10.0.0."+string(rune('1'+i))))
	}
	for i := range nOthers {
		src.others = append(src.others, dsHostInfo("10.0.1."+string(rune('1'+i))))
	}
	p := newDatastaxPolicy("", 1)
	p.HostSelectionPolicy = src
	clock := new(time.Duration)
	*clock = 10 * time.Second
	p.now = func() time.Duration { return *clock }
	return p, src.replicas, clock
}

// dsInFlight, dsResponses and dsUnhealthy read host h's state in c's rule
// now: requests in flight, responses recorded (up to two), the busy rule.
func dsInFlight[H dsNode](c *dsCore, h H) (n int) {
	c.with(hostKey(h), func(id int32, now time.Duration) { n = c.rule.InFlight(now, id) })
	return n
}

func dsResponses[H dsNode](c *dsCore, h H) (n int) {
	c.with(hostKey(h), func(id int32, _ time.Duration) { n = c.rule.Responses(id) })
	return n
}

func dsUnhealthy[H dsNode](c *dsCore, h H) (bad bool) {
	c.with(hostKey(h), func(id int32, now time.Duration) { bad = c.rule.Unhealthy(now, id) })
	return bad
}

// dsSetInFlight sets host h's in-flight count to n (a Reset, then n
// requests Sent); its responses stay.
func dsSetInFlight[H dsNode](c *dsCore, h H, n int) {
	c.with(hostKey(h), func(id int32, now time.Duration) {
		c.rule.Reset(now, id)
		for range n {
			c.rule.Sent(now, id)
		}
	})
}

// dsRespond records a response of host h now, its in-flight count kept.
func dsRespond[H dsNode](c *dsCore, h H) {
	c.with(hostKey(h), func(id int32, now time.Duration) {
		c.rule.Sent(now, id)
		c.rule.Done(now, id, 0, selector.Feedback{})
	})
}

// dsPlan walks a whole plan and returns the host IDs in order; it then sets
// every host's in-flight count back to what it was, without recording a
// response, so the counts and health a test set up stay as they were.
func dsPlan(p *datastaxPolicy) []string {
	src := p.HostSelectionPolicy.(*fakeSource)
	hosts := append(append([]*gocql.HostInfo(nil), src.replicas...), src.others...)
	before := make([]int, len(hosts))
	for i, h := range hosts {
		before[i] = dsInFlight(p.dsCore, h)
	}
	next := p.Pick(nil)
	var ids []string
	for h := next(); h != nil; h = next() {
		ids = append(ids, h.Info().HostID())
	}
	for i, h := range hosts {
		dsSetInFlight(p.dsCore, h, before[i])
	}
	return ids
}

func TestDatastaxOneReplicaThenFallback(t *testing.T) {
	p, _, _ := testDatastax(1, 3)
	got := dsPlan(p)
	want := []string{"10.0.0.1", "10.0.1.1", "10.0.1.2", "10.0.1.3"}
	if len(got) != len(want) {
		t.Fatalf("plan %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("plan %v, want %v", got, want)
		}
	}
}

// Two replicas: shuffled only, in-flight counts are not compared (the
// driver compares only when there are three or more).
func TestDatastaxTwoReplicasShuffleOnly(t *testing.T) {
	p, rs, _ := testDatastax(2, 2)
	dsSetInFlight(p.dsCore, rs[0], 50)
	first := map[string]int{}
	for range 400 {
		plan := dsPlan(p)
		first[plan[0]]++
		if plan[2] != "10.0.1.1" || plan[3] != "10.0.1.2" {
			t.Fatalf("non-replicas must follow the replicas: %v", plan)
		}
	}
	if first["10.0.0.1"] < 120 || first["10.0.0.2"] < 120 {
		t.Fatalf("first replica counts %v: want both about half (shuffle, no in-flight comparison)", first)
	}
}

// Three replicas: the first two (after the shuffle) are compared by
// in-flight count, so the most loaded replica is never first and the first
// never has more in flight than the second.
func TestDatastaxPowerOfTwoChoices(t *testing.T) {
	p, rs, _ := testDatastax(3, 0)
	load := map[string]int64{"10.0.0.1": 1, "10.0.0.2": 5, "10.0.0.3": 9}
	for _, h := range rs {
		dsSetInFlight(p.dsCore, h, int(load[h.HostID()]))
	}
	first := map[string]int{}
	for range 600 {
		plan := dsPlan(p)
		if load[plan[0]] > load[plan[1]] {
			t.Fatalf("plan %v: first has more in flight than second (%v)", plan, load)
		}
		first[plan[0]]++
	}
	// P(first = least loaded) = 2/3, P(middle) = 1/3, P(most loaded) = 0.
	if first["10.0.0.3"] != 0 || first["10.0.0.1"] < 300 || first["10.0.0.2"] < 100 {
		t.Fatalf("first counts %v, want about 400/200/0", first)
	}
}

// The busy-node rule: >= 10 in flight and fewer than two responses in the
// last 200 ms moves a replica to the end while most replicas are healthy.
func TestDatastaxBusyReplicaMovedBack(t *testing.T) {
	p, rs, clock := testDatastax(3, 1)
	busy := rs[2]
	dsSetInFlight(p.dsCore, busy, 10)
	for range 200 {
		plan := dsPlan(p)
		if plan[2] != "10.0.0.3" || plan[3] != "10.0.1.1" {
			t.Fatalf("busy replica without responses must be the last replica: %v", plan)
		}
	}
	// Two responses within the window: healthy again, so it can be second
	// (it still loses the in-flight comparison, so never first).
	dsRespond(p.dsCore, busy)
	*clock += 50 * time.Millisecond
	dsRespond(p.dsCore, busy)
	*clock += 100 * time.Millisecond // the older response is 150 ms old
	second := 0
	for range 300 {
		plan := dsPlan(p)
		if plan[0] == "10.0.0.3" {
			t.Fatalf("busy replica first: %v", plan)
		}
		if plan[1] == "10.0.0.3" {
			second++
		}
	}
	if second < 100 {
		t.Fatalf("healthy busy replica second %d of 300 times, want about 200", second)
	}
	// 250 ms after the older response: insufficient response rate again.
	*clock += 100 * time.Millisecond
	if !dsUnhealthy(p.dsCore, busy) {
		t.Fatal("older of the last two responses is 250 ms old: want unhealthy")
	}
	// Below 10 in flight nothing is unhealthy.
	dsSetInFlight(p.dsCore, busy, 9)
	if dsUnhealthy(p.dsCore, busy) {
		t.Fatal("9 in flight: want healthy")
	}
}

// Unhealthy replicas are only moved while they are fewer than half.
func TestDatastaxUnhealthyMajorityNotMoved(t *testing.T) {
	p, rs, _ := testDatastax(3, 0)
	dsSetInFlight(p.dsCore, rs[0], 10)
	dsSetInFlight(p.dsCore, rs[1], 20)
	healthyLast := 0
	for range 300 {
		if plan := dsPlan(p); plan[2] == "10.0.0.3" {
			healthyLast++
		}
	}
	// Without moving, the healthy replica is last whenever the shuffle
	// puts it there (1/3); moving the two unhealthy ones would make it first always.
	if healthyLast < 50 {
		t.Fatalf("healthy replica last %d of 300 times: 2 of 3 unhealthy replicas must not be moved", healthyLast)
	}
}

// In flight counts from NextHost to the first Mark; a lost attempt is
// forgotten when the host goes down.
func TestDatastaxInFlightAccounting(t *testing.T) {
	p, rs, _ := testDatastax(1, 0)
	s := rs[0]
	h := p.Pick(nil)()
	if got := dsInFlight(p.dsCore, s); got != 1 {
		t.Fatalf("in flight after NextHost %d, want 1", got)
	}
	h.Mark(nil)
	h.Mark(nil) // a retry on the same host: one more response, not one less in flight
	if got := dsInFlight(p.dsCore, s); got != 0 {
		t.Fatalf("in flight after Mark %d, want 0", got)
	}
	if n := dsResponses(p.dsCore, s); n != 2 {
		t.Fatalf("responses recorded %d, want 2", n)
	}
	p.Pick(nil)()
	p.reset(rs[0])
	if got := dsInFlight(p.dsCore, s); got != 0 {
		t.Fatalf("in flight after reset %d, want 0", got)
	}
}

// With the observer (wireDatastax) an attempt is in flight until the node's
// response: a cancelled attempt or a client timeout is not a response and
// stays in flight as an orphan until the node answers a later request, or
// until its estimated release time.
func TestDatastaxObservedInFlightUntilResponse(t *testing.T) {
	p, rs, clock := testDatastax(1, 0)
	cfg := gocql.NewCluster("127.0.0.1")
	cfg.Timeout = time.Second
	wireDatastax(cfg, p)
	if cfg.PoolConfig.HostSelectionPolicy != p || cfg.QueryObserver == nil || p.maxOrphan != time.Second {
		t.Fatal("wireDatastax did not install the policy and its observer")
	}
	s := rs[0]
	attempt := func(elapsed time.Duration, err error) {
		h := p.Pick(nil)()
		*clock += elapsed
		cfg.QueryObserver.ObserveQuery(context.Background(), gocql.ObservedQuery{Host: rs[0], Start: time.Now().Add(-elapsed), End: time.Now(), Err: err})
		h.Mark(nil) // gocql marks a cancelled attempt with nil: must change nothing
	}
	attempt(30*time.Millisecond, context.Canceled)
	attempt(40*time.Millisecond, gocql.ErrTimeoutNoResponse)
	if got := dsInFlight(p.dsCore, s); got != 2 {
		t.Fatalf("in flight after a cancelled attempt and a client timeout %d, want 2 (orphans until the response)", got)
	}
	if n := dsResponses(p.dsCore, s); n != 0 {
		t.Fatalf("responses recorded %d, want 0: a cancelled attempt or a timeout is not a response", n)
	}
	// A response to a request sent after both releases them.
	attempt(time.Millisecond, nil)
	if got := dsInFlight(p.dsCore, s); got != 0 {
		t.Fatalf("in flight after a later response %d, want 0", got)
	}
	if n := dsResponses(p.dsCore, s); n != 1 {
		t.Fatalf("responses %d, want 1", n)
	}
	// An error the node sent is a response too.
	attempt(time.Millisecond, &gocql.RequestErrReadTimeout{})
	if n := dsResponses(p.dsCore, s); n != 2 {
		t.Fatalf("responses %d, want 2 (node error is a response)", n)
	}
	// Without a later response an orphan is released after twice its elapsed
	// time or twice the node's mean response time, whichever is longer.
	attempt(50*time.Millisecond, context.DeadlineExceeded)
	if got := dsInFlight(p.dsCore, s); got != 1 {
		t.Fatalf("in flight %d, want 1", got)
	}
	*clock += 99 * time.Millisecond
	if got := dsInFlight(p.dsCore, s); got != 1 {
		t.Fatalf("in flight 99ms after the cancel %d, want 1", got)
	}
	*clock += 2 * time.Millisecond
	if got := dsInFlight(p.dsCore, s); got != 0 {
		t.Fatalf("in flight after the release estimate %d, want 0", got)
	}
	// Ten orphans make the host busy for the busy rule, as the driver's
	// orphaned stream ids do.
	*clock += 300 * time.Millisecond // the last responses are old
	for range 10 {
		attempt(0, context.Canceled)
	}
	if !dsUnhealthy(p.dsCore, s) {
		t.Fatal("10 orphans and no recent responses: want unhealthy")
	}
	p.reset(rs[0])
	if got := dsInFlight(p.dsCore, s); got != 0 {
		t.Fatalf("in flight after reset %d, want 0", got)
	}
}
