package policy

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/tracker"
)

// fakeQuery is the part of gocql.ExecutableQuery that host selection uses.
// The embedded nil interface supplies the unexported methods; calling any
// other method panics, which would reveal an unexpected dependency.
type fakeQuery struct {
	gocql.ExecutableQuery
	key        []byte
	ks         string
	idempotent bool
}

func (q *fakeQuery) GetRoutingKey() ([]byte, error) { return q.key, nil }
func (q *fakeQuery) Keyspace() string               { return q.ks }
func (q *fakeQuery) IsIdempotent() bool             { return q.idempotent }

// Context is read by Pick while a server-load poll of the policy runs
// (polling is on by default): a user query's context is no poll's.
func (q *fakeQuery) Context() context.Context { return context.Background() }

func newHostInfo(id, ip string) *gocql.HostInfo {
	h := &gocql.HostInfo{}
	h.SetConnectAddress(net.ParseIP(ip))
	h.SetHostID(id)
	return h
}

// testPolicy returns a policy over n token-less hosts ("h0".. at 127.0.1.x)
// and a manual clock.
func testPolicy(t testing.TB, n int, opts ...tailroute.Option) (*Policy, []*gocql.HostInfo, *tracker.ManualClock) {
	t.Helper()
	clk := tracker.NewManualClock(10 * time.Second)
	p, err := New(append([]tailroute.Option{tailroute.WithClock(clk)}, opts...)...)
	require.NoError(t, err)
	var hosts []*gocql.HostInfo
	for i := 0; i < n; i++ {
		hosts = append(hosts, newHostInfo("h"+string(rune('0'+i)), "127.0.1."+string(rune('1'+i))))
	}
	p.AddHosts(hosts)
	return p, hosts, clk
}

func id(h gocql.SelectedHost) string {
	if h == nil {
		return "<nil>"
	}
	return h.Info().HostID()
}

// plan returns the host IDs of a whole plan, then marks every host with
// success. The plan is walked as an idempotent query: a non-idempotent plan
// is recycled at its first Mark(nil), as in gocql.
func plan(p *Policy, q *fakeQuery) []string {
	qi := *q
	qi.idempotent = true
	next := p.Pick(&qi)
	var out []string
	var hs []gocql.SelectedHost
	for h := next(); h != nil; h = next() {
		out = append(out, id(h))
		hs = append(hs, h)
	}
	for _, h := range hs {
		h.Mark(nil)
	}
	return out
}
