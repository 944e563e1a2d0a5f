package track

import (
	"math"
	"time"
)

// View is what ranking needs to know about a host, read at one instant.
type View struct {
	InFlight      int64         // os_s
	ResponseTime  float64       // R_s in ns; the mean R_s of the hosts with samples (or DefaultResponseTime) when the host has none; pulled toward the other hosts' mean when the host is idle and stale (Config.ForgetAfter)
	ServiceTime   float64       // 1/mu_s in ns: feedback EWMA, else ResponseTime
	QueueSize     float64       // q_s: feedback EWMA, else 0
	HasSamples    bool          // R_s is the host's own
	HasFeedback   bool          // ServiceTime and QueueSize come from the server
	SuccessRate   float64       // weighted success ratio of the rolling buckets, 1 with no data
	SinceResponse time.Duration // time since the last response (or since the host was added/reset)
	// Silence is how long the host has owed a response without giving one:
	// the time since the later of its last response and the moment its
	// outstanding count last rose from zero; 0 when nothing is outstanding.
	// It grows from the first moment of a stall (a GC pause, a frozen
	// process), long before the stalled requests return to move R_s.
	Silence time.Duration
	// Orphaned counts attempts the client gave up on (Cancelled: a losing
	// hedge, an expired context) that the host is presumably still serving:
	// CQL has no cancel. Not part of InFlight (they owe no response the
	// client will see, so they do not make Silence); rankers add them to
	// the outstanding count (os_s) of the C3 score.
	Orphaned int64
	// ServerLoadWeight is the weight (0..1) of the polled server-load
	// sample's queue in QueueSize (its service time, which lasts longer,
	// has its own: see Host.ServerLoad and ServerLoadWeight); 0 without a
	// usable sample or with payload feedback. ServerLoadAge is that
	// sample's age.
	ServerLoadWeight float64
	ServerLoadAge    time.Duration
	// ServerServiceTime is the polled 1/mu_s in ns (the mean over every
	// client's requests) while the sample counts; 0 without one.
	ServerServiceTime float64
	// Workers is W_s, the requests the server serves at once, as polled
	// (Host.ServerWorkers); 0 when unknown.
	Workers float64
}

// View reads the host's ranking inputs at time now.
func (h *Host) View(now time.Duration) (v View) {
	h.ReadView(&v, now)
	return v
}

// ReadView is View into *v (every field set): the hot path reads a View
// per replica per request into one variable instead of copying one out.
func (h *Host) ReadView(v *View, now time.Duration) {
	*v = View{}
	t := h.t
	v.InFlight, v.Orphaned, v.Workers = h.InFlight(), h.Orphaned(now), float64(h.load.workers.Load())
	if r, ok := h.resp.get(); ok {
		v.ResponseTime, v.HasSamples = r, true
	} else {
		v.ResponseTime = t.priorResponseTime()
	}
	if s, ok := h.svc.get(); ok {
		v.ServiceTime, v.HasFeedback = s, true
		v.QueueSize, _ = h.queue.get()
	} else {
		v.ServiceTime = v.ResponseTime
	}
	v.SuccessRate = h.health.successRate(now, t.successFloor())
	v.SinceResponse = now - time.Duration(h.lastResp.Load())
	if v.InFlight > 0 {
		v.Silence = h.silence(now, v.SinceResponse)
	} else if f, ok := h.forgetFactor(v.SinceResponse); ok {
		// Idle and not heard from for a while: trust old estimates less.
		if v.HasSamples {
			prior := t.priorResponseTimeExcept(h)
			v.ResponseTime = prior + (v.ResponseTime-prior)*f
			if !v.HasFeedback {
				v.ServiceTime = v.ResponseTime
			}
		}
		v.QueueSize *= f
	}
	if !v.HasFeedback && h.applyServerLoad(v, now) {
		floorResponseTime(v)
	}
}

// forgetFactor is the weight old estimates keep after since without a
// response (Config.ForgetAfter), and whether any forgetting applies.
func (h *Host) forgetFactor(since time.Duration) (float64, bool) {
	fa := h.t.cfg.ForgetAfter
	if fa <= 0 || since <= fa {
		return 1, false
	}
	return math.Exp(-float64(since-fa) / float64(fa)), true
}

// silence is View.Silence for a host with requests outstanding.
func (h *Host) silence(now, sinceResponse time.Duration) time.Duration {
	s := now - time.Duration(h.owedFrom.Load())
	if sinceResponse < s {
		s = sinceResponse
	}
	if s < 0 {
		return 0
	}
	return s
}

// Silence returns View.Silence: how long the host has owed a response
// without giving one (0 when nothing is outstanding).
func (h *Host) Silence(now time.Duration) time.Duration {
	if h.InFlight() == 0 {
		return 0
	}
	return h.silence(now, h.SinceResponse(now))
}

// SinceResponse returns the time since the last response (or since the host
// was added or reset).
func (h *Host) SinceResponse(now time.Duration) time.Duration {
	return now - time.Duration(h.lastResp.Load())
}

// Busy reports the DataStax busy-node condition: at least minInFlight
// outstanding requests (orphaned ones included) and no response for at
// least noResponse.
func (h *Host) Busy(now time.Duration, minInFlight int64, noResponse time.Duration) bool {
	return busy(h.Outstanding(now), h.SinceResponse(now), minInFlight, noResponse)
}

// Busy is Host.Busy read from a View.
func (v View) Busy(minInFlight int64, noResponse time.Duration) bool {
	return busy(v.Outstanding(), v.SinceResponse, minInFlight, noResponse)
}

// busy is the DataStax busy-node rule, written once for Host and View.
func busy(outstanding int64, sinceResponse time.Duration, minInFlight int64, noResponse time.Duration) bool {
	return outstanding >= minInFlight && sinceResponse >= noResponse
}
