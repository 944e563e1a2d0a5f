// Package track is the engine's per-host state (the tracker): what it
// keeps, how each signal moves it, and the rules that depend on time. Its
// configuration (Config, RateConfig), clocks and snapshots are the public
// package github.com/tailroute/tailroute/tracker.
//
// It keeps outstanding requests (os_s), EWMAs of response time (R_s), of the
// server-reported queue size (q_s) and service time (1/mu_s), the time of the
// last response, rolling response/success buckets with a sticky bucket (as in
// the success-prioritized fallback cascade), a cheap rolling log-linear
// latency histogram per host (merged on demand for the cluster-wide
// LatencyQuantile, and for the host's median, which LatencyMedian keeps
// until the histogram changes), and the per-host CUBIC rate controller of the C3
// paper (Algorithm 2, with the sending-rate limiter of Algorithm 1).
//
// The package is free of driver types: hosts are keyed by a host ID string and
// all inputs are plain values, so adapters for other drivers can reuse it.
// Every hot-path update is a handful of atomic operations on the host's own
// state; there is no global lock. Time comes from an injectable Clock so that
// every time-based rule can be tested deterministically (see tracker.ManualClock);
// hot-path methods take the caller's reading of it as now (see tracker.Clock).
//
// Which signal drives what (the policy feeds these):
//
//	Begin (host handed out)   os_s += 1
//	End   (attempt finished)  os_s -= 1, exactly once per Begin
//	Observe(latency, outcome) R_s, latency histograms, response/success
//	                          buckets, last-response time, receive rate,
//	                          Algorithm 2 (rate adaptation); a Cancelled
//	                          outcome is no response: see orphans below;
//	                          a Failure's or Lost's latency moves R_s and
//	                          the histograms only when above R_s (an error
//	                          is a lower bound: fast errors must not make a
//	                          failing host look fast)
//	Feedback(q, serviceTime)  EWMA q_s and 1/mu_s
//	ConsumeToken              sending-rate window (Algorithm 1)
//
// Two time-based signals besides the EWMAs: View.Silence, how long a host
// has owed a response without giving one (a stall shows there from its first
// millisecond, long before the stalled requests return to move R_s), and
// Config.ForgetAfter, after which an idle host's R_s and q_s fade toward the
// other hosts' mean and 0 (an estimate that only a response could refresh
// would otherwise keep a once-slow host avoided for good).
//
// Change points in health (the streak rule): three failures in a
// row restart a host's success window with just those failures (failing
// now, whatever its earlier successes), and the first success after such a
// run restarts it with just that success (healthy again): a host that
// starts failing is avoided at once, and one that recovers is healthy at
// its first successful probe (Host.ClaimProbe: one per interval) instead of
// after buckets of successes that probes alone would take to gather.
// Config.AgeDecay does the same for R_s: a sample weighs more the older
// the estimate it updates, so a host avoided while slow is seen to be fast
// again after a few answers. Config.SampleCap bounds what one sample can
// do (at most SampleCap x R_s, default 4): a stall's trapped requests come
// back all at once, late by the stall's length, and must not make the
// host, answering normally again, look several times slower than the hosts
// whose stall is still to come.
//
// Orphans: CQL has no way to cancel a request, so an attempt the client gives
// up on (a hedge won elsewhere, the caller's context expired) is still queued
// on the host. View.Orphaned counts those until the host answers a request
// sent after them (or ForgetAfter passes), and rankers add them to os_s. The
// time such an attempt had been outstanding is a lower bound of its latency
// and moves R_s when it exceeds it: the slow attempts are exactly the ones a
// hedge cancels, so ignoring them would hide a slow host's slowness from C3
// whenever hedging is on.
package track
