package speculative

import (
	"time"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/hedge"
)

// Stats is a snapshot of the Hedger's counters since it was created; its
// fields are documented in package tailroute.
type Stats = tailroute.Hedging

// Hedger is an adaptive, budgeted hedged-request controller for the driver
// (Tail at Scale: "defer sending a secondary request until the first
// request has been outstanding for more than the 95th-percentile expected
// latency"). It does nothing by itself: wrap a HostSelectionPolicy with
// Wrap (or call Wire) to hedge the idempotent queries of a session. The
// driver-free logic is hedge.Hedger; this type adds the driver's wrapper.
//
// A Hedger is safe for concurrent use. Share one Hedger between sessions
// only if they should share one budget.
type Hedger struct {
	core *hedge.Hedger
	rec  *Recorder // the built-in source, when no WithSource was given
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

// Recorder returns the built-in latency recorder, or nil when the Hedger
// follows a source given with WithSource.
func (h *Hedger) Recorder() *Recorder { return h.rec }

// Delay returns the current hedge delay: the configured quantile of the
// source's latencies clamped to [min, max], or max while the source has
// no estimate.
func (h *Hedger) Delay() time.Duration { return h.core.Delay() }

// Refresh recomputes the hedge delay from the source now. The Hedger also
// does it by itself when it is due (package doc, "Hedge delay"), on the
// path of an eligible query.
func (h *Hedger) Refresh() { h.core.Refresh() }

// Quantile returns the effective quantile the delay currently follows: the
// configured one, or higher while ordinary hedging presses on the budget.
func (h *Hedger) Quantile() float64 { return h.core.Quantile() }

// Stats returns a snapshot of the counters.
func (h *Hedger) Stats() Stats { return h.core.Stats() }

// compile-time checks
var (
	_ tailroute.LatencySource = (*Recorder)(nil)
	_ gocql.QueryObserver     = (*Recorder)(nil)
	_ gocql.BatchObserver     = (*Recorder)(nil)
)
