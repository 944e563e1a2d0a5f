package policy

import (
	"context"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/route"
)

// Server-load polling (tailroute.WithServerLoad, WithPollBudget; the
// rules are in package tailroute, "Server load"): the driver's side of the
// poller, over the engine's schedule, budget and estimator
// (internal/route).

// IsServerLoadPoll reports whether ctx is the context of one of the
// policy's server-load polls; query observers that count user traffic use
// it to skip them.
func IsServerLoadPoll(ctx context.Context) bool { return route.IsServerLoadPoll(ctx) }

// ServerLoadCounters are the poller's cumulative counters; its fields are
// documented in package tailroute.
type ServerLoadCounters = tailroute.ServerLoadCounters

// ServerLoadCounters returns the poller's counters (zero without polling:
// WithServerLoad(false), or a strategy other than C3).
func (p *Policy) ServerLoadCounters() ServerLoadCounters { return p.r.ServerLoadCounters() }

// startServerLoad polls through s (a no-op without polling).
func (p *Policy) startServerLoad(s *gocql.Session) {
	p.r.StartServerLoad(route.PollDriver[*gocql.HostInfo]{
		Closed: s.Closed,
		Query: func(ctx context.Context, h *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
			return p.pollQuery(ctx, s, h, id)
		},
		Permanent: permanentPollError,
	})
}

// permanentPollError: the host will never answer the poll (no such table,
// not allowed; cqlerr.PollPermanent).
func permanentPollError(err error) bool { return cqlerr.PollPermanent[gocql.RequestError](err) }

// hostID is the router's id of a host: its host ID, else its address.
func hostID(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddressAndPort()
}
