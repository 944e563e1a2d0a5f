package paperbase

import (
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// RRRateLimited is the paper's RR (§6: "as in C3, each client maintains a
// per-replica rate limiter ... round-robin in place of C3's replica
// ranking"): absim's "RR" / "round_robin", which the published runs start
// with --backpressure. Per replica group (keyed by replicas[0]) the try
// order rotates by one at every Choose (absim advances it at every sort,
// backlog retries included); the first replica within its rate gets the
// request, else retryAfter is the shortest wait. Rates adapt by CUBIC as
// C3's.
type RRRateLimited struct {
	next  []int32 // rotation index per group
	order []int32 // scratch: the replicas in rotation order
	rc    rateControl
}

// NewRRRateLimited returns absim's RR with C3's published rate control.
func NewRRRateLimited(cfg selector.SelectorConfig) selector.Selector {
	return NewRRRateLimitedWith(cfg, DefaultRateParams())
}

// NewRRRateLimitedWith returns absim's RR with the given rate control.
func NewRRRateLimitedWith(cfg selector.SelectorConfig, p RateParams) *RRRateLimited {
	servers := numServers(cfg)
	return &RRRateLimited{next: make([]int32, servers), order: make([]int32, servers), rc: newRateControl(p, servers)}
}

// Choose tries the group's replicas from its rotation index on.
func (r *RRRateLimited) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	if len(replicas) == 0 {
		return -1, 0
	}
	t := ms(now)
	g := replicas[0]
	r.rc.applyForce(g, t)
	n := int32(len(replicas))
	idx := r.next[g] % n
	r.next[g] = (idx + 1) % n
	if len(replicas) > len(r.order) {
		r.order = make([]int32, len(replicas))
	}
	order := r.order[:n]
	for i := range n {
		order[i] = replicas[(idx+i)%n]
	}
	return r.rc.first(order, g, t)
}

// Sent charges a shadow read (a send Choose did not return) to its bucket.
func (r *RRRateLimited) Sent(_ time.Duration, s int32) { r.rc.sent(s) }

// Done updates the receive rate and the CUBIC sending rate for s.
func (r *RRRateLimited) Done(now time.Duration, s int32, _ time.Duration, _ selector.Feedback) {
	r.rc.done(s, now)
}

// Rate returns the client's sending rate for s, in requests per Interval.
func (r *RRRateLimited) Rate(s int32) float64 { return r.rc.lim[s].rate }
