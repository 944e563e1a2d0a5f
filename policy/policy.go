package policy

import (
	"context"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/stats"
	"github.com/tailroute/tailroute/tracker"
)

// router is the driver-free engine instantiated for gocql v1.
type router = route.Router[*gocql.HostInfo, gocql.SelectedHost]

// Policy is a gocql.HostSelectionPolicy: token-aware, ranking replicas with
// C3 (default), P2C or RoundRobin, fed by a tracker. Like every gocql policy
// it serves one Session.
type Policy struct {
	r *router

	sess route.Sessions[gocql.ClusterConfig, gocql.Session, *gocql.Session] // Wire and Init

	// pollQuery runs one server-load poll (queryThreadPools; tests replace it).
	pollQuery func(ctx context.Context, s *gocql.Session, host *gocql.HostInfo, id string) (route.ThreadPoolSample, error)
}

// New returns a Policy. Options are validated once; an invalid option yields
// an error naming the option, the field, the value and the allowed range.
func New(opts ...Option) (*Policy, error) {
	p := &Policy{pollQuery: queryThreadPools}
	r, err := route.New[*gocql.HostInfo, gocql.SelectedHost](route.Hooks{
		Classify: func(err error) tracker.Outcome { return classify(nil, err) },
		Logf:     p.logf,
	}, opts...)
	if err != nil {
		return nil, err
	}
	p.r = r
	return p, nil
}

// LatencyQuantile returns the cluster-wide q-quantile of recent attempt
// latencies (see tracker.Tracker.LatencyQuantile); false with too few
// samples. With MaxSilence it makes the policy a hedge-delay source:
// speculative.WithSource(p).
func (p *Policy) LatencyQuantile(q float64) (time.Duration, bool) {
	return p.r.Tracker().LatencyQuantile(q)
}

// MaxSilence returns how long the most silent host with attempts in flight
// has gone without answering; 0 when none has one in flight (see
// tracker.Tracker.MaxSilence). The hedger's burst cap uses it to tell a
// stalled host from a slow phase.
func (p *Policy) MaxSilence() time.Duration { return p.r.Tracker().MaxSilence() }

// HedgeRoom returns the expected response time of the host a hedge would
// go to (the median up local host) and whether every host whose worker
// count is known (polled, WithServerLoad) has all its workers taken. With
// LatencyQuantile and MaxSilence it makes the policy the source of the
// hedger's load rule: speculative.WithSource(p) (see route.Router.HedgeRoom).
func (p *Policy) HedgeRoom() (wait time.Duration, saturated bool) { return p.r.HedgeRoom() }

// Strategy returns the ranking strategy.
func (p *Policy) Strategy() Strategy { return Strategy(p.r.Strategy()) }

// IsLocal reports whether host is in the local DC (always true without
// WithLocalDC). The local DC is the one WithLocalDC names, or what the
// policy falls back to when no host is in it (see WithLocalDC).
func (p *Policy) IsLocal(host *gocql.HostInfo) bool { return p.r.IsLocal(host.DataCenter()) }

// AddHost adds or updates a host.
func (p *Policy) AddHost(host *gocql.HostInfo) { p.r.AddHosts([]*gocql.HostInfo{host}) }

// AddHosts adds or updates several hosts with one rebuild (gocql calls it at
// session start).
func (p *Policy) AddHosts(hosts []*gocql.HostInfo) { p.r.AddHosts(hosts) }

// RemoveHost forgets a host.
func (p *Policy) RemoveHost(host *gocql.HostInfo) { p.r.RemoveHost(host) }

// HostUp marks a host up. A host that was down restarts as a clean slate
// (tracker.Host.Reset): it is scored with cluster-wide priors and so gets
// traffic again at once.
func (p *Policy) HostUp(host *gocql.HostInfo) { p.r.HostUp(host) }

