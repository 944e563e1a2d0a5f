package sim

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// member is one node of the ring as every node sees it (local or remote).
type member struct {
	idx    int
	ip     string
	dc     string
	rack   string
	tokens []int64
	hostID [16]byte
	node   *Node  // non-nil when the node runs in this process
	admin  string // admin base URL of a remote peer ("http://ip:port"), process mode
	listen string // bind address when it differs from ip (process mode)
}

type ringEntry struct {
	token  int64
	member int
}

// ring is the sorted token ring of all members.
type ring struct {
	members []*member
	entries []ringEntry // sorted by token ascending
}

func newRing(members []*member) *ring {
	r := &ring{members: members}
	for _, m := range members {
		for _, t := range m.tokens {
			r.entries = append(r.entries, ringEntry{token: t, member: m.idx})
		}
	}
	sort.Slice(r.entries, func(i, j int) bool { return r.entries[i].token < r.entries[j].token })
	return r
}

// evenTokens returns the evenly spaced single tokens of n nodes: node i
// owns token MinInt64 + i*ceil(2^64/n) (the step is 2^64/n exactly when n
// is a power of two, else rounded up: the gap after the last node is then
// the shortest).
func evenTokens(n int) [][]int64 {
	out := make([][]int64, n)
	var step uint64
	if n > 1 {
		step = math.MaxUint64/uint64(n) + 1
	}
	for i := 0; i < n; i++ {
		out[i] = []int64{math.MinInt64 + int64(uint64(i)*step)}
	}
	return out
}

// randomTokens returns v distinct random tokens per node from seed.
func randomTokens(n, v int, seed int64) [][]int64 {
	rng := rand.New(rand.NewSource(seed))
	seen := map[int64]bool{}
	out := make([][]int64, n)
	for i := 0; i < n; i++ {
		for len(out[i]) < v {
			t := int64(rng.Uint64())
			if seen[t] {
				continue
			}
			seen[t] = true
			out[i] = append(out[i], t)
		}
		sort.Slice(out[i], func(a, b int) bool { return out[i][a] < out[i][b] })
	}
	return out
}

// replicaMap maps each ring range (ending at entries[i].token inclusive) to
// its replica members, placed as Cassandra places them (equal to
// internal/core.Ring.Replicas, pinned by TestPlacementMatchesPolicyCore).
type replicaMap struct {
	tokens   []int64
	replicas [][]int
}

func (rm *replicaMap) lookup(token int64) []int {
	if len(rm.tokens) == 0 {
		return nil
	}
	p := sort.Search(len(rm.tokens), func(i int) bool { return rm.tokens[i] >= token })
	if p >= len(rm.tokens) {
		p = 0
	}
	return rm.replicas[p]
}

// strategy is a parsed replication setting of a keyspace.
type strategy struct {
	class string         // "SimpleStrategy" | "NetworkTopologyStrategy" | "LocalStrategy"
	rf    int            // SimpleStrategy
	dcs   map[string]int // NetworkTopologyStrategy
}

func parseStrategy(repl map[string]string) (strategy, error) {
	class := repl["class"]
	short := class
	if i := strings.LastIndex(short, "."); i >= 0 {
		short = short[i+1:]
	}
	switch short {
	case "SimpleStrategy":
		v, ok := repl["replication_factor"]
		if !ok {
			return strategy{}, fmt.Errorf("SimpleStrategy requires a 'replication_factor' option")
		}
		rf, err := strconv.Atoi(v)
		if err != nil || rf < 0 {
			return strategy{}, fmt.Errorf("replication_factor %q: must be an integer >= 0", v)
		}
		for k := range repl {
			if k != "class" && k != "replication_factor" {
				return strategy{}, fmt.Errorf("unrecognized strategy option {%s} passed to SimpleStrategy", k)
			}
		}
		return strategy{class: short, rf: rf}, nil
	case "NetworkTopologyStrategy":
		dcs := map[string]int{}
		for k, v := range repl {
			if k == "class" {
				continue
			}
			rf, err := strconv.Atoi(v)
			if err != nil || rf < 0 {
				return strategy{}, fmt.Errorf("replication factor %q for datacenter %q: must be an integer >= 0", v, k)
			}
			dcs[k] = rf
		}
		return strategy{class: short, dcs: dcs}, nil
	case "LocalStrategy":
		return strategy{class: short}, nil
	case "":
		return strategy{}, fmt.Errorf("missing replication strategy class")
	default:
		return strategy{}, fmt.Errorf("unable to find replication strategy class %q (supported: SimpleStrategy, NetworkTopologyStrategy)", class)
	}
}

