package paperbase

import (
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// ORA is the paper's Oracle (absim's "ORA" / "clairvoyant", run without
// --backpressure): the replica with the least (1 + requests queued or in
// service) × current mean service time, read from Env at choice time;
// first in replicas' order on ties.
type ORA struct{ env selector.Env }

// NewORA returns absim's ORA.
func NewORA(cfg selector.SelectorConfig) selector.Selector {
	numServers(cfg)
	return &ORA{env: cfg.Env}
}

// Cost is ORA's key for s: (1 + queue) × mean service time, in ns.
func (o *ORA) Cost(s int32) float64 {
	q, mean := o.env.Oracle(s)
	return float64(1+q) * float64(mean)
}

// Choose returns the replica of least Cost.
func (o *ORA) Choose(_ time.Duration, replicas []int32) (int32, time.Duration) {
	if len(replicas) == 0 {
		return -1, 0
	}
	best, bestCost := replicas[0], o.Cost(replicas[0])
	for _, s := range replicas[1:] {
		if c := o.Cost(s); c < bestCost {
			best, bestCost = s, c
		}
	}
	return best, 0
}

// Sent does nothing: ORA needs no client state.
func (o *ORA) Sent(time.Duration, int32) {}

// Done does nothing.
func (o *ORA) Done(time.Duration, int32, time.Duration, selector.Feedback) {}
