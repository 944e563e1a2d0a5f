// Package promstats exports a policy's per-host state and counters (either
// driver's: policy.Policy or apache/policy.Policy) as Prometheus metrics,
// read from Stats, Counters and ServerLoadCounters at scrape time (no
// background goroutine, nothing on the request path):
//
//	reg.MustRegister(promstats.New(p, promstats.WithSession("main")))
//
// It imports neither driver, and is a separate package so that the policy
// core does not depend on the Prometheus client.
//
// Every metric carries a session label (WithSession, default "default"),
// so the collectors of several policies register side by side in one
// registry; per-host metrics also carry host (address:port) and dc.
// Names, types and units follow the Prometheus conventions: base units
// (seconds; rates per second), _total for counters, a _ratio in 0..1.
//
// The hedger's collector is also a package promstats
// (github.com/tailroute/tailroute/speculative/promstats); importing both,
// alias them:
//
//	import (
//		policyprom "github.com/tailroute/tailroute/policy/promstats"
//		hedgeprom "github.com/tailroute/tailroute/speculative/promstats"
//	)
//
//	reg.MustRegister(policyprom.New(p, policyprom.WithSession("orders")))
//	reg.MustRegister(hedgeprom.New(h, hedgeprom.WithSession("orders")))
//
// Per-host metrics (labels session, host, dc):
//
//	tailroute_host_in_flight                    gauge    requests in flight (os_s)
//	tailroute_host_orphaned                     gauge    requests given up on that the host presumably still serves
//	tailroute_host_response_time_seconds        gauge    EWMA response time (R_s)
//	tailroute_host_service_time_seconds         gauge    EWMA service time from payload feedback (1/mu_s)
//	tailroute_host_queue_size                   gauge    EWMA queue size from payload feedback (q_s)
//	tailroute_host_score_seconds                gauge    C3 score (Psi_s + k/mu_s)
//	tailroute_host_send_rate_per_second         gauge    CUBIC sending rate (srate), per second
//	tailroute_host_receive_rate_per_second      gauge    receive rate (rrate), per second
//	tailroute_host_success_ratio                gauge    weighted success ratio
//	tailroute_host_busy                         gauge    1 if the busy-node condition holds
//	tailroute_host_stalled                      gauge    1 if the host owes responses and is silent past the stall threshold
//	tailroute_host_up                           gauge    1 if the host is up
//	tailroute_host_server_queue_size            gauge    polled server queue (pending + active); with a sample only
//	tailroute_host_server_service_time_seconds  gauge    polled service time; with a sample only
//	tailroute_host_server_load_age_seconds      gauge    age of the polled sample; with a sample only
//	tailroute_host_latency_seconds              summary  attempt latency (see below)
//	tailroute_host_requests_total               counter  attempts finished, any outcome
//	tailroute_host_errors_total                 counter  attempts that failed with trouble or no answer
//	tailroute_host_out_of_zone_total            counter  attempts sent while the host was out of the client's zone (WithLocalRack)
//
// Policy metrics (label session): the counters of Counters,
// tailroute_backpressure_waits_total, _sent_over_rate_total, _probes_total,
// _demoted_total, _abandoned_total, _unrouted_total, _out_of_zone_total; and of server-load
// polling (ServerLoadCounters; zero without polling)
// tailroute_server_load_polls_total, _poll_failures_total, _samples_total
// (counters), tailroute_server_load_skipped_hosts, _queue_max,
// _concurrency_weight, _polls_per_second (this client's polls per second
// per node, over about the last 5 seconds) and _poll_interval_seconds (the
// interval in force; see tailroute.WithPollBudget) (gauges).
//
// tailroute_host_latency_seconds is a constant summary built at scrape time
// (prometheus.MustNewConstSummary, not a client_golang Summary): its
// quantiles 0.5 and 0.99 are the tracker's over its recent window (absent
// with too few samples), its _count and _sum cover every measured attempt
// since the host was added.
package promstats
