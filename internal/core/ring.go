package core

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Node is one host of the token ring.
type Node struct {
	ID     string
	DC     string
	Rack   string
	Tokens []int64
}

// Ring is an immutable Murmur3 token ring.
type Ring struct {
	nodes  []Node
	tokens []int64 // ascending
	owner  []int32 // node index of tokens[i]
}

// NewRing builds the ring of nodes (their indices are the handles used by
// every lookup).
func NewRing(nodes []Node) *Ring {
	r := &Ring{nodes: nodes}
	type ht struct {
		tok  int64
		node int32
	}
	var all []ht
	for i, n := range nodes {
		for _, t := range n.Tokens {
			all = append(all, ht{t, int32(i)})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].tok < all[j].tok })
	r.tokens = make([]int64, len(all))
	r.owner = make([]int32, len(all))
	for i, a := range all {
		r.tokens[i], r.owner[i] = a.tok, a.node
	}
	return r
}

// Len returns the number of tokens.
func (r *Ring) Len() int { return len(r.tokens) }

// Nodes returns the nodes the ring was built from.
func (r *Ring) Nodes() []Node { return r.nodes }

// Primary returns the node owning token tok (the first token >= tok,
// wrapping around), or -1 for an empty ring.
func (r *Ring) Primary(tok int64) int32 {
	if len(r.tokens) == 0 {
		return -1
	}
	return r.owner[search(r.tokens, tok)]
}

// search returns the index of the first element >= tok, wrapping to 0.
func search(a []int64, tok int64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] < tok {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(a) {
		return 0
	}
	return lo
}

// Replication is a keyspace's replica placement strategy.
type Replication struct {
	// Class is "SimpleStrategy" or "NetworkTopologyStrategy".
	Class string
	// RF is the replication factor of SimpleStrategy.
	RF int
	// DCs is the replication factor per data center of
	// NetworkTopologyStrategy.
	DCs map[string]int
}

// ParseReplication interprets a keyspace's strategy class and options the way
// gocql v1.7.0 does (getStrategy). ok is false for strategies without
// token-aware placement (LocalStrategy, unknown classes).
func ParseReplication(class string, opts map[string]any) (rep Replication, ok bool, err error) {
	switch {
	case strings.Contains(class, "SimpleStrategy"):
		rf, err := parseRF(opts["replication_factor"])
		if err != nil {
			return rep, false, fmt.Errorf("core: SimpleStrategy replication_factor: %w", err)
		}
		return Replication{Class: "SimpleStrategy", RF: rf}, true, nil
	case strings.Contains(class, "NetworkTopologyStrategy"):
		dcs := map[string]int{}
		var errs []string
		for dc, v := range opts {
			if dc == "class" {
				continue
			}
			rf, err := parseRF(v)
			if err != nil { // skip the DC, keep the others (as gocql does)
				errs = append(errs, dc+": "+err.Error())
				continue
			}
			dcs[dc] = rf
		}
		if len(errs) > 0 {
			sort.Strings(errs)
			err = fmt.Errorf("core: NetworkTopologyStrategy: %s", strings.Join(errs, "; "))
		}
		return Replication{Class: "NetworkTopologyStrategy", DCs: dcs}, true, err
	}
	return rep, false, nil
}

func parseRF(v any) (int, error) {
	switch x := v.(type) {
	case int:
		if x < 0 {
			return 0, fmt.Errorf("replication factor %d, allowed >= 0", x)
		}
		return x, nil
	case string:
		n, err := strconv.Atoi(x)
		if err != nil {
			return 0, fmt.Errorf("replication factor %q is not an integer", x)
		}
		if n < 0 {
			return 0, fmt.Errorf("replication factor %d, allowed >= 0", n)
		}
		return n, nil
	}
	return 0, fmt.Errorf("replication factor of type %T, want int or string", v)
}

// ReplicaMap maps token ranges to their replicas (node indices, primary
// first). Range i covers (ends[i-1], ends[i]]; range 0 wraps around.
type ReplicaMap struct {
	ends  []int64
	off   []int32
	hosts []int32
}

// Lookup returns the replicas of token tok (nil for an empty map). The slice
// aliases the map: do not modify it. Allocation-free.
func (m *ReplicaMap) Lookup(tok int64) []int32 {
	if m == nil || len(m.ends) == 0 {
		return nil
	}
	i := search(m.ends, tok)
	return m.hosts[m.off[i]:m.off[i+1]:m.off[i+1]]
}

// Ranges returns the number of token ranges.
func (m *ReplicaMap) Ranges() int { return len(m.ends) }

// Range returns the end token and the replicas of range i.
func (m *ReplicaMap) Range(i int) (end int64, replicas []int32) {
	return m.ends[i], m.hosts[m.off[i]:m.off[i+1]:m.off[i+1]]
}

