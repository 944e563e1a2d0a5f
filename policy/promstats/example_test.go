package promstats_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gocql/gocql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tailroute/tailroute/policy"
	"github.com/tailroute/tailroute/policy/promstats"
	"github.com/tailroute/tailroute/sim"
)

// nopLogger keeps gocql's connection messages out of the example's output.
type nopLogger struct{}

func (nopLogger) Print(...any)          {}
func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

// Example exports a policy's per-host state and counters to Prometheus.
// Register the collector once per policy; serve the registry as usual
// (promhttp.HandlerFor(reg, promhttp.HandlerOpts{})). An in-process
// simulated 3-node cluster (package sim) stands in for Cassandra so that the
// example runs anywhere.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := sim.Start(ctx, sim.Config{Nodes: 3, Model: sim.ServiceModel{ZeroService: true}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	p, err := policy.New()
	if err != nil {
		log.Fatal(err)
	}
	cluster := gocql.NewCluster(c.Hosts()...)
	cluster.Port = c.Port()
	cluster.Logger = nopLogger{}
	if err := policy.Wire(cluster, p); err != nil {
		log.Fatal(err)
	}
	session, err := cluster.CreateSession()
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(promstats.New(p, prometheus.Labels{"strategy": p.Strategy().String()}))

	if err := session.Query("CREATE KEYSPACE demo WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}").Exec(); err != nil {
		log.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range fams {
		fmt.Printf("%s %s series=%d\n", f.GetName(), f.GetType(), len(f.GetMetric()))
	}
	// Output:
	// tailroute_abandoned_total COUNTER series=1
	// tailroute_backpressure_waits_total COUNTER series=1
	// tailroute_host_busy GAUGE series=3
	// tailroute_host_errors_total COUNTER series=3
	// tailroute_host_in_flight GAUGE series=3
	// tailroute_host_latency_seconds SUMMARY series=3
	// tailroute_host_orphaned GAUGE series=3
	// tailroute_host_queue_size GAUGE series=3
	// tailroute_host_receive_rate GAUGE series=3
	// tailroute_host_requests_total COUNTER series=3
	// tailroute_host_response_time_seconds GAUGE series=3
	// tailroute_host_score_seconds GAUGE series=3
	// tailroute_host_send_rate GAUGE series=3
	// tailroute_host_service_time_seconds GAUGE series=3
	// tailroute_host_success_ratio GAUGE series=3
	// tailroute_host_up GAUGE series=3
	// tailroute_probes_total COUNTER series=1
	// tailroute_sent_over_rate_total COUNTER series=1
	// tailroute_unrouted_total COUNTER series=1
}
