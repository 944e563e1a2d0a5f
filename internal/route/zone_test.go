package route

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

// rackHost is a token-less host of dc1 in a rack of its own choosing.
type rackHost struct{ id, rack string }

func (h *rackHost) HostID() string                { return h.id }
func (h *rackHost) ConnectAddressAndPort() string { return h.id + ":9042" }
func (h *rackHost) DataCenter() string            { return "dc1" }
func (h *rackHost) Rack() string                  { return h.rack }
func (h *rackHost) Tokens() []string              { return nil }
func (h *rackHost) IsUp() bool                    { return true }

type rackSel = *Selection[*rackHost, any]

// zoneRouter returns a router over h0 (rack r1), h1 (r2) and h2 (r3) on a
// manual clock, without rate control, probes or polls, so the scores and
// the rules alone order them, and with Mark measuring nothing (as with an
// observer); logs are collected in *logs.
func zoneRouter(t *testing.T, logs *[]string, opts ...tailroute.Option) (*Router[*rackHost, any], *tracker.ManualClock) {
	t.Helper()
	clk := tracker.NewManualClock(10 * time.Second)
	base := []tailroute.Option{tailroute.WithClock(clk), tailroute.WithRateControl(false),
		tailroute.WithProbe(time.Hour), tailroute.WithServerLoad(false)}
	r, err := New[*rackHost, any](Hooks{
		Classify: func(err error) track.Outcome { return track.Success },
		Logf:     func(f string, a ...any) { *logs = append(*logs, fmt.Sprintf(f, a...)) },
	}, append(base, opts...)...)
	require.NoError(t, err)
	r.AddHosts([]*rackHost{{"h0", "r1"}, {"h1", "r2"}, {"h2", "r3"}})
	r.SetObserved() // Mark measures nothing: the states stay as the test makes them
	return r, clk
}

// observe gives host id n answers of latency d.
func observe(r *Router[*rackHost, any], id string, n int, d time.Duration) {
	tr := r.Tracker()
	for i := 0; i < n; i++ {
		tr.Host(id).Observe(tr.Now(), d, track.Success)
	}
}

// firsts counts the first host of n plans (each marked at once).
func firsts(r *Router[*rackHost, any], n int) map[string]int {
	out := map[string]int{}
	for i := 0; i < n; i++ {
		next := r.Pick(Query{})
		h := next().(rackSel)
		out[h.Info().id]++
		h.Mark(nil)
	}
	return out
}

// The in-zone replica goes first while its expected response is within
// the bound of the best replica's (1.2 ms against 1 ms), not beyond it
// (2 ms with bound 1.5), and with WithZoneBound(3) again.
func TestZoneRuleKeepsTheLocalReplicaWithinTheBound(t *testing.T) {
	var logs []string
	for _, tc := range []struct {
		name  string
		local time.Duration
		opts  []tailroute.Option
		kept  bool
	}{
		{"close", 1200 * time.Microsecond, nil, true},
		{"slow", 2 * time.Millisecond, nil, false},
		{"slow, bound 3", 2 * time.Millisecond, []tailroute.Option{tailroute.WithZoneBound(3)}, true},
		{"no rack", 1200 * time.Microsecond, []tailroute.Option{tailroute.WithLocalRack("")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := zoneRouter(t, &logs, append([]tailroute.Option{tailroute.WithLocalRack("r1")}, tc.opts...)...)
			observe(r, "h0", 30, tc.local)
			observe(r, "h1", 30, time.Millisecond)
			observe(r, "h2", 30, time.Millisecond)
			got := firsts(r, 200)
			if tc.kept {
				assert.Equal(t, 200, got["h0"], "%v", got)
			} else {
				assert.Zero(t, got["h0"], "%v", got)
			}
		})
	}
}

