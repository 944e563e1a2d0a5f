package route

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/track"
	"github.com/tailroute/tailroute/tracker"
)

// sel is what a test router's plans hand out.
type sel = *Selection[*testHost, any]

// requestError stands for a driver's request error type (none is used: the
// tests' errors are plain errors or context errors).
type requestError interface {
	error
	Code() int
}

// testRouter returns a router over n token-less hosts ("h0", ...) on a
// manual clock, classifying errors as the adapters do.
func testRouter(t testing.TB, n int, opts ...tailroute.Option) (*Router[*testHost, any], []*testHost, *tracker.ManualClock) {
	t.Helper()
	clk := tracker.NewManualClock(10 * time.Second)
	r, err := New[*testHost, any](Hooks{
		Classify: func(err error) track.Outcome { return cqlerr.Classify[requestError](nil, err, cqlerr.Sentinels{}) },
	}, append([]tailroute.Option{tailroute.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	var hosts []*testHost
	for i := 0; i < n; i++ {
		hosts = append(hosts, &testHost{id: "h" + string(rune('0'+i))})
	}
	r.AddHosts(hosts)
	return r, hosts, clk
}

// plan returns the host IDs of a whole plan, then marks every host with
// success. The plan is walked as an idempotent query: a non-idempotent plan
// is recycled at its first Mark(nil), as in the drivers.
func plan(r *Router[*testHost, any], q Query) []string {
	q.Idempotent = true
	next := pick(r, q)
	var out []string
	var hs []sel
	for h := next(); h != nil; h = next() {
		out = append(out, id(h))
		hs = append(hs, h)
	}
	for _, h := range hs {
		h.Mark(nil)
	}
	return out
}

// pick is Pick with the plan's hosts typed.
func pick(r *Router[*testHost, any], q Query) func() sel {
	next := r.Pick(q)
	return func() sel {
		s, _ := next().(sel)
		return s
	}
}

// id is the host ID of a handed-out host, "<nil>" for none.
func id(h sel) string {
	if h == nil {
		return "<nil>"
	}
	return h.Info().HostID()
}
