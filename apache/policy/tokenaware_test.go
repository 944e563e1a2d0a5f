package policy

import (
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute/internal/simtest"
	"github.com/tailroute/tailroute/sim"
)

// TestWhatTokenAwarenessNeeds pins the README's rule for the v2 driver (the
// scenario is simtest.TokenAwareness, shared with the v1 adapter's test).
func TestWhatTokenAwarenessNeeds(t *testing.T) {
	c := simtest.Start(t, sim.Config{Nodes: 3, Seed: 5, Model: sim.ServiceModel{Workers: 2, MeanService: time.Millisecond}})
	var sessions []simtest.TokenAwareSession
	for _, keyspace := range []string{"", "ta"} {
		p, err := New()
		require.NoError(t, err)
		cfg := gocql.NewCluster(c.Hosts()...)
		cfg.Port, cfg.Keyspace, cfg.Logger = c.Port(), keyspace, quietLogger{}
		cfg.Timeout, cfg.ConnectTimeout = 5*time.Second, 10*time.Second
		require.NoError(t, Wire(cfg, p))
		sess, err := cfg.CreateSession()
		require.NoError(t, err)
		t.Cleanup(sess.Close)
		if keyspace == "" {
			createKeyspace(t, sess, p, "ta", "{'class':'SimpleStrategy','replication_factor':2}")
		}
		sessions = append(sessions, simtest.TokenAwareSession{
			Exec: func(stmt string, key []byte, args ...any) error {
				if key == nil {
					return sess.Query(stmt, args...).Exec()
				}
				return sess.Query(stmt, args...).RoutingKey(key).Exec()
			},
			Unrouted: func() uint64 { return p.Counters().Unrouted },
		})
	}
	simtest.TokenAwareness(t, "ta", sessions[0], sessions[1])
}
