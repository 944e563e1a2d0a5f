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
	var le route.LoadEstimator
	q, svc := le.Add(route.ThreadPoolSample{At: time.Second, Active: 4, Pending: 6, Completed: 1000, Own: 3})
	assert.Equal(t, 7.0, q, "pending + active - own requests")
	assert.Zero(t, svc, "one sample gives no rate")

	// 400 completions in 100ms with 4 busy workers: 4 / 4000/s = 1ms.
	q, svc = le.Add(route.ThreadPoolSample{At: time.Second + 100*time.Millisecond, Active: 4, Pending: 0, Completed: 1400, Own: 8})
	assert.Zero(t, q, "never negative")
	assert.Equal(t, time.Millisecond, svc)

	// Restart: completed went down. No rate (in particular no negative one),
	// and the sample becomes the new baseline.
	q, svc = le.Add(route.ThreadPoolSample{At: 2 * time.Second, Active: 2, Pending: 1, Completed: 50})
	assert.Equal(t, 3.0, q)
	assert.Zero(t, svc)
	_, svc = le.Add(route.ThreadPoolSample{At: 2*time.Second + 200*time.Millisecond, Active: 2, Pending: 0, Completed: 150})
	assert.Equal(t, 4*time.Millisecond, svc, "2 workers, 100 completions in 200ms")

	// Nothing completed, or no worker seen busy: no estimate.
	_, svc = le.Add(route.ThreadPoolSample{At: 3 * time.Second, Active: 0, Completed: 150})
	assert.Zero(t, svc)
	_, svc = le.Add(route.ThreadPoolSample{At: 4 * time.Second, Active: 0, Completed: 170})
	assert.Zero(t, svc)
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