// HostDown marks a host down: it is not handed out until HostUp. Its
// in-flight count is reset (attempts still outstanding no longer count), so
// attempts gocql abandons without Mark cannot skew it.
func (p *Policy) HostDown(host *gocql.HostInfo) { p.r.HostDown(host) }

// SetPartitioner is called by gocql with the cluster's partitioner. Token
// awareness needs Murmur3Partitioner; with another partitioner requests are
// ranked over a sample of local hosts.
func (p *Policy) SetPartitioner(partitioner string) { p.r.SetPartitioner(partitioner) }

// KeyspaceChanged is called by gocql on schema changes: the keyspace's
// replication is fetched again (or forgotten when it was dropped).
func (p *Policy) KeyspaceChanged(ev gocql.KeyspaceUpdateEvent) {
	p.r.KeyspaceChanged(ev.Keyspace, ev.Change)
}

// Stats returns a snapshot of every host, sorted by address.
func (p *Policy) Stats() []HostStats { return p.r.Stats() }

// Counters returns the cumulative counters.
func (p *Policy) Counters() Counters { return p.r.Counters() }

// HostStats is a snapshot of one host as the policy sees it; its fields
// are documented in package stats.
type HostStats = stats.HostStats

// Counters are cumulative policy events; its fields are documented in
// package stats.
type Counters = stats.Counters

// Pick returns the query plan of one execution: the local replicas of the
// query's token ranked by the strategy, then remote replicas (WithRemoteDCs),
// then the other hosts as fallback (local first). Down hosts are skipped.
//
// Replica sets are computed here from HostInfo.Tokens() and the keyspace's
// replication (Session.KeyspaceMetadata), with the same placement algorithm
// as gocql, rather than by wrapping gocql's TokenAwareHostPolicy: wrapping
// costs its allocations on every Pick (a map, a closure and the fallback
// iterator), hides where replicas end (we would have to infer it from the
// first call of the fallback) and hands hosts out one at a time, while
// ranking needs the whole replica set up front. Our own map is looked up
// with a binary search and no allocation; TestReplicaSetsMatchGocql checks
// the sets against gocql's on the same ring.
//
// The per-query state comes from a sync.Pool. A non-idempotent query's is
// recycled when a host is marked with a nil error: gocql v1.7.0 never
// speculates such queries and returns right after Mark(nil). An idempotent
// query may run speculatively on several goroutines, so its state is
// reference counted and recycled when the execution's first Mark(nil) has
// happened and every host handed out has had its last Mark. After the
// first Mark(nil) the iterator must not be called again: gocql v1.7.0
// starts a speculative attempt after that only if its timer fires in the
// instant between that Mark and the result reaching the executor;
// speculative.Policy, the supported way to hedge, takes a fresh plan
// instead of calling this one then. gocql's own speculative execution is
// detected at its first late call, after which idempotent states are not
// pooled; WithDriverSpeculation does so from the start.
// Wrappers that call the iterator themselves must follow the same rule,
// give back a host they pulled but do not use with Mark(context.Canceled),
// and not use a SelectedHost after its last Mark (read Info before).
func (p *Policy) Pick(qry gocql.ExecutableQuery) gocql.NextHost {
	if qry != nil && p.r.Polling() {
		if next := p.r.PollPlan(qry.Context()); next != nil {
			return next // the policy's own server-load poll (serverload.go)
		}
	}
	return p.r.Pick(p.query(qry))
}

// query is what the router needs of a gocql query.
func (p *Policy) query(qry gocql.ExecutableQuery) route.Query {
	if qry == nil {
		return route.Query{None: true}
	}
	q := route.Query{Idempotent: qry.IsIdempotent()}
	if p.r.Routable() { // the routing key may cost the driver work: only when a ring is known
		q.Key, q.KeyErr = qry.GetRoutingKey() // first: it sets the keyspace of a qualified table name
		q.Keyspace = qry.Keyspace()
	}
	return q
}
