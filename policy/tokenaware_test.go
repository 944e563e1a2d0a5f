package policy

import (
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// TestWhatTokenAwarenessNeeds pins the README's rule for gocql v1: bound ?
// markers or Query.RoutingKey, and a keyspace; literal values are Unrouted.
func TestWhatTokenAwarenessNeeds(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	session := func(keyspace string) simtest.TokenAwareSession {
		p, err := New()
		require.NoError(t, err)
		cl := gocql.NewCluster(c.Hosts()...)
		cl.Port, cl.Keyspace, cl.Logger = c.Port(), keyspace, quietLogger{}
		cl.Timeout, cl.ConnectTimeout = 5*time.Second, 10*time.Second
		require.NoError(t, Wire(cl, p))
		s, err := cl.CreateSession()
		require.NoError(t, err)
		t.Cleanup(s.Close)
		if keyspace == "" {
			createKeyspace(t, s, "ta", "{'class':'SimpleStrategy','replication_factor':2}")
		}
		return simtest.TokenAwareSession{
			Exec: func(stmt string, key []byte, args ...any) error {
				q := s.Query(stmt, args...)
				if key != nil {
					q = q.RoutingKey(key)
				}
				return q.Exec()
			},
			Unrouted: func() uint64 { return p.Counters().Unrouted },
		}
	}
	plain := session("")
	simtest.TokenAwareness(t, "ta", plain, session("ta"))
}