// A local replica that owes an answer is read as taking at least its
// silence (R_s 1 ms, silent 2 ms: expected 5 ms against the others' 3 ms,
// R_s plus the tail term 2/mu_s) and so left past the bound (4.5 ms), well
// before WithStall's threshold (10 ms); silent 1 ms it is kept. One that
// fails is left at once, however close its estimate.
func TestZoneRuleLeavesSilentAndFailingLocalReplica(t *testing.T) {
	var logs []string
	r, clk := zoneRouter(t, &logs, tailroute.WithLocalRack("r1"))
	for _, id := range []string{"h0", "h1", "h2"} {
		observe(r, id, 30, time.Millisecond)
	}
	stuck := r.Pick(Query{})().(rackSel) // one request in flight on h0
	require.Equal(t, "h0", stuck.Info().id)
	clk.Advance(time.Millisecond)
	assert.Equal(t, 100, firsts(r, 100)["h0"], "owing one answer for 1ms: still in zone")
	clk.Advance(time.Millisecond)
	assert.Zero(t, firsts(r, 100)["h0"], "silent for 2ms, short of the stall threshold (10ms): left")
	stuck.Mark(nil)
	assert.Equal(t, 100, firsts(r, 100)["h0"], "answered: back in zone")

	r2, _ := zoneRouter(t, &logs, tailroute.WithLocalRack("r1"))
	observe(r2, "h1", 30, time.Millisecond)
	observe(r2, "h2", 30, time.Millisecond)
	tr := r2.Tracker()
	for i := 0; i < 30; i++ {
		tr.Host("h0").Observe(tr.Now(), time.Millisecond, track.Failure)
	}
	assert.Zero(t, firsts(r2, 100)["h0"], "failing local replica (demoted): left")
}

// A local replica silent for three times its stall threshold (R_s 1.2
// ms: max(StallMin 10 ms, 4 R_s) x 3 = 30 ms) has paused: once it answers,
// no in-zone replica is kept for 10 s (the client ranks by the score
// alone, which puts the 1.2 ms replica behind the 1 ms ones), while one
// silent for 29 ms is taken back as soon as it answers.
func TestZoneRuleRemembersAPause(t *testing.T) {
	var logs []string
	r, clk := zoneRouter(t, &logs, tailroute.WithLocalRack("r1"))
	fresh := func() {
		observe(r, "h0", 30, 1200*time.Microsecond)
		observe(r, "h1", 30, time.Millisecond)
		observe(r, "h2", 30, time.Millisecond)
	}
	fresh()
	require.Equal(t, 100, firsts(r, 100)["h0"], "within the bound: kept ahead of the faster ones")
	silent := func(d time.Duration) {
		stuck := r.Pick(Query{})().(rackSel)
		require.Equal(t, "h0", stuck.Info().id)
		clk.Advance(d)
		require.Zero(t, firsts(r, 100)["h0"], "silent %v: left", d)
		stuck.Mark(nil)
	}
	silent(29 * time.Millisecond)
	assert.Equal(t, 100, firsts(r, 100)["h0"], "silent 29 ms, answered: back in zone")
	silent(30 * time.Millisecond)
	assert.Zero(t, firsts(r, 100)["h0"], "silent 30 ms, answered: a pause, not kept")
	clk.Advance(9 * time.Second)
	fresh()
	assert.Zero(t, firsts(r, 100)["h0"], "9 s after the pause: still not kept")
	clk.Advance(time.Second)
	fresh()
	assert.Equal(t, 100, firsts(r, 100)["h0"], "10 s after: kept again")
}

// A local replica the client measured 5x slower is left; once its
// estimates fade while it is avoided (after 3.5 s without an answer its
// R_s is pulled to within 1.33x the others', ForgetAfter) it is taken back
// as a recovered replica would be, and left again at its first slow
// answer: no probe, the fading alone tries it again.
func TestZoneRuleRetriesFadedLocalReplica(t *testing.T) {
	var logs []string
	r, clk := zoneRouter(t, &logs, tailroute.WithLocalRack("r1"))
	observe(r, "h0", 30, 5*time.Millisecond)
	observe(r, "h1", 30, time.Millisecond)
	observe(r, "h2", 30, time.Millisecond)
	require.Zero(t, firsts(r, 100)["h0"], "5x slow: left")
	clk.Advance(3500 * time.Millisecond)
	observe(r, "h1", 30, time.Millisecond)
	observe(r, "h2", 30, time.Millisecond)
	v := r.Tracker().Host("h0").View(r.Tracker().Now())
	require.Less(t, v.ResponseTime, 1.5*float64(time.Millisecond), "faded into the bound")
	assert.Equal(t, 100, firsts(r, 100)["h0"], "faded: taken back")
	observe(r, "h0", 1, 5*time.Millisecond)
	assert.Zero(t, firsts(r, 100)["h0"], "slow again: left")
}

