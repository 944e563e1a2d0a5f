package speculative

import (
	"context"
	"errors"
	"time"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/hedge"
	"github.com/tailroute/tailroute/tracker"
)

// RecorderConfig configures a Recorder. Zero fields take their defaults.
type RecorderConfig struct {
	// Window is how much recent history quantiles are computed over;
	// default 10s. Samples are kept in 4 sub-windows of Window/4 plus the
	// current one, so a sample counts for between Window and 5/4 Window.
	// Allowed 4ms..24h.
	Window time.Duration
	// MinSamples is how many samples the window must hold before
	// LatencyQuantile reports a value; default 100 (a p95 needs >> 20).
	// Allowed 1..2^30.
	MinSamples int
	// Clock is the time source; default tracker.SystemClock (tests use
	// tracker.ManualClock).
	Clock tracker.Clock
}

// Recorder is a small lock-free latency source: a sliding-window log-linear
// histogram of attempt latencies fed by the driver's QueryObserver (and
// BatchObserver). It lets hedging adapt with the driver's built-in host
// selection policies, which have no latency tracker of their own. It is
// the tracker's rolling log-linear histogram over the last Window: a
// quantile is reported at most 6.25% above the true one. Recorded are
// successes, gocql.ErrNotFound and attempts cancelled because another
// attempt won (a lower bound of their latency, so hedging does not shrink
// the tail it measures); other errors are not latency samples.
type Recorder struct{ r *hedge.Recorder }

// NewRecorder returns a Recorder; it reports an error naming a bad field.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	r, err := hedge.NewRecorder(hedge.RecorderConfig(cfg))
	if err != nil {
		return nil, err
	}
	return &Recorder{r: r}, nil
}

// Record adds one latency sample, observed now (on RecorderConfig.Clock).
func (r *Recorder) Record(latency time.Duration) { r.r.Record(latency) }

// LatencyQuantile returns the q-quantile (0 < q <= 1) of the latencies in
// the window, rounded up to its histogram bucket (at most 6.25%); false
// when the window holds fewer than MinSamples samples or q is out of
// range.
func (r *Recorder) LatencyQuantile(q float64) (time.Duration, bool) { return r.r.LatencyQuantile(q) }

// recordable says whether an attempt ending with err is a latency sample:
// a success, a cancelled loser (censored sample) or the driver's not-found.
func recordable(err error) bool {
	return err == nil || errors.Is(err, context.Canceled) || errors.Is(err, gocql.ErrNotFound)
}

// ObserveQuery implements gocql.QueryObserver.
func (r *Recorder) ObserveQuery(_ context.Context, o gocql.ObservedQuery) {
	if recordable(o.Err) {
		r.r.Record(o.End.Sub(o.Start))
	}
}

// ObserveBatch implements gocql.BatchObserver.
func (r *Recorder) ObserveBatch(_ context.Context, o gocql.ObservedBatch) {
	if recordable(o.Err) {
		r.r.Record(o.End.Sub(o.Start))
	}
}
