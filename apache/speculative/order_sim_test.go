package speculative

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tailroute/tailroute/internal/contract"
)

// orderSpec records whether the driver read it before or after Pick ran
// for its execution.
type orderSpec struct {
	picked              *atomic.Bool
	before, after, dels atomic.Int64
}

func (s *orderSpec) Attempts() int {
	if s.picked.Load() {
		s.after.Add(1)
	} else {
		s.before.Add(1)
	}
	return 0
}
func (s *orderSpec) Delay() time.Duration { s.dels.Add(1); return time.Millisecond }

type pickFlag struct {
	gocql.HostSelectionPolicy
	picked *atomic.Bool
}

func (p pickFlag) Pick(q gocql.ExecutableStatement) gocql.NextHost {
	p.picked.Store(true)
	return p.HostSelectionPolicy.Pick(q)
}

// TestDriverPicksBeforeReadingSpec: Arm relies on the v2 driver reading an
// execution's speculative policy only after Pick (query_executor.go
// executeQuery). The test fails if an upgrade changes that order.
func TestDriverPicksBeforeReadingSpec(t *testing.T) {
	c, keys := contract.HedgeData(t, binding(), 3, "127.0.0.45", 3, 10)
	var picked atomic.Bool
	cl := gocql.NewCluster(c.Hosts()...)
	cl.Port = c.Port()
	cl.Keyspace = contract.HedgeKeyspace
	cl.Timeout = 5 * time.Second
	cl.ConnectTimeout = 10 * time.Second
	cl.Logger = quietLogger{}
	cl.PoolConfig.HostSelectionPolicy = pickFlag{gocql.RoundRobinHostPolicy(), &picked}
	s, err := cl.CreateSession()
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 20; i++ {
		sp := &orderSpec{picked: &picked}
		picked.Store(false)
		var f string
		require.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", keys[i%len(keys)]).
			Idempotent(true).SetSpeculativeExecutionPolicy(sp).ScanContext(context.Background(), &f))
		assert.Zero(t, sp.before.Load(), "the driver read the query's policy before Pick")
		assert.Positive(t, sp.after.Load(), "the driver read the query's policy after Pick")
	}
}