// replicaMap computes the replica placement over the ring.
func (s strategy) replicaMap(r *ring) *replicaMap {
	rm := &replicaMap{}
	switch s.class {
	case "SimpleStrategy":
		for i, e := range r.entries {
			reps := make([]int, 0, s.rf)
			seen := map[int]bool{}
			for j := 0; j < len(r.entries) && len(reps) < s.rf; j++ {
				m := r.entries[(i+j)%len(r.entries)].member
				if !seen[m] {
					seen[m] = true
					reps = append(reps, m)
				}
			}
			rm.tokens = append(rm.tokens, e.token)
			rm.replicas = append(rm.replicas, reps)
		}
	case "NetworkTopologyStrategy":
		s.ntsMap(r, rm)
	default: // LocalStrategy: the coordinator itself
		for _, e := range r.entries {
			rm.tokens = append(rm.tokens, e.token)
			rm.replicas = append(rm.replicas, nil)
		}
	}
	return rm
}

// ntsMap follows gocql's networkTopology.replicaMap (Cassandra's rack-aware
// walk) so that the simulator's placement equals the driver's routing; unlike
// gocql v1.7.0 with vnodes, a node already chosen is never listed twice.
func (s strategy) ntsMap(r *ring, rm *replicaMap) {
	dcRacks := map[string]map[string]bool{}
	for _, m := range r.members {
		if dcRacks[m.dc] == nil {
			dcRacks[m.dc] = map[string]bool{}
		}
		dcRacks[m.dc][m.rack] = true
	}
	totalRF := 0
	for _, rf := range s.dcs {
		totalRF += rf
	}
	haveRF := func(counts map[string]int) bool {
		for dc, rf := range s.dcs {
			if rf > 0 && counts[dc] < rf && len(dcRacks[dc]) > 0 {
				return false
			}
		}
		return true
	}
	for i, e := range r.entries {
		if s.dcs[r.members[e.member].dc] == 0 {
			continue
		}
		counts := map[string]int{}
		seenRacks := map[string]map[string]bool{}
		skipped := map[string][]int{}
		seen := map[int]bool{}
		reps := make([]int, 0, totalRF)
		add := func(m int, dc string) {
			if !seen[m] {
				seen[m] = true
				reps = append(reps, m)
				counts[dc]++
			}
		}
		for j := 0; j < len(r.entries) && len(reps) < totalRF && !haveRF(counts); j++ {
			m := r.members[r.entries[(i+j)%len(r.entries)].member]
			if seen[m.idx] {
				continue
			}
			rf := s.dcs[m.dc]
			if rf == 0 || counts[m.dc] >= rf {
				continue
			}
			racks := seenRacks[m.dc]
			if racks == nil {
				racks = map[string]bool{}
				seenRacks[m.dc] = racks
			}
			if racks[m.rack] && len(racks) == len(dcRacks[m.dc]) {
				add(m.idx, m.dc)
			} else if !racks[m.rack] {
				racks[m.rack] = true
				add(m.idx, m.dc)
				if len(racks) == len(dcRacks[m.dc]) {
					sk := skipped[m.dc]
					k := 0
					for ; k < len(sk) && counts[m.dc] < rf; k++ {
						add(sk[k], m.dc)
					}
					skipped[m.dc] = sk[k:]
				}
			} else {
				skipped[m.dc] = append(skipped[m.dc], m.idx)
			}
		}
		rm.tokens = append(rm.tokens, e.token)
		rm.replicas = append(rm.replicas, reps)
	}
}
