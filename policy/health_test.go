package policy

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// wired returns a test policy whose measurements come from the observer,
// as with Wire, and a function that records one attempt on host i at the
// policy's clock: latency d, error err.
func wired(t *testing.T, n int, opts ...tailroute.Option) (*Policy, []*gocql.HostInfo, func(i int, d time.Duration, err error)) {
	p, hosts, clk := testPolicy(t, n, opts...)
	Wire(gocql.NewCluster("127.0.0.1"), p)
	base := time.Unix(1e9, 0)
	obs := func(i int, d time.Duration, err error) {
		end := base.Add(clk.Now())
		p.observe(context.Background(), hosts[i], end.Add(-d), end, err)
	}
	return p, hosts, obs
}

// errorKinds are the error kinds a host can fail with, with the latency
// each takes in these tests: Overloaded and Unavailable are answered at
// once, a read timeout after the server waited, a client timeout after the
// client did, a broken connection at once.
var errorKinds = []struct {
	name string
	err  error
	lat  time.Duration
	slow bool // takes longer than a success (5ms)
}{
	{"overloaded", codeErr(gocql.ErrCodeOverloaded), 50 * time.Microsecond, false},
	{"unavailable", &gocql.RequestErrUnavailable{}, 50 * time.Microsecond, false},
	{"read_timeout", &gocql.RequestErrReadTimeout{}, 40 * time.Millisecond, true},
	{"write_timeout", &gocql.RequestErrWriteTimeout{}, 40 * time.Millisecond, true},
	{"client_timeout", gocql.ErrTimeoutNoResponse, 100 * time.Millisecond, true},
	{"connection", errors.New("gocql: connection closed waiting for response"), 20 * time.Microsecond, false},
}

// TestFailingHostRepelsTraffic: one of three replicas fails half (then all)
// of its requests with each error kind. Its errors never make it look
// fast (R_s moves only up), and although the healthy replicas each have a
// request in flight (qhat^3 = 8 times their score) it is the first choice
// in at most ~6 % of picks at 50 % failure (the cascade's (0.5^3)/(2+0.5^3))
// and only through probes at 100 % — with C3 and with P2C, whose
// in-flight counts fast failures would otherwise keep low.
func TestFailingHostRepelsTraffic(t *testing.T) {
	for _, strat := range []tailroute.Strategy{tailroute.C3, tailroute.P2C} {
		for _, k := range errorKinds {
			t.Run(strat.String()+"/"+k.name, func(t *testing.T) {
				p, _, obs := wired(t, 3, tailroute.WithStrategy(strat), tailroute.WithRateControl(false))
				tr := p.r.Tracker()
				for i := 0; i < 40; i++ {
					obs(0, 5*time.Millisecond, nil)
					obs(1, 5*time.Millisecond, nil)
					obs(2, 5*time.Millisecond, nil)
					obs(2, k.lat, k.err)
				}
				r := tr.Host("h2").Snapshot().ResponseTime
				if k.slow {
					assert.Greater(t, r, 10*time.Millisecond, "slow errors make the host look slow")
				} else {
					assert.InDelta(t, float64(5*time.Millisecond), float64(r), float64(50*time.Microsecond), "fast errors do not make it look fast")
				}
				a0, a1 := tr.Host("h0").Begin(tr.Now()), tr.Host("h1").Begin(tr.Now())
				first := func() int {
					n := 0
					for i := 0; i < 3000; i++ {
						if plan(p, &fakeQuery{})[0] == "h2" {
							n++
						}
					}
					return n
				}
				assert.Less(t, first(), 3000*10/100, "50 %% failing: about 6 %% of first picks")
				for i := 0; i < 200; i++ {
					obs(2, k.lat, k.err)
				}
				assert.Less(t, first(), 3000*3/100, "always failing: probes only (1 %%)")
				tr.Host("h0").End(a0)
				tr.Host("h1").End(a1)
			})
		}
	}
}

