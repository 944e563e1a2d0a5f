package speculative_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/sim"
	"github.com/tailroute/tailroute/speculative"
	"github.com/tailroute/tailroute/tracker"
)

// nopLogger keeps gocql's connection messages out of the examples' output.
type nopLogger struct{}

func (nopLogger) Print(...any)          {}
func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

// Example hedges the idempotent queries of a session routed by tailroute's
// policy, the hedge delay following the policy's latency measurements. An
// in-process simulated 3-node cluster (package sim) stands in for
// Cassandra so that the example runs anywhere.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := sim.Start(ctx, sim.Config{Nodes: 3, Model: sim.ServiceModel{ZeroService: true}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	cluster := gocql.NewCluster(c.Hosts()...)
	cluster.Port = c.Port()
	cluster.Logger = nopLogger{}
	p, err := policy.New()
	if err != nil {
		log.Fatal(err)
	}
	if err := policy.Wire(cluster, p); err != nil { // first the policy...
		log.Fatal(err)
	}
	h, err := speculative.New(tailroute.WithSource(p), tailroute.WithBudget(0.05, 10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	if err := speculative.Wire(cluster, h); err != nil { // ...then hedging wraps it
		log.Fatal(err)
	}
	cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2}
	session, err := cluster.CreateSession()
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	for _, stmt := range []string{
		"CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE demo.users (id text PRIMARY KEY, name text)",
		"INSERT INTO demo.users (id, name) VALUES ('u1', 'Ada')",
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			log.Fatal(err)
		}
	}
	var name string
	for i := 0; i < 10; i++ {
		// only idempotent queries are hedged (a hedge may execute twice)
		q := session.Query("SELECT name FROM demo.users WHERE id = ?", "u1").Idempotent(true)
		if err := q.Scan(&name); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(name)
	fmt.Println("idempotent executions:", h.Stats().Eligible)
	// Output:
	// Ada
	// idempotent executions: 10
}

// ExampleNew shows option validation: a bad option is an error from New
// naming the option, the field, the value and the allowed range.
func ExampleNew() {
	_, err := speculative.New(tailroute.WithQuantile(1.5))
	fmt.Println(err)
	// Output:
	// speculative: WithQuantile: Quantile = 1.5, allowed (0, 1) exclusive
}

// ExampleRecorder feeds a Recorder by hand (Wire installs it as the
// cluster's QueryObserver) and reads its p95, the quantile a Hedger's
// default delay follows. The clock is the tracker.Clock every WithClock
// takes; samples age out of the window on it.
func ExampleRecorder() {
	clk := tracker.NewManualClock(0)
	r, err := speculative.NewRecorder(speculative.RecorderConfig{Clock: clk, MinSamples: 100})
	if err != nil {
		log.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		r.Record(time.Duration(i) * time.Millisecond)
	}
	fmt.Println(r.LatencyQuantile(0.95)) // the highest value of the 95 ms bucket
	clk.Advance(15 * time.Second)        // past the 10s window
	fmt.Println(r.LatencyQuantile(0.95))
	// Output:
	// 96.468991ms true
	// 0s false
}
