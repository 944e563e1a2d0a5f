package peers

import (
	"time"

	"github.com/tailroute/tailroute/internal/selector"
)

// RackAware is a port of gocql's TokenAwareHostPolicy(RackAwareRoundRobinPolicy(dc,
// rack)) with TokenAwareHostPolicy's default options (no ShuffleReplicas,
// no NonLocalReplicasFallback), from github.com/gocql/gocql v1.7.0,
// policies.go: tokenAwareHostPolicy.Pick, rackAwareRR (HostTier, Pick)
// and roundRobbin.
//
// The rule, for every query:
//
//   - a host's tier is 0 in the local DC and the local rack, 1 in the
//     local DC and another rack, 2 in another DC (rackAwareRR.HostTier);
//   - the token-aware part returns the key's replicas of tier 0 in the
//     replica map's order (the ring walk of the replication strategy):
//     replicas are shuffled only with the ShuffleReplicas option, which
//     is off by default; replicas of tiers 1 and 2 are skipped (without
//     NonLocalReplicasFallback);
//   - then the fallback, rackAwareRR.Pick: a counter (lastUsedHostIdx) is
//     incremented, and roundRobbin visits tier 0's hosts, then tier 1's,
//     then tier 2's, each tier's list (in the order its hosts were added)
//     from position (counter+1) mod its size on, skipping the hosts the
//     plan already returned.
//
// With one replica per rack (NetworkTopologyStrategy over as many racks
// as the replication factor) the first host is always the replica in the
// client's rack while it is up, whatever its latency.
//
// Differences from the source:
//
//   - Order and Choose see a query's replicas only: the fallback's round
//     robin is applied to the replicas that follow (their tier, then
//     their rotated position in the tier's list of every host), and the
//     non-replica hosts it would also return (a coordinator in the
//     client's rack before any replica of another rack) are left out; the
//     simulator sends only to replicas.
//   - A tier's host list holds every server of SelectorConfig.Env in
//     server order (the source's AddHost order, as the session discovers
//     them), or without Env the servers in the order first seen; a host
//     going down does not leave the list (the source's HostDown removes
//     it, shifting the positions): the simulator leaves a down server out
//     of the replicas instead.
//   - Order counts one fallback Pick (it returns the whole plan, as a
//     driver iterating past the tier-0 replicas would); Choose only when
//     no replica of tier 0 is left, as the source's lazy iterator.
//   - Topology from SelectorConfig (LocalDC, LocalRack, Place), what the
//     source reads from each HostInfo.
type RackAware struct {
	dc, rack string
	place    func(s int32) (dc, rack string)
	tier     []int8  // each server's tier; -1 not seen
	pos      []int32 // each server's position in its tier's host list
	size     [3]int32
	next     uint64 // the source's lastUsedHostIdx
}

// NewRackAware returns the policy for a client in cfg.LocalDC and
// cfg.LocalRack; cfg.Place tells each server's (nil: every server in both).
func NewRackAware(cfg selector.SelectorConfig) *RackAware {
	p := &RackAware{dc: cfg.LocalDC, rack: cfg.LocalRack, place: cfg.Place}
	if cfg.Env != nil {
		for s := range int32(cfg.Env.Servers()) {
			p.Tier(s)
		}
	}
	return p
}

// Tier is server s's tier: 0 the local rack, 1 another rack of the local
// DC, 2 another DC (the source's HostTier).
func (p *RackAware) Tier(s int32) int {
	if int(s) >= len(p.tier) {
		n := len(p.tier)
		p.tier, p.pos = grow(p.tier, s), grow(p.pos, s)
		for i := n; i < len(p.tier); i++ {
			p.tier[i] = -1
		}
	}
	if p.tier[s] < 0 {
		t := int8(0)
		if p.place != nil {
			switch dc, rack := p.place(s); {
			case dc != p.dc:
				t = 2
			case rack != p.rack:
				t = 1
			}
		}
		p.tier[s], p.pos[s] = t, p.size[t]
		p.size[t]++
	}
	return int(p.tier[s])
}

// Order applies the rule to replicas in place (see the type's comment); it
// returns len(replicas) (no host is excluded).
func (p *RackAware) Order(_ time.Duration, r []int32) int {
	k := 0
	for i, s := range r { // tier 0 first, in ring order
		if p.Tier(s) == 0 {
			moveToFront(r[k:], i-k)
			k++
		}
	}
	p.next++
	rest := r[k:]
	for i := 1; i < len(rest); i++ { // insertion sort by the fallback's visiting order
		for j := i; j > 0 && p.visit(rest[j]) < p.visit(rest[j-1]); j-- {
			rest[j], rest[j-1] = rest[j-1], rest[j]
		}
	}
	return len(r)
}

// visit is when the fallback's roundRobbin at the current counter returns
// server s: its tier, then (its position - counter - 1) mod the tier's size.
func (p *RackAware) visit(s int32) int64 {
	t := p.Tier(s)
	n := int64(p.size[t])
	off := (int64(p.pos[s]) - int64(p.next%uint64(n)) - 1) % n
	if off < 0 {
		off += n
	}
	return int64(t)<<32 | off
}

// Choose returns the first replica of the plan: the first of tier 0 in
// ring order, else the fallback's first.
func (p *RackAware) Choose(now time.Duration, replicas []int32) (int32, time.Duration) {
	for _, s := range replicas {
		if p.Tier(s) == 0 {
			return s, 0
		}
	}
	p.Order(now, replicas)
	return replicas[0], 0
}

// Sent does nothing: the policy measures nothing.
func (p *RackAware) Sent(time.Duration, int32) {}

// Done does nothing.
func (p *RackAware) Done(time.Duration, int32, time.Duration, selector.Feedback) {}

// Reset (a host down or removed) does nothing: the host keeps its place in
// its tier's list (see the differences from the source).
func (p *RackAware) Reset(time.Duration, int32) {}
