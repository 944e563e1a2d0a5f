// Package tracker keeps the per-host measurements that drive replica
// selection. An application configures them and reads them; the policy
// drives the rest:
//
//	p, err := policy.New(
//		tailroute.WithTracker(tracker.Config{EWMAAlpha: 0.2}), // zero fields keep their defaults
//		tailroute.WithRate(tracker.RateConfig{SMax: 5}),       // CUBIC (C3 Algorithm 2)
//		tailroute.WithClock(tracker.NewManualClock(0)),        // tests: time moves only when told
//	)
//	for _, h := range p.Stats() {
//		_ = h.HostSnapshot // os_s, R_s, q_s, 1/mu_s, rates, success rate, quantiles
//	}
//
// Config sets the EWMA weight, the windows and the time-based rules of the
// measurements (each field documents its default and allowed range),
// RateConfig the CUBIC rate controller, Clock the time source (SystemClock;
// ManualClock for tests; a TimerClock also times the server-load poller),
// and HostSnapshot is what a policy's Stats reports of one host. The rules
// these measurements feed are specified in package
// github.com/tailroute/tailroute.
package tracker
