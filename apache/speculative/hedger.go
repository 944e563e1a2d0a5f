package speculative

import (
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/hedge"
)

// Stats is a snapshot of the Hedger's counters since it was created; its
// fields are documented in package tailroute. Eligible counts executions armed
// with Arm that are idempotent and not opted out.
type Stats = tailroute.Hedging

// Hedger is an adaptive, budgeted hedged-request controller for the v2
// driver. Wrap a HostSelectionPolicy with Wrap (or call Wire) and arm
// executions with Arm. Safe for concurrent use.
type Hedger struct {
	core *hedge.Hedger
	rec  *Recorder
}

// New returns a Hedger. Options are validated once, here: every bad option
// is reported, joined in one error, each naming the option, the field, its
// value and the allowed range.
func New(opts ...tailroute.Option) (*Hedger, error) {
	c, err := hedge.New(opts...)
	if err != nil {
		return nil, err
	}
	h := &Hedger{core: c}
	if r := c.Recorder(); r != nil {
		h.rec = &Recorder{r: r}
	}
	return h, nil
}

// Recorder returns the built-in latency recorder, nil with WithSource.
func (h *Hedger) Recorder() *Recorder { return h.rec }

// Delay returns the current hedge delay.
func (h *Hedger) Delay() time.Duration { return h.core.Delay() }

// Refresh recomputes the hedge delay from the source now.
func (h *Hedger) Refresh() { h.core.Refresh() }

// Quantile returns the quantile the delay follows now.
func (h *Hedger) Quantile() float64 { return h.core.Quantile() }

// Stats returns a snapshot of the counters.
func (h *Hedger) Stats() Stats { return h.core.Stats() }

var (
	_ gocql.SpeculativeExecutionPolicy = (*execSpec)(nil)
	_ tailroute.LatencySource          = (*Recorder)(nil)
	_ gocql.QueryObserver              = (*Recorder)(nil)
	_ gocql.BatchObserver              = (*Recorder)(nil)
)
