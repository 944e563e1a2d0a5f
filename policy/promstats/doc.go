// Package promstats exports a policy's per-host state and counters (either
// driver's: policy.Policy or apache/policy.Policy) as Prometheus metrics,
// read from Stats and Counters at scrape time:
//
//	reg.MustRegister(promstats.New(p, prometheus.Labels{"session": "main"}))
//
// It is a separate package so that the policy core does not depend on the
// Prometheus client.
package promstats
