package speculative

import (
	"context"
	"errors"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/tailroute/tailroute/internal/hedge"
)

// RecorderConfig configures a Recorder; zero fields take their defaults
// (Window 10s, MinSamples 100, Clock tracker.SystemClock).
type RecorderConfig = hedge.RecorderConfig

// Recorder is the lock-free sliding-window latency histogram
// (hedge.Recorder) fed by the v2 driver's QueryObserver and BatchObserver.
type Recorder struct{ r *hedge.Recorder }

// NewRecorder returns a Recorder; it reports an error naming a bad field.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	r, err := hedge.NewRecorder(cfg)
	if err != nil {
		return nil, err
	}
	return &Recorder{r: r}, nil
}

// Record adds one latency sample, observed now (on RecorderConfig.Clock).
func (r *Recorder) Record(latency time.Duration) { r.r.Record(latency) }

// LatencyQuantile returns the q-quantile of the latencies in the window;
// false with too few samples or q outside (0, 1].
func (r *Recorder) LatencyQuantile(q float64) (time.Duration, bool) { return r.r.LatencyQuantile(q) }

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
