package policy

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
)

func TestLoadEstimatorLittlesLawAndRestart(t *testing.T) {
	ms := time.Millisecond
	at := func(d time.Duration) time.Duration { return time.Second + d }
	var le route.LoadEstimator
	q, svc := le.Add(route.ThreadPoolSample{At: at(0), Active: 4, Pending: 6, Completed: 1000, Own: 3})
	assert.Equal(t, 7.0, q, "pending + active - own requests")
	assert.Zero(t, svc, "one sample gives no rate")
	// 400 completions per 100ms with 4 busy workers: 4 / 4000/s = 1ms, once
	// four pairs are in.
	for i := 1; i <= 4; i++ {
		q, svc = le.Add(route.ThreadPoolSample{At: at(time.Duration(i) * 100 * ms), Active: 4, Completed: 1000 + int64(i)*400, Own: 8})
		assert.Zero(t, q, "never negative")
		if i < 4 {
			assert.Zero(t, svc, "%d pairs: active counts are instants", i)
		}
	}
	assert.Equal(t, ms, svc)

	// Restart: completed went down. No rate (in particular no negative one),
	// and the sample becomes the new baseline of a new window.
	q, svc = le.Add(route.ThreadPoolSample{At: 2 * time.Second, Active: 2, Pending: 1, Completed: 50})
	assert.Equal(t, 3.0, q)
	assert.Zero(t, svc)
	// Pairs in which no worker was seen busy count as zero busy time:
	// 2 busy for 2 x 200ms and none for 2 x 200ms, 200 completions.
	for i, a := range []float64{2, 2, 0, 0} {
		_, svc = le.Add(route.ThreadPoolSample{At: 2*time.Second + time.Duration(i+1)*200*ms, Active: a, Completed: 50 + int64(i+1)*50})
	}
	// busy: (2+2)/2*200 + (2+2)/2*200 + (2+0)/2*200 + 0 = 1000ms over 200 completions
	assert.Equal(t, 5*ms, svc)

	// Few completions: the window reaches back as far as 32 pairs for 8.
	var few route.LoadEstimator
	few.Add(route.ThreadPoolSample{At: at(0), Active: 1, Completed: 10})
	for i := 1; i <= 6; i++ {
		_, svc = few.Add(route.ThreadPoolSample{At: at(time.Duration(i) * 100 * ms), Active: 1, Completed: 10 + int64(i)})
		assert.Zero(t, svc, "%d completions", i)
	}
	_, svc = few.Add(route.ThreadPoolSample{At: at(700 * ms), Active: 1, Completed: 18})
	assert.Equal(t, 700*ms/8, svc, "8 completions in 7 pairs: 700ms of one busy worker")
	// Completions stop: the estimate (now over more pairs, idle ones
	// included) stands while its pairs are within the last 32, then there
	// is none.
	for i := 8; i <= 32; i++ {
		_, svc = few.Add(route.ThreadPoolSample{At: at(time.Duration(i) * 100 * ms), Active: 0, Completed: 18})
		assert.NotZero(t, svc, "pair %d", i)
	}
	_, svc = few.Add(route.ThreadPoolSample{At: at(33 * 100 * ms), Active: 0, Completed: 18})
	assert.Zero(t, svc, "the completions left the window: none, not the old estimate")
}

// A poll query goes to the polled host only and is not user traffic: no
// measurement, no os_s, other observers can tell it apart. The poll is the
// poller's own (its schedule follows the test's clock), checked from inside
// its query.
func TestPollPlanPinsHostAndIsNotMeasured(t *testing.T) {
	const iv = 100 * time.Millisecond
	p, hosts, clk := testPolicy(t, 3, tailroute.WithPollBudget(1, iv, iv))
	e := hosts[1]
	eh := p.r.Tracker().Host(hostID(e))
	assert.False(t, IsServerLoadPoll(context.Background()))
	polled := make(chan context.Context, 8)
	var closed atomic.Bool
	t.Cleanup(func() { closed.Store(true); clk.Advance(2 * iv) })
	p.r.StartServerLoad(route.PollDriver[*gocql.HostInfo]{
		Closed: closed.Load,
		Query: func(ctx context.Context, h *gocql.HostInfo, _ string) (route.ThreadPoolSample, error) {
			if h != e {
				return route.ThreadPoolSample{}, errors.New("not the host under test")
			}
			assert.True(t, IsServerLoadPoll(ctx))
			assert.True(t, p.r.IsPoll(ctx))
			next := p.Pick(&ctxQuery{ctx: ctx})
			if sel := next(); assert.NotNil(t, sel) {
				assert.Same(t, e, sel.Info())
				sel.Mark(nil)
			}
			assert.Nil(t, next(), "only the polled host")
			assert.Zero(t, eh.InFlight())
			p.observe(ctx, e, time.Now().Add(-time.Second), time.Now(), nil)
			assert.Zero(t, eh.Snapshot().Samples, "polls are not measured")
			// A user query while a poll runs is planned as usual.
			assert.NotNil(t, p.Pick(&ctxQuery{ctx: context.Background()})())
			polled <- ctx
			return route.ThreadPoolSample{}, errors.New("no sample")
		},
	})
	require.Eventually(t, func() bool { return clk.Timers() == 4 }, 10*time.Second, time.Millisecond,
		"the poller's supervisor and one loop per host wait on the clock")
	clk.Advance(iv) // every host is polled within the first interval
	var ctx context.Context
	select {
	case ctx = <-polled:
	case <-time.After(10 * time.Second):
		t.Fatal("the host was not polled")
	}
	assert.Eventually(t, func() bool { return !p.r.IsPoll(ctx) }, 10*time.Second, time.Millisecond,
		"no poll in flight: the user path does not look")
}

// ctxQuery is a fakeQuery with a context.
type ctxQuery struct {
	fakeQuery
	ctx context.Context
}

func (q *ctxQuery) Context() context.Context { return q.ctx }
