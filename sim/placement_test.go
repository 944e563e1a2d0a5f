package sim

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tailroute/tailroute/internal/core"
)

// placementTopology is a random cluster layout: nodes spread over DCs and
// racks, each node with vnodes tokens.
type placementTopology struct {
	members []*member
	nodes   []core.Node
	perDC   map[string]int
}

func randomPlacementTopology(rng *rand.Rand, vnodes int) placementTopology {
	nDC := 1 + rng.Intn(3)
	var tp placementTopology
	tp.perDC = map[string]int{}
	for d := 0; d < nDC; d++ {
		dc := "dc" + strconv.Itoa(d+1)
		nodes := 1 + rng.Intn(6)
		racks := 1 + rng.Intn(4)
		for k := 0; k < nodes; k++ {
			rack := "r" + strconv.Itoa(1+rng.Intn(racks)) // uneven racks on purpose
			idx := len(tp.members)
			tp.members = append(tp.members, &member{idx: idx, ip: "127.0.0." + strconv.Itoa(idx+1), dc: dc, rack: rack})
			tp.perDC[dc]++
		}
	}
	var toks [][]int64
	if vnodes == 1 && rng.Intn(2) == 0 {
		toks = evenTokens(len(tp.members))
	} else {
		toks = randomTokens(len(tp.members), vnodes, rng.Int63())
	}
	for i, m := range tp.members {
		m.tokens = toks[i]
		tp.nodes = append(tp.nodes, core.Node{ID: m.ip, DC: m.dc, Rack: m.rack, Tokens: m.tokens})
	}
	return tp
}

// randomReplication returns a keyspace's replication options: SimpleStrategy
// with RF up to two above the node count, or NetworkTopologyStrategy with RF
// 0..(DC size + 1) per DC, sometimes naming a DC that has no node.
func randomReplication(rng *rand.Rand, tp placementTopology) map[string]string {
	if rng.Intn(3) == 0 {
		return map[string]string{"class": "SimpleStrategy", "replication_factor": strconv.Itoa(rng.Intn(len(tp.members) + 3))}
	}
	opts := map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy"}
	for dc, n := range tp.perDC {
		if rng.Intn(5) != 0 {
			opts[dc] = strconv.Itoa(rng.Intn(n + 2))
		}
	}
	if rng.Intn(5) == 0 {
		opts["dc_absent"] = "2"
	}
	return opts
}

// TestPlacementMatchesPolicyCore pins the simulator's replica placement
// (ring.go) to the router's (internal/core/ring.go): both compute the replicas
// of every token independently, and a disagreement would make the router send
// requests to nodes the simulator does not store the key on. Every strategy is
// covered: SimpleStrategy and NetworkTopologyStrategy, one token or vnodes per
// node, 1..3 DCs, 1..4 racks per DC, RF larger than a DC or the cluster.
func TestPlacementMatchesPolicyCore(t *testing.T) {
	rng := rand.New(rand.NewSource(18))
	const topologies = 150
	checked := 0
	for it := 0; it < topologies; it++ {
		vnodes := []int{1, 1, 4, 16}[it%4]
		tp := randomPlacementTopology(rng, vnodes)
		opts := randomReplication(rng, tp)
		name := fmt.Sprintf("topology %d (vnodes %d, DCs %v): %v", it, vnodes, tp.perDC, opts)

		st, err := parseStrategy(opts)
		require.NoError(t, err, name)
		simMap := st.replicaMap(newRing(tp.members))

		anyOpts := map[string]any{}
		for k, v := range opts {
			anyOpts[k] = v
		}
		rep, ok, err := core.ParseReplication(opts["class"], anyOpts)
		require.NoError(t, err, name)
		require.True(t, ok, name)
		coreMap := core.NewRing(tp.nodes).Replicas(rep)

		probe := func(tok int64) {
			want := coreMap.Lookup(tok)
			got := simMap.lookup(tok)
			require.Len(t, got, len(want), "%s: token %d: sim %v, core %v", name, tok, got, want)
			for i := range want {
				require.Equal(t, int(want[i]), got[i], "%s: token %d: sim %v, core %v (order too: primary first)", name, tok, got, want)
			}
			requireCassandraCounts(t, name, tok, tp, st, got)
			checked++
		}
		for _, m := range tp.members {
			for _, tok := range m.tokens { // range ends and their neighbours
				probe(tok)
				if tok != math.MaxInt64 {
					probe(tok + 1)
				}
				if tok != math.MinInt64 {
					probe(tok - 1)
				}
			}
		}
		for k := 0; k < 200; k++ {
			probe(int64(rng.Uint64()))
		}
		probe(math.MinInt64)
		probe(math.MaxInt64)
	}
	require.Greater(t, checked, topologies*200)
}

// requireCassandraCounts checks the replica set against Cassandra's rule:
// distinct nodes, min(RF, cluster size) for SimpleStrategy and min(RF, DC
// size) per DC for NetworkTopologyStrategy.
func requireCassandraCounts(t *testing.T, name string, tok int64, tp placementTopology, st strategy, got []int) {
	t.Helper()
	seen := map[int]bool{}
	inDC := map[string]int{}
	for _, m := range got {
		require.False(t, seen[m], "%s: token %d: node %d listed twice in %v", name, tok, m, got)
		seen[m] = true
		inDC[tp.members[m].dc]++
	}
	switch st.class {
	case "SimpleStrategy":
		require.Len(t, got, min(st.rf, len(tp.members)), "%s: token %d", name, tok)
	case "NetworkTopologyStrategy":
		for dc, n := range tp.perDC {
			require.Equal(t, min(st.dcs[dc], n), inDC[dc], "%s: token %d: replicas in %s", name, tok, dc)
		}
	}
}