// drive sends one request every step for d through p's plans, answered in
// 1ms, with host 2 failing (Overloaded) while fail(now) says so, and
// returns the times of the attempts host 2 received.
func drive(t *testing.T, p *Policy, hosts []*gocql.HostInfo, obs func(int, time.Duration, error),
	step, d time.Duration, fail func(time.Duration) bool) []time.Duration {
	t.Helper()
	clk := p.r.Tracker().Clock().(*tracker.ManualClock)
	q := &fakeQuery{}
	var to2 []time.Duration
	for end := clk.Now() + d; clk.Now() < end; {
		next := p.Pick(q)
		h := next()
		require.NotNil(t, h)
		i := 0
		for j := range hosts {
			if hosts[j] == h.Info() {
				i = j
			}
		}
		var err error
		if i == 2 {
			to2 = append(to2, clk.Now())
			if fail(clk.Now()) {
				err = codeErr(gocql.ErrCodeOverloaded)
			}
		}
		clk.Advance(time.Millisecond)
		obs(i, time.Millisecond, err)
		h.Mark(err)
		clk.Advance(step - time.Millisecond)
	}
	return to2
}

// TestFailedHostRecovers: a replica that failed every request for 3s gets
// only probes while failing, at most one per ProbeAfter (1s), and is a
// first choice again at its first probe after it stops failing (streak
// rule), i.e. within ProbeAfter: its share of picks 1-2s after is fair.
func TestFailedHostRecovers(t *testing.T) {
	for _, strat := range []tailroute.Strategy{tailroute.C3, tailroute.P2C} {
		t.Run(strat.String(), func(t *testing.T) {
			p, hosts, obs := wired(t, 3, tailroute.WithStrategy(strat), tailroute.WithRateControl(false))
			start := p.r.Tracker().Clock().Now()
			failUntil := start + 3*time.Second
			to2 := drive(t, p, hosts, obs, time.Millisecond, 5*time.Second, func(now time.Duration) bool { return now < failUntil })
			var last, after int
			for _, at := range to2 {
				switch {
				case at >= failUntil-time.Second && at < failUntil:
					last++
				case at >= failUntil+time.Second && at < failUntil+2*time.Second:
					after++
				}
			}
			assert.LessOrEqual(t, last, 2, "the last second of failure: one probe: %v", to2[:min(len(to2), 40)])
			assert.Greater(t, after, 1000*20/100, "1-2s after: fair share again (33 %%)")
		})
	}
}

// TestDemotedProbeRate: an always failing replica gets one probe per
// ProbeAfter per client whatever the request rate, so its share of the
// attempts falls as the load grows; WithProbe(time.Hour) all but stops them.
func TestDemotedProbeRate(t *testing.T) {
	always := func(time.Duration) bool { return true }
	for _, strat := range []tailroute.Strategy{tailroute.C3, tailroute.P2C} {
		for _, step := range []time.Duration{time.Millisecond, 10 * time.Millisecond} {
			t.Run(fmt.Sprintf("%v/%v", strat, step), func(t *testing.T) {
				p, hosts, obs := wired(t, 3, tailroute.WithStrategy(strat), tailroute.WithRateControl(false), tailroute.WithProbe(500*time.Millisecond))
				drive(t, p, hosts, obs, step, time.Second, always) // found failing
				to2 := drive(t, p, hosts, obs, step, 10*time.Second, always)
				assert.InDelta(t, 20, len(to2), 2, "10s at one probe per 500ms: %v", to2)
			})
		}
		t.Run(strat.String()+"/off", func(t *testing.T) {
			p, hosts, obs := wired(t, 3, tailroute.WithStrategy(strat), tailroute.WithRateControl(false), tailroute.WithProbe(time.Hour))
			drive(t, p, hosts, obs, time.Millisecond, time.Second, always)
			to2 := drive(t, p, hosts, obs, time.Millisecond, 5*time.Second, always)
			assert.Empty(t, to2, "probes off")
		})
	}
}
