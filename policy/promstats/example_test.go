package promstats_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/policy"
	policyprom "github.com/tailroute/tailroute/policy/promstats"
	"github.com/tailroute/tailroute/sim"
	"github.com/tailroute/tailroute/speculative"
	hedgeprom "github.com/tailroute/tailroute/speculative/promstats"
)

// nopLogger keeps gocql's connection messages out of the example's output.
type nopLogger struct{}

func (nopLogger) Print(...any)          {}
func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

// connect opens a session on c routed by a new policy p, hedged by h.
func connect(c *sim.Cluster) (*gocql.Session, *policy.Policy, *speculative.Hedger) {
	p, err := policy.New()
	if err != nil {
		log.Fatal(err)
	}
	h, err := speculative.New(tailroute.WithSource(p))
	if err != nil {
		log.Fatal(err)
	}
	cluster := gocql.NewCluster(c.Hosts()...)
	cluster.Port = c.Port()
	cluster.Logger = nopLogger{}
	if err := policy.Wire(cluster, p); err != nil {
		log.Fatal(err)
	}
	if err := speculative.Wire(cluster, h); err != nil {
		log.Fatal(err)
	}
	s, err := cluster.CreateSession()
	if err != nil {
		log.Fatal(err)
	}
	return s, p, h
}

// Example exports the policies and hedgers of two sessions (one Policy and
// one Hedger per session) to one Prometheus registry: the session label
// tells them apart. The two collector packages are both named promstats,
// hence the aliases policyprom and hedgeprom. Serve the registry as usual
// (promhttp.HandlerFor(reg, promhttp.HandlerOpts{})). An in-process
// simulated 3-node cluster (package sim) stands in for Cassandra so that
// the example runs anywhere.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := sim.Start(ctx, sim.Config{Nodes: 3, Model: sim.ServiceModel{ZeroService: true}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	orders, po, ho := connect(c)
	defer orders.Close()
	users, pu, hu := connect(c)
	defer users.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(
		policyprom.New(po, policyprom.WithSession("orders")),
		hedgeprom.New(ho, hedgeprom.WithSession("orders")),
		policyprom.New(pu, policyprom.WithSession("users")),
		hedgeprom.New(hu, hedgeprom.WithSession("users")),
	)

	if err := orders.Query("CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}").Exec(); err != nil {
		log.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range fams {
		switch f.GetName() {
		case "tailroute_host_up", "tailroute_demoted_total", "tailroute_host_send_rate_per_second", "tailroute_hedge_executions_total":
			for _, m := range f.GetMetric() {
				fmt.Printf("%s %s session=%s\n", f.GetName(), f.GetType(), m.GetLabel()[len(m.GetLabel())-1].GetValue())
			}
		}
	}
	// Unordered output:
	// tailroute_demoted_total COUNTER session=orders
	// tailroute_demoted_total COUNTER session=users
	// tailroute_hedge_executions_total COUNTER session=orders
	// tailroute_hedge_executions_total COUNTER session=users
	// tailroute_host_send_rate_per_second GAUGE session=orders
	// tailroute_host_send_rate_per_second GAUGE session=orders
	// tailroute_host_send_rate_per_second GAUGE session=orders
	// tailroute_host_send_rate_per_second GAUGE session=users
	// tailroute_host_send_rate_per_second GAUGE session=users
	// tailroute_host_send_rate_per_second GAUGE session=users
	// tailroute_host_up GAUGE session=orders
	// tailroute_host_up GAUGE session=orders
	// tailroute_host_up GAUGE session=orders
	// tailroute_host_up GAUGE session=users
	// tailroute_host_up GAUGE session=users
	// tailroute_host_up GAUGE session=users
}
