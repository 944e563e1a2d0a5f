package track

import "time"

// ClaimProbe reports whether the caller may send the host a recovery probe
// at now, and if so records the claim: at most one claim succeeds per
// interval `every`, counted from the later of the last successful claim and
// the last time the host's outstanding count rose from zero (an attempt
// sent to an idle host, probe or not, is as good as a probe). The claim is
// a compare-and-swap, so concurrent callers cannot both win it.
//
// Rule and trade-off: probes of a host that is avoided for failing cost
// one attempt each while it still fails and are the only way its recovery
// is seen. One probe per interval per tracker (per client) keeps that cost
// a fixed rate, falling as a share when the client's load grows, and bounds
// the time until a recovered host is seen to one interval; a per-request
// probe probability would instead scale the cost with load and leave the
// wait unbounded at low load.
func (h *Host) ClaimProbe(now, every time.Duration) bool {
	old := h.probedAt.Load()
	last := max(old, h.owedFrom.Load())
	if now-time.Duration(last) < every {
		return false
	}
	return h.probedAt.CompareAndSwap(old, int64(now))
}
