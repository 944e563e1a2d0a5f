package policy_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/sim"
)

// nopLogger keeps gocql's connection messages out of the examples' output.
type nopLogger struct{}

func (nopLogger) Print(...any)          {}
func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

// Example routes a session's queries with the policy. An in-process
// simulated 3-node cluster (package sim) stands in for Cassandra so that the
// example runs anywhere; with a real cluster only the contact points differ.
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
	fmt.Println("hosts:", len(p.Stats()), "problems:", p.Err())
	// Output:
	// Ada
	// hosts: 3 problems: <nil>
}

// ExampleWire shows that a Policy is wired once: a second Wire, which
// would measure every attempt twice or share the policy between sessions,
// is an error.
func ExampleWire() {
	p, err := policy.New()
	if err != nil {
		log.Fatal(err)
	}
	cluster := gocql.NewCluster("127.0.0.1")
	fmt.Println(policy.Wire(cluster, p))
	fmt.Println(policy.Wire(cluster, p))
	fmt.Println(policy.Wire(gocql.NewCluster("127.0.0.1"), p))
	// Output:
	// <nil>
	// policy: Wire: p is already wired to this cfg; call Wire once
	// policy: Wire: p is already wired to another gocql.ClusterConfig; a Policy serves one session: create one Policy per ClusterConfig with policy.New
}

// ExampleNew shows option validation: a bad option is an error naming the
// option, the value and the allowed range.
func ExampleNew() {
	_, err := policy.New(tailroute.WithStrategy(tailroute.P2C), tailroute.WithTailTerm(200))
	fmt.Println(err)
	// Output:
	// policy: WithTailTerm: TailTerm = 200, allowed 0..100
}
