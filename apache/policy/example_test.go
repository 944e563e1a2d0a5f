package policy_test

import (
	"context"
	"fmt"
	"log"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tailroute/tailroute/apache/policy"
	"github.com/tailroute/tailroute/policy/promstats"
	"github.com/tailroute/tailroute/sim"
)

// nopLogger keeps the driver's messages out of the example's output.
type nopLogger struct{}

func (nopLogger) Error(string, ...gocql.LogField)   {}
func (nopLogger) Warning(string, ...gocql.LogField) {}
func (nopLogger) Info(string, ...gocql.LogField)    {}
func (nopLogger) Debug(string, ...gocql.LogField)   {}

// Example routes a v2 driver session's queries with the policy and exports
// its per-host state to Prometheus. An in-process simulated 3-node cluster
// (package sim) stands in for Cassandra; with a real cluster only the
// contact points differ.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := sim.Start(ctx, sim.Config{Nodes: 3, Model: sim.ServiceModel{ZeroService: true}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	p, err := policy.New() // C3 ranking, default options
	if err != nil {
		log.Fatal(err)
	}
	cluster := gocql.NewCluster(c.Hosts()...)
	cluster.Port = c.Port()
	cluster.Logger = nopLogger{}
	if err := policy.Wire(cluster, p); err != nil { // the policy and its observers
		log.Fatal(err)
	}
	session, err := cluster.CreateSession()
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	for _, stmt := range []string{
		"CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE demo.users (id text PRIMARY KEY, name text)",
		"INSERT INTO demo.users (id, name) VALUES ('u1', 'Ada')",
	} {
		if err := session.Query(stmt).Exec(); err != nil {
			log.Fatal(err)
		}
	}
	var name string
	if err := session.Query("SELECT name FROM demo.users WHERE id = ?", "u1").Scan(&name); err != nil {
		log.Fatal(err)
	}
	fmt.Println(name)

	reg := prometheus.NewRegistry()
	reg.MustRegister(promstats.New(p, promstats.WithLabels(prometheus.Labels{"driver": "v2"})))
	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "tailroute_host_up" {
			fmt.Println("hosts exported:", len(f.GetMetric()))
		}
	}
	fmt.Println("problems:", p.Err())
	// Output:
	// Ada
	// hosts exported: 3
	// problems: <nil>
}
