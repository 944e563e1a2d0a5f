package paperbase

import (
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// LOR is Least Outstanding Requests (absim's "LOR" / "pending", run
// without --backpressure): the replica this client has the fewest requests
// in flight to (shadow reads included), first in replicas' order on ties.
type LOR struct{ pending []int }

// NewLOR returns absim's LOR.
func NewLOR(cfg selector.SelectorConfig) selector.Selector {
	return &LOR{pending: make([]int, numServers(cfg))}
}

// Choose returns the replica with the fewest outstanding requests.
func (l *LOR) Choose(_ time.Duration, replicas []int32) (int32, time.Duration) {
	if len(replicas) == 0 {
		return -1, 0
	}
	best := replicas[0]
	for _, s := range replicas[1:] {
		if l.pending[s] < l.pending[best] {
			best = s
		}
	}
	return best, 0
}

// Sent counts an outstanding request to s.
func (l *LOR) Sent(_ time.Duration, s int32) { l.pending[s]++ }

// Done uncounts it when the response arrives.
func (l *LOR) Done(_ time.Duration, s int32, _ time.Duration, _ selector.Feedback) {
	if l.pending[s] > 0 {
		l.pending[s]--
	}
}
