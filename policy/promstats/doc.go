// Package promstats exports a policy.Policy's per-host state and counters as
// Prometheus metrics. It is a separate package so that the policy core does
// not depend on the Prometheus client.
package promstats
