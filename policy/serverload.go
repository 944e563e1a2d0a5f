package policy

import (
	"context"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/cqlerr"
	"github.com/tailroute/tailroute/internal/route"
)

// Server-load polling (WithServerLoad).
//
// Cassandra 4.0+ exposes each node's thread pools in the node-local virtual
// table system_views.thread_pools. With WithServerLoad(interval) the policy
// reads, for every up host, that host's own rows
//
//	SELECT name, active_tasks, active_tasks_limit, pending_tasks, completed_tasks FROM system_views.thread_pools
//
// through the application's session (Init), at consistency ONE, without
// retries, with a timeout of one interval, and routes the query to that
// host itself: Pick recognises its own poll queries by their context (one
// atomic load on the user path, and only while a poll is in flight) and
// hands out just the polled host. Polls are never measured, never counted
// in os_s and never passed to the tracker as user traffic; other query
// observers can skip them with IsServerLoadPoll. Each host is polled on its
// own schedule, every interval times a random factor in [0.8, 1.2), so the
// hosts' polls do not line up.
//
// Cost: one query per host per interval from each application instance:
// at DefaultServerLoadInterval (250ms) 4 queries/s per node per client
// session, each answered from memory by the node (no disk, no replica
// coordination; about 30 rows of a few bytes on Cassandra 4.x).
//
// From each sample, over ReadStage and MutationStage (in Cassandra each has
// its own workers; a node busy in either is slower):
//
//	q_s    = pending + active - w*os_s (os_s: this client's requests on the
//	                                     host while the poll ran; qhat =
//	                                     1 + w*os_s + q_s already counts
//	                                     w*os_s, C3's estimate of all
//	                                     clients' requests, w the
//	                                     ConcurrencyWeight in force, w_eff
//	                                     below)
//	1/mu_s = mean(active) / X          (Little's law on the workers: X the
//	                                     completed-task rate between two
//	                                     samples, mean(active) the busy
//	                                     workers of both samples; skipped
//	                                     when nothing completed or no worker
//	                                     was seen busy)
//
//	W_s    = active_tasks_limit of ReadStage (of MutationStage without
//	                                     a ReadStage row): the workers that
//	                                     serve requests at once; C3's score
//	                                     drains qhat with them (package doc,
//	                                     "C3 with W_s workers"). A value of
//	                                     0 (null), negative or above 65536
//	                                     is ignored (the last good one, else
//	                                     WithServerWorkers, stays).
//
// W_s is the node's configuration, not its load: it is used for every host
// that reported one, whether or not the client measures the host itself,
// whatever the sample's age (a host that comes back up starts without one
// until its next poll).
//
// The polls also bound C3's concurrency weight w (WithConcurrencyWeight, the
// number of clients in the paper, which notes that it approximates well
// where the number of clients is comparable to the expected queue lengths
// at the servers). Each host's queue (pending + active, both stages) is
// smoothed from w, quick to rise (half way to a longer queue at once) and
// slow to fall (a fifth of the way to a shorter one per poll, about a
// second at the default interval); Qmax, the longest of them, is that
// expected length where the herd protection matters most, and the weight
// in force is
//
//	w_eff = min(w, max(1, Qmax))
//
// So under load (some queue as long as the number of clients, or longer)
// and until the polls have shown short queues for a while, w stands; at low
// load a request in flight on a fast host no longer counts as w of them and
// loses to an idle host several times slower. Like W_s, the reduction
// holds only while the host answers: silent for longer than its R_s, a
// host keeps R_s/Silence of w - w_eff, so a paused host's requests in
// flight count as w of them again within a few R_s. With w = 1 (the
// default) nothing changes. A host's queue counts while its latest poll is at most 6
// intervals old; without any, w again. ServerLoadCounters reports Qmax and
// w_eff. Payload feedback, when present, keeps w.
//
// A completed count lower than the previous sample's (the node restarted)
// gives no rate: the sample becomes the new baseline. Each sample is stamped
// with the midpoint of its poll and counts in full for 1.5 intervals; after
// that it fades and is dropped after 6 intervals, so a host whose polls stop
// (slow, failing, down) falls back to the client-side estimates (q_s = 0,
// 1/mu_s = R_s). A sample is used only for a host the client does not
// measure itself: nothing observed since the sample, nothing outstanding,
// no response for 1.5 intervals (tracker.ServerLoadWeight), and a polled 1/mu_s only
// when above R_s (then R_s is raised to it): on a host the client uses, its
// own latencies and os_s are fresher, so a stale sample never outweighs
// fresh latency data. The polls tell about the hosts the client's own
// measurements cannot: those it avoids or has left idle, e.g. whether a
// host it left because it was slow still has a queue.
//
// A host that answers Invalid or Unauthorized (Cassandra 3.x has no
// system_views; a role without SELECT on it) is logged once through the
// cluster's gocql Logger (the one Wire saw, else gocql.Logger) and is not
// polled again. A poll that fails otherwise or times out is dropped
// silently and the host is polled again at the next interval; user queries
// never wait for a poll and never see its errors.

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
// the policy's id of it). gocql v1 cannot pin a query to a host: the
// context marks it as a poll, and Pick plans the polled host alone.
func queryThreadPools(ctx context.Context, s *gocql.Session, host *gocql.HostInfo, id string) (route.ThreadPoolSample, error) {
	iter := s.Query(route.ThreadPoolsQuery).WithContext(ctx).Consistency(gocql.One).RetryPolicy(nil).Idempotent(false).Iter()
	return route.ReadPoll(iter.Scan, iter.Close, func() string {
		if h := iter.Host(); h != nil {
			return hostID(h)
		}
		return ""
	}, id)
}

// hostID is the router's id of a host: its host ID, else its address.
func hostID(h *gocql.HostInfo) string {
	if id := h.HostID(); id != "" {
		return id
	}
	return h.ConnectAddressAndPort()
}
