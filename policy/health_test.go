package policy

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/tracker"
)

// wired returns a test policy whose measurements come from the observer,
// as with Wire, and a function that records one attempt on host i at the
// policy's clock: latency d, error err.
func wired(t *testing.T, n int, opts ...Option) (*Policy, []*gocql.HostInfo, func(i int, d time.Duration, err error)) {
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
	for _, strat := range []Strategy{C3, P2C} {
		for _, k := range errorKinds {
			t.Run(strat.String()+"/"+k.name, func(t *testing.T) {
				p, _, obs := wired(t, 3, WithStrategy(strat), WithRateControl(false))
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

// TestFailedHostRecovers: a replica that failed every request for 3s gets
// only probes while failing, and its share of first picks back (above 20 %
// of three replicas' 33 %) within 1.5s after it stops failing: probes reach
// it although it is ranked last, and its rolling success rate recovers.
func TestFailedHostRecovers(t *testing.T) {
	for _, strat := range []Strategy{C3, P2C} {
		t.Run(strat.String(), func(t *testing.T) {
			p, hosts, obs := wired(t, 3, WithStrategy(strat), WithRateControl(false))
			clk := p.r.Tracker().Clock().(*tracker.ManualClock)
			now := p.r.Tracker().Clock().Now
			q := &fakeQuery{}
			failUntil := now() + 3*time.Second
			shares := map[int]int{} // 250ms slot after failUntil-1s -> picks of h2
			for now() < failUntil+2*time.Second {
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
				if i == 2 && now() < failUntil {
					err = codeErr(gocql.ErrCodeOverloaded)
				}
				clk.Advance(time.Millisecond) // one request per ms, answered in 1ms
				obs(i, time.Millisecond, err)
				h.Mark(err)
				if i == 2 && now() > failUntil-time.Second {
					shares[int((now()-(failUntil-time.Second))/(250*time.Millisecond))]++
				}
			}
			// slots of 250 picks: 0-3 the last second of failure, 4.. after
			assert.Less(t, shares[0]+shares[1]+shares[2]+shares[3], 1000*3/100, "while failing: probes only: %v", shares)
			assert.Greater(t, shares[9], 250*20/100, "1.25-1.5s after: fair share again: %v", shares)
			assert.Greater(t, shares[10], 250*20/100, "%v", shares)
		})
	}
}
