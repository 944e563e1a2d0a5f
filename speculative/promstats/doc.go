// Package promstats exports a speculative.Hedger's counters and current
// settings as Prometheus metrics, read from Hedger.Stats at scrape time (no
// background goroutine, nothing on the request path). It serves the v1 and
// v2 hedgers and imports neither driver; it is a separate package so that
// speculative does not depend on the Prometheus client.
//
// Every metric carries a session label (WithSession, default "default"), so
// the collectors of several hedgers register side by side in one registry.
// The policy's collector is also a package promstats
// (github.com/tailroute/tailroute/policy/promstats); importing both, alias
// them:
//
//	import (
//		policyprom "github.com/tailroute/tailroute/policy/promstats"
//		hedgeprom "github.com/tailroute/tailroute/speculative/promstats"
//	)
//
//	reg.MustRegister(policyprom.New(p, policyprom.WithSession("orders")))
//	reg.MustRegister(hedgeprom.New(h, hedgeprom.WithSession("orders")))
//
// Counters (names end in _total, Prometheus naming conventions):
// tailroute_hedge_executions_total, _eligible_total, _armed_total,
// _fired_total, _won_total, _lost_total, _suppressed_total{reason} with
// reason = "budget" (long-run budget spent), "losing" (the budget, shrunk
// while hedges mostly lose, spent), "burst" (the burst cap), "queueing" and
// "target_slow" (the opt-in load rule), "too_few_hosts"; _burst_lifted_total (over the burst cap, armed because
// a host was stalled), _no_target_total, _unreserved_total. Gauges:
// tailroute_hedge_in_flight, _delay_seconds, _quantile (0..1),
// _window_requests, _window_hedges, _reserved.
package promstats
