package track

import (
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// LatencyQuantile returns the q-quantile of this host's recent latencies and
// false when fewer than MinQuantileSamples were recorded in the window.
func (h *Host) LatencyQuantile(q float64) (time.Duration, bool) {
	if !(q > 0 && q <= 1) {
		return 0, false
	}
	d, n := h.hist.Quantile(h.t.clock.Now(), q)
	return d, n >= uint64(h.t.cfg.MinQuantileSamples)
}

// Snapshot returns a copy of the host's state.
func (h *Host) Snapshot() tracker.HostSnapshot {
	now := h.t.clock.Now()
	s := tracker.HostSnapshot{ID: h.id, InFlight: h.InFlight(), Orphaned: h.Orphaned(now), ServerWorkers: h.load.workers.Load()}
	if r, ok := h.resp.get(); ok {
		s.ResponseTime = time.Duration(r)
	}
	if v, ok := h.svc.get(); ok {
		s.ServiceTime, s.HasFeedback = time.Duration(v), true
		s.QueueSize, _ = h.queue.get()
	}
	if at := h.load.at.Load(); at != 0 {
		s.HasServerLoad, s.ServerLoadAge = true, now-time.Duration(at)
		s.ServerQueue = h.ServerQueue()
		if v, ok := h.load.svc.get(); ok {
			s.ServerServiceTime = time.Duration(v)
		}
	}
	s.Samples = h.samples.Load()
	s.Responses, s.Successes = h.health.counts(now)
	s.SuccessRate = h.health.successRate(now, h.t.successFloor())
	s.SinceResponse = h.SinceResponse(now)
	s.Silence = h.Silence(now)
	s.Rate = h.rate.rate()
	s.ReceiveRate = h.rate.receiveRate(now)
	s.SentInWindow = h.rate.sentInWindow(now)
	s.RateDecreases = h.rate.decs.Load()
	s.RateIncreases = h.rate.incs.Load()
	var n uint64
	s.P50, n = h.hist.Quantile(now, 0.5)
	s.P99, _ = h.hist.Quantile(now, 0.99)
	s.QuantilesOK = n >= uint64(h.t.cfg.MinQuantileSamples)
	s.TotalMeasured = h.totalMeasured.Load()
	s.TotalAttempts = s.TotalMeasured + h.totalCancelled.Load()
	s.TotalLatency = time.Duration(h.totalLatencyNs.Load())
	s.TotalErrors = h.totalErrors.Load()
	return s
}