// Attempts sent out of the zone are counted per host and in total;
// HostStats say which host is in the zone. Without WithLocalRack nothing
// is counted.
func TestOutOfZoneCounted(t *testing.T) {
	var logs []string
	r, _ := zoneRouter(t, &logs, tailroute.WithLocalRack("r1"))
	observe(r, "h0", 30, 10*time.Millisecond) // slow: every first pick leaves the zone
	observe(r, "h1", 30, time.Millisecond)
	observe(r, "h2", 30, time.Millisecond)
	got := firsts(r, 50)
	require.Zero(t, got["h0"])
	assert.Equal(t, uint64(50), r.Counters().OutOfZone)
	per := map[string]tailroute.HostStats{}
	for _, s := range r.Stats() {
		per[strings.TrimSuffix(s.Address, ":9042")] = s
	}
	assert.True(t, per["h0"].InZone)
	assert.False(t, per["h1"].InZone)
	assert.Zero(t, per["h0"].OutOfZone)
	assert.Equal(t, uint64(got["h1"]), per["h1"].OutOfZone)
	assert.Equal(t, uint64(got["h2"]), per["h2"].OutOfZone)

	r2, _ := zoneRouter(t, &logs)
	firsts(r2, 20)
	assert.Zero(t, r2.Counters().OutOfZone)
}

// A rack no host of the local DC is in is reported (RackProblem, logged
// once) and preferred nothing; a host of it appearing ends the problem.
func TestUnknownLocalRack(t *testing.T) {
	var logs []string
	r, _ := zoneRouter(t, &logs, tailroute.WithLocalRack("R1"))
	err := r.RackProblem()
	require.Error(t, err)
	assert.Equal(t, `policy: WithLocalRack("R1"): no host of the local data center is in rack "R1" (its racks: "r1", "r2", "r3") `+
		`("r1" differs only in case); no replica is preferred and every attempt counts as out of zone until a host of "R1" appears: fix the name`, err.Error())
	require.Len(t, logs, 1)
	r.AddHosts([]*rackHost{{"h3", "r2"}})
	assert.Len(t, logs, 1, "the same problem is logged once")
	r.AddHosts([]*rackHost{{"h4", "R1"}})
	assert.NoError(t, r.RackProblem())
	assert.Equal(t, `WithLocalRack("R1"): hosts of rack "R1" found`, logs[len(logs)-1])

	_, err = New[*rackHost, any](Hooks{}, tailroute.WithZoneBound(0.5))
	assert.EqualError(t, err, "policy: WithZoneBound: ZoneBound = 0.5, allowed 1..100")
}

// Beyond the bound of the best replica but within that of the slowest,
// the in-zone replica stays while its latency median is no higher than
// the least of the others': two slow answers (capped at 4 R_s each) took
// its R_s from 1 ms to 1.7 ms, above 1.5x the 1 ms replica's but not 1.5x
// the 1.6 ms one's, and its median is still 1 ms. With a median of 1.2 ms
// it is left; so it is, median or not, once it is beyond the bound of
// every replica (four slow answers: 2.9 ms).
func TestZoneRuleAsksTheMediansBeforeLeaving(t *testing.T) {
	var logs []string
	for _, tc := range []struct {
		name  string
		usual time.Duration
		slow  int
		kept  bool
	}{
		{"median as the best's", time.Millisecond, 2, true},
		{"median above the best's", 1200 * time.Microsecond, 2, false},
		{"beyond every replica", time.Millisecond, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := zoneRouter(t, &logs, tailroute.WithLocalRack("r1"))
			observe(r, "h0", 30, tc.usual)
			observe(r, "h0", tc.slow, 50*time.Millisecond)
			observe(r, "h1", 30, time.Millisecond)
			observe(r, "h2", 30, 1600*time.Microsecond)
			tr := r.Tracker()
			local, best, worst := tr.Host("h0").View(tr.Now()), tr.Host("h1").View(tr.Now()), tr.Host("h2").View(tr.Now())
			require.Greater(t, local.ResponseTime, 1.5*best.ResponseTime, "beyond the best's bound")
			beyondAll := local.ResponseTime > 1.5*worst.ResponseTime
			require.Equal(t, tc.slow == 4, beyondAll, "R_s %v against the slowest's %v", local.ResponseTime, worst.ResponseTime)
			got := firsts(r, 100)
			if tc.kept {
				assert.Equal(t, 100, got["h0"], "%v", got)
			} else {
				assert.Zero(t, got["h0"], "%v", got)
			}
		})
	}
}
