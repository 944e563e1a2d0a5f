package speculative_test

import (
	"context"
	"log"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/tailroute/tailroute/apache/speculative"
)

// Hedge the reads of a v2 session: wrap the cluster's policy once, arm each
// execution.
func Example() {
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	h, err := speculative.New() // p95 of its own Recorder, 5% budget
	if err != nil {
		log.Fatal(err)
	}
	if err := speculative.Wire(cluster, h); err != nil {
		log.Fatal(err)
	}
	read := func(ctx context.Context, s *gocql.Session, key string) (string, error) {
		q := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", key).Idempotent(true)
		var v string
		err := q.ScanContext(h.Arm(ctx, q), &v)
		return v, err
	}
	_ = read
}
