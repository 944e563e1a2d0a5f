package tracker

import (
	"math"
	"time"
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

// HostSnapshot is a point-in-time copy of a host's state.
type HostSnapshot struct {
	ID            string
	InFlight      int64         // os_s
	Orphaned      int64         // see View.Orphaned
	ResponseTime  time.Duration // R_s (0 when no sample)
	ServiceTime   time.Duration // 1/mu_s from feedback (0 when none)
	QueueSize     float64       // q_s from feedback
	HasFeedback   bool
	Samples       uint64  // attempts observed since the host was added or reset
	Responses     uint64  // finished attempts in the rolling health window
	Successes     uint64  // successful attempts in the rolling health window
	SuccessRate   float64 // weighted success ratio (see View)
	SinceResponse time.Duration
	Silence       time.Duration // see View.Silence
	Rate          float64       // srate, requests per rate Interval
	ReceiveRate   float64       // rrate, responses per rate Interval
	SentInWindow  uint64        // requests sent in the current rate window
	RateDecreases uint64        // Algorithm 2 decrease events
	RateIncreases uint64        // Algorithm 2 increase events
	P50, P99      time.Duration
	QuantilesOK   bool // P50/P99 are based on at least MinQuantileSamples samples

	// Cumulative since the host was added, not cleared by Reset (what
	// Prometheus counters need): attempts observed with any outcome, those
	// measured (every outcome but Cancelled) and the sum of their latencies,
	// and those that ended in Failure or Lost.
	TotalAttempts uint64
	TotalMeasured uint64
	TotalLatency  time.Duration
	TotalErrors   uint64

	// ServerQueue and ServerServiceTime are the latest polled server-load
	// sample (q_s, smoothed 1/mu_s; see Host.ServerLoad) and ServerLoadAge
	// its age; HasServerLoad is false before the first sample.
	ServerQueue       float64
	ServerServiceTime time.Duration
	ServerLoadAge     time.Duration
	HasServerLoad     bool
	ServerWorkers     int64 // W_s as polled (Host.ServerWorkers); 0 = unknown
}

// Snapshot returns a copy of the host's state.
func (h *Host) Snapshot() HostSnapshot {
	now := h.t.clock.Now()
	s := HostSnapshot{ID: h.id, InFlight: h.InFlight(), Orphaned: h.Orphaned(now), ServerWorkers: h.load.workers.Load()}
	if r, ok := h.resp.get(); ok {
		s.ResponseTime = time.Duration(r)
	}
	if v, ok := h.svc.get(); ok {
		s.ServiceTime, s.HasFeedback = time.Duration(v), true
		s.QueueSize, _ = h.queue.get()
	}
	if at := h.load.at.Load(); at != 0 {
		s.HasServerLoad, s.ServerLoadAge = true, now-time.Duration(at)
		s.ServerQueue = math.Float64frombits(h.load.queue.Load())
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