func (m *ReplicaMap) add(end int64, hosts []int32) {
	if len(m.off) == 0 {
		m.off = append(m.off, 0)
	}
	m.ends = append(m.ends, end)
	m.hosts = append(m.hosts, hosts...)
	m.off = append(m.off, int32(len(m.hosts)))
}

// Replicas computes the replica map of rep on the ring. The placement follows
// gocql v1.7.0's simpleStrategy/networkTopology.replicaMap step by step
// (including its rack handling and its merging of ranges whose primary is in
// a DC without replicas), so that our replica sets equal gocql's. One
// deliberate difference: with several tokens per host (vnodes) gocql's
// NetworkTopologyStrategy walk can list the same host twice (its own "TODO:
// ensure we dont add the same host twice") and so return fewer distinct
// replicas than the replication factor; like Cassandra, we skip a host that
// is already a replica, so our set then contains gocql's set. With one token
// per host both are identical.
func (r *Ring) Replicas(rep Replication) *ReplicaMap {
	switch rep.Class {
	case "SimpleStrategy":
		return r.simple(rep.RF)
	case "NetworkTopologyStrategy":
		return r.nts(rep.DCs)
	}
	return &ReplicaMap{}
}

func (r *Ring) simple(rf int) *ReplicaMap {
	m := &ReplicaMap{}
	n := len(r.tokens)
	buf := make([]int32, 0, rf)
	seen := make(map[int32]bool, rf)
	for i := range r.tokens {
		buf = buf[:0]
		clear(seen)
		for j := 0; j < n && len(buf) < rf; j++ {
			h := r.owner[(i+j)%n]
			if !seen[h] {
				buf = append(buf, h)
				seen[h] = true
			}
		}
		m.add(r.tokens[i], buf)
	}
	return m
}

func (r *Ring) nts(dcRF map[string]int) *ReplicaMap {
	m := &ReplicaMap{}
	dcRacks := map[string]map[string]struct{}{}
	for _, nd := range r.nodes {
		racks, ok := dcRacks[nd.DC]
		if !ok {
			racks = map[string]struct{}{}
			dcRacks[nd.DC] = racks
		}
		racks[nd.Rack] = struct{}{}
	}
	skipped := map[string][]int32{}
	replicasInDC := map[string]int{}
	seenDCRacks := map[string]map[string]struct{}{}
	for dc, racks := range dcRacks {
		replicasInDC[dc] = 0
		seenDCRacks[dc] = make(map[string]struct{}, len(racks))
	}
	totalRF := 0
	for _, rf := range dcRF {
		totalRF += rf
	}
	haveRF := func() bool {
		if len(replicasInDC) != len(dcRF) {
			return false
		}
		for dc, rf := range dcRF {
			if rf != replicasInDC[dc] {
				return false
			}
		}
		return true
	}
	n := len(r.tokens)
	var replicas []int32
	for i := range r.tokens {
		if dcRF[r.nodes[r.owner[i]].DC] == 0 {
			continue // no replica in the primary's DC: merged into the next range
		}
		for k, v := range skipped {
			skipped[k] = v[:0]
		}
		for dc := range dcRF {
			replicasInDC[dc] = 0
			clear(seenDCRacks[dc])
		}
		replicas = replicas[:0]
		for j := 0; j < n && (len(replicas) < totalRF && !haveRF()); j++ {
			p := i + j
			if p >= n {
				p -= n
			}
			h := r.owner[p]
			if contains(replicas, h) {
				continue // vnodes: a host is a replica once (see Replicas)
			}
			dc, rack := r.nodes[h].DC, r.nodes[h].Rack
			rf := dcRF[dc]
			if rf == 0 || replicasInDC[dc] >= rf {
				continue
			} else if _, ok := dcRacks[dc][rack]; !ok {
				continue
			}
			racks := seenDCRacks[dc]
			if _, ok := racks[rack]; ok && len(racks) == len(dcRacks[dc]) {
				replicas = append(replicas, h)
				replicasInDC[dc]++
			} else if !ok {
				if racks == nil {
					racks = make(map[string]struct{}, 1)
					seenDCRacks[dc] = racks
				}
				racks[rack] = struct{}{}
				replicas = append(replicas, h)
				cnt := replicasInDC[dc] + 1
				if len(racks) == len(dcRacks[dc]) {
					sk := skipped[dc]
					var k int
					for ; k < len(sk) && cnt+k < rf; k++ {
						replicas = append(replicas, sk[k])
					}
					cnt += k
					skipped[dc] = sk[k:]
				}
				replicasInDC[dc] = cnt
			} else if !contains(skipped[dc], h) {
				skipped[dc] = append(skipped[dc], h)
			}
		}
		m.add(r.tokens[i], replicas)
	}
	return m
}

func contains(a []int32, x int32) bool {
	for _, v := range a {
		if v == x {
			return true
		}
	}
	return false
}
