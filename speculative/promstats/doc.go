// Package promstats exports a speculative.Hedger's counters and current
// settings as Prometheus metrics, read from Hedger.Stats at scrape time. It
// is a separate package so that speculative does not depend on the
// Prometheus client.
//
//	reg.MustRegister(promstats.New(h, prometheus.Labels{"session": "main"}))
//
// Counters (names end in _total, Prometheus naming conventions):
// tailroute_hedge_executions_total, _eligible_total, _armed_total,
// _fired_total, _won_total, _lost_total, _suppressed_total{reason} with
// reason = "budget" (long-run budget spent), "burst" (the burst cap),
// "too_few_hosts"; _burst_lifted_total (over the burst cap, armed because
// a host was stalled), _no_target_total, _unreserved_total. Gauges:
// tailroute_hedge_in_flight, _delay_seconds, _quantile,
// _window_requests, _window_hedges, _reserved.
package promstats
