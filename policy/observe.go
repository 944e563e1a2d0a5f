package policy

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/tracker"
)

// observer is the gocql.QueryObserver and gocql.BatchObserver installed by
// Wire. gocql calls it synchronously after every attempt (before Mark) with
// the attempt's host, start and end time and real error.
type observer struct {
	p         *Policy
	next      gocql.QueryObserver
	nextBatch gocql.BatchObserver
}

func (o *observer) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	if o.p.r.IsPoll(ctx) {
		return // the policy's own server-load poll: not user traffic, not passed on
	}
	o.p.observe(ctx, q.Host, q.Start, q.End, q.Err)
	if o.next != nil {
		o.next.ObserveQuery(ctx, q)
	}
}

func (o *observer) ObserveBatch(ctx context.Context, b gocql.ObservedBatch) {
	o.p.observe(ctx, b.Host, b.Start, b.End, b.Err)
	if o.nextBatch != nil {
		o.nextBatch.ObserveBatch(ctx, b)
	}
}

// Observer returns the observer that Wire installs, for applications that
// set their own observer on individual queries (gocql's Query.Observer
// replaces the session's): call it from yours so the policy keeps measuring.
func (p *Policy) Observer() interface {
	gocql.QueryObserver
	gocql.BatchObserver
} {
	return &observer{p: p}
}

func (p *Policy) observe(ctx context.Context, host *gocql.HostInfo, start, end time.Time, err error) {
	if host == nil || p.r.IsPoll(ctx) {
		return
	}
	p.r.Observe(host, end.Sub(start), classify(ctx, err))
}

// classify maps an attempt's error to a tracker outcome:
//
//	nil, ErrNotFound, request errors of the query itself
//	  (syntax, invalid, unauthorized, config, already exists,
//	  unprepared: codes 0x2000-0x25ff)                        Success
//	context cancelled or expired (caller gave up, speculative
//	  loser), or any error once ctx is done                   Cancelled
//	other server errors (overloaded, unavailable,
//	  bootstrapping, read/write timeout or failure, server)   Failure
//	ErrTimeoutNoResponse, connection errors, anything else    Lost
func classify(ctx context.Context, err error) tracker.Outcome {
	if err == nil || err == gocql.ErrNotFound {
		return tracker.Success
	}
	if err == context.Canceled || err == context.DeadlineExceeded ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		(ctx != nil && ctx.Err() != nil) {
		return tracker.Cancelled
	}
	if err == gocql.ErrTimeoutNoResponse {
		return tracker.Lost
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		if c := re.Code(); c >= gocql.ErrCodeSyntax && c < 0x2600 {
			return tracker.Success
		}
		return tracker.Failure
	}
	return tracker.Lost
}

// RecordFeedback reads the server feedback that a load-reporting server (the
// simulator with Feedback on) attaches to a response as custom payload: queue
// length (q_s) and service time in microseconds (1/mu_s), each an 8-byte
// big-endian uint64 under the keys of WithFeedbackKeys. gocql exposes the
// payload only on the Iter, so the application calls this after reading a
// result and before Iter.Close (Query.Exec closes the Iter itself: use
// Query.Iter for writes that should report feedback). It reports whether
// feedback was found. Without feedback C3 uses client-side estimates (see
// doc.go).
func (p *Policy) RecordFeedback(iter *gocql.Iter) bool {
	if iter == nil {
		return false
	}
	host := iter.Host()
	payload := iter.GetCustomPayload()
	if host == nil || payload == nil {
		return false
	}
	qb, okq := payload[p.feedbackQ]
	sb, oks := payload[p.feedbackST]
	if !okq || !oks || len(qb) != 8 || len(sb) != 8 {
		return false
	}
	return p.r.Feedback(host, float64(binary.BigEndian.Uint64(qb)), time.Duration(binary.BigEndian.Uint64(sb))*time.Microsecond)
}
