package policy

import (
	"context"
	"time"

	"github.com/gocql/gocql"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
)

// router is the driver-free engine instantiated for the driver's types.
type router = route.Router[*gocql.HostInfo, gocql.SelectedHost]

// Policy is the driver's HostSelectionPolicy: token-aware, ranking
// replicas with C3 (default), P2C or RoundRobin (see package tailroute for
// the rules), fed by a tracker. Like every driver policy it serves one
// Session.
type Policy struct {
	r *router

	sess route.Sessions[gocql.ClusterConfig, gocql.Session, *gocql.Session] // Wire and Init

	// pollQuery runs one server-load poll (queryThreadPools; tests replace it).
	pollQuery func(ctx context.Context, s *gocql.Session, host *gocql.HostInfo, id string) (route.ThreadPoolSample, error)
}

// New returns a Policy. Options are validated once; an invalid option yields
// an error naming the option, the field, the value and the allowed range.
func New(opts ...tailroute.Option) (*Policy, error) {
	p := &Policy{pollQuery: queryThreadPools}
	r, err := route.New[*gocql.HostInfo, gocql.SelectedHost](route.Hooks{
		Classify: func(err error) track.Outcome { return classify(context.Background(), err) },
		Logf:     p.logf,
	}, opts...)
	if err != nil {
		return nil, err
	}
	p.r = r
	return p, nil
}

// LatencyQuantile returns the cluster-wide q-quantile of recent attempt
// latencies, from every host's rolling histogram; false with too few
// samples. With MaxSilence it makes the policy a hedge-delay source:
// tailroute.WithSource(p).
func (p *Policy) LatencyQuantile(q float64) (time.Duration, bool) {
	return p.r.LatencyQuantile(q)
}

// MaxSilence returns how long the most silent host with attempts in flight
// has gone without answering; 0 when none has one in flight. The hedger's
// burst cap uses it to tell a stalled host from a slow phase.
func (p *Policy) MaxSilence() time.Duration { return p.r.MaxSilence() }

// HedgeRoom returns the load a hedge would meet on the local hosts (the
// fields are read as route.Router.HedgeRoom says). With LatencyQuantile and
// MaxSilence it makes the policy the source of the hedger's load rule:
// tailroute.WithSource(p).
func (p *Policy) HedgeRoom() tailroute.Room { return p.r.HedgeRoom() }

// Strategy returns the ranking strategy.
func (p *Policy) Strategy() tailroute.Strategy { return p.r.Strategy() }

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
// (its statistics reset): it is scored with cluster-wide priors and so gets
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
// are documented in package tailroute.
type HostStats = tailroute.HostStats

// Counters are cumulative policy events; its fields are documented in
// package tailroute.
type Counters = tailroute.Counters
