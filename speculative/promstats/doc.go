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
// _fired_total, _won_total, _lost_total, _suppressed_total{reason} (eligible
// executions not armed) with reason = "budget" (long-run budget spent),
// "burst" (the burst cap), "too_few_hosts", "many_clients" (the load rule:
// one client of many); _deferred_total{reason} (armed
// executions whose hedge the load rule deferred) with reason = "queueing",
// "target_slow", "losing"; _burst_lifted_total (over the burst cap, armed
// because a host was stalled), _no_target_total, _unreserved_total. Gauges:
// tailroute_hedge_in_flight, _delay_seconds, _deferred_delay_seconds,
// _quantile (0..1), _window_requests, _window_hedges, _reserved,
// _target_wait_seconds, _busy (0..1). Package speculative, section
// Metrics, says what the reasons mean.
package promstats
