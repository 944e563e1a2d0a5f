package policy

import (
	"fmt"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// fakeQuery is the part of the driver's ExecutableStatement that host
// selection uses; any other method panics (nil embedded interface).
type fakeQuery struct {
	gocql.ExecutableStatement
	key        []byte
	ks         string
	idempotent bool
	hostID     string
}

func (q *fakeQuery) GetRoutingKey() ([]byte, error) { return q.key, nil }
func (q *fakeQuery) Keyspace() string               { return q.ks }
func (q *fakeQuery) IsIdempotent() bool             { return q.idempotent }
func (q *fakeQuery) GetHostID() string              { return q.hostID }

// TestPinnedQuery: a query pinned with SetHostID runs on that host (the
// driver's executor) and our Pick, asked directly, plans that host alone;
// an unknown host ID gets an empty plan.
func TestPinnedQuery(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 6, Model: sim.ServiceModel{ZeroService: true}})
	p, err := New()
	require.NoError(t, err)
	s := simSession(t, c, p)
	createKeyspace(t, s, p, "pin", "{'class':'SimpleStrategy','replication_factor':1}")
	hosts := p.r.Hosts()
	require.Len(t, hosts, 3)
	target := hosts[2]
	require.NotEmpty(t, target.HostID())
	node := c.Node(target.ConnectAddress().String())
	// coordinated = executed here + forwarded to a replica (sim.NodeStats.Forwarded)
	coordinated := func() uint64 { st := node.Stats(); return st.Served + st.Forwarded }
	before := coordinated()
	for i := 0; i < 30; i++ {
		require.NoError(t, s.Query("SELECT field0 FROM pin.usertable WHERE y_id = ?", fmt.Sprintf("user%d", i)).SetHostID(target.HostID()).Exec())
	}
	assert.EqualValues(t, 30, coordinated()-before, "every pinned query on its host")

	for _, idem := range []bool{false, true} {
		next := p.Pick(&fakeQuery{key: []byte("user1"), ks: "pin", hostID: target.HostID(), idempotent: idem})
		h := next()
		require.NotNil(t, h)
		assert.Equal(t, target.HostID(), h.Info().HostID())
		assert.Nil(t, next(), "a pinned plan has one host")
		h.Mark(nil)
	}
	next := p.Pick(&fakeQuery{hostID: "no-such-host"})
	assert.Nil(t, next())
	for _, st := range p.Stats() {
		assert.EqualValues(t, 0, st.InFlight, st.Address)
	}
}
