package policy

import (
	"context"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/payload"
	"github.com/tailroute/tailroute/internal/track"
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

// classify maps an attempt's error to a tracker outcome (the rules of
// cqlerr.Classify: request errors of the query itself count as answered,
// cancelled attempts as orphans, server errors as failures, no answer as
// lost).
func classify(ctx context.Context, err error) track.Outcome {
	return cqlerr.Classify[gocql.RequestError](ctx, err, sentinels)
}

// sentinels are the driver's sentinel errors that classify tells apart.
var sentinels = cqlerr.Sentinels{NotFound: gocql.ErrNotFound, NoResponse: gocql.ErrTimeoutNoResponse}

// init registers the reader of the simulator's payload feedback
// (internal/payload; not part of the API).
func init() {
	payload.Register(func(pol, host any, pl map[string][]byte) (found, ok bool) {
		p, ok1 := pol.(*Policy)
		h, ok2 := host.(*gocql.HostInfo)
		if !ok1 || !ok2 {
			return false, false
		}
		return h != nil && p.r.FeedbackPayload(h, pl), true
	})
}
