package policy

import (
	"context"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute/internal/route"
)

// What binds the policy to gocql v1 beyond the shared files: its query
// type, the plan of a server-load poll, and the logger.

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
	if !p.sess.Serves(qry) {
		return noHosts // a second session sharing p (see Init)
	}
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

// logf logs through the Logger of the ClusterConfig given to Wire, else
// through gocql.Logger, as gocql logs its own messages.
func (p *Policy) logf(format string, a ...any) {
	var l gocql.StdLogger = gocql.Logger
	if c := p.sess.Wired(); c != nil && c.Logger != nil {
		l = c.Logger
	}
	l.Printf("tailroute/policy: "+format, a...)
}

// noHosts is the plan of a query from a session p does not serve.
func noHosts() gocql.SelectedHost { return nil }
