package policy

import (
	"context"
	"errors"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/route"
)

// Server-load polling (WithServerLoad) works as in the gocql v1 adapter
// (github.com/tailroute/tailroute/policy, serverload.go: the query of
// system_views.thread_pools, the estimator, the fading of samples and the
// cost), with one difference: each poll is pinned to its host with
// Query.SetHostID, so the v2 executor sends it there without calling Pick
// (and never retries or speculates it elsewhere). Polls are never measured
// nor counted in os_s; observers skip them by their context
// (IsServerLoadPoll). A host that answers Invalid or Unauthorized is logged
// once through the cluster's Logger and is not polled again.

// IsServerLoadPoll reports whether ctx is the context of one of the
// policy's server-load polls; query observers that count user traffic use
// it to skip them.
func IsServerLoadPoll(ctx context.Context) bool { return route.IsServerLoadPoll(ctx) }

// ServerLoadCounters are the poller's cumulative counters; its fields are
// documented in package tailroute.
type ServerLoadCounters = tailroute.ServerLoadCounters

// ServerLoadCounters returns the poller's counters (zero without
// WithServerLoad).
func (p *Policy) ServerLoadCounters() ServerLoadCounters { return p.r.ServerLoadCounters() }

// startServerLoad polls through s (WithServerLoad; a no-op without it).
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

// queryThreadPools reads the ReadStage and MutationStage rows of host (id:
// the policy's id of it), pinned to it with Query.SetHostID (the driver's
// executor sends it there without asking Pick); the context marks it as a
// poll for the observers.
func queryThreadPools(ctx context.Context, s *gocql.Session, host *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
	if host.HostID() == "" {
		return route.ThreadPoolSample{}, errNoHostID
	}
	iter := s.Query(route.ThreadPoolsQuery).WithContext(ctx).Consistency(gocql.One).RetryPolicy(nil).Idempotent(false).
		SetHostID(host.HostID()).Iter()
	return route.ReadPoll(iter.Scan, iter.Close, func() string {
		if h := iter.Host(); h != nil {
			return hostID(h)
		}
		return ""
	}, id)
}

var errNoHostID = errors.New("policy: the host has no host ID to pin the poll to")

// hostID is the router's id of a host: its host ID, else its address.
func hostID(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddressAndPort()
}
