package sim

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEvenTokensAndRing(t *testing.T) {
	toks := evenTokens(4)
	assert.Equal(t, [][]int64{{math.MinInt64}, {-4611686018427387904}, {0}, {4611686018427387904}}, toks)
	assert.Equal(t, []int64{math.MinInt64}, evenTokens(1)[0])
	v := randomTokens(3, 16, 5)
	assert.Equal(t, v, randomTokens(3, 16, 5), "deterministic from seed")
	seen := map[int64]bool{}
	for _, ts := range v {
		require.Len(t, ts, 16)
		for _, x := range ts {
			assert.False(t, seen[x])
			seen[x] = true
		}
	}
}

func members(specs ...string) []*member { // "dc/rack"
	out := make([]*member, len(specs))
	toks := evenTokens(len(specs))
	for i, s := range specs {
		var dc, rack string
		for j := range s {
			if s[j] == '/' {
				dc, rack = s[:j], s[j+1:]
			}
		}
		out[i] = &member{idx: i, ip: "10.0.0." + strconv.Itoa(i+1), dc: dc, rack: rack, tokens: toks[i]}
	}
	return out
}

func TestReplicaPlacement(t *testing.T) {
	r := newRing(members("dc1/r1", "dc1/r1", "dc1/r1", "dc1/r1"))
	simple, err := parseStrategy(map[string]string{"class": "SimpleStrategy", "replication_factor": "2"})
	require.NoError(t, err)
	rm := simple.replicaMap(r)
	// a token right after node 1's token belongs to node 2's range, replicas 2,3
	assert.Equal(t, []int{2, 3}, rm.lookup(-4611686018427387904+1))
	assert.Equal(t, []int{1, 2}, rm.lookup(-4611686018427387904), "range end is inclusive")
	assert.Equal(t, []int{0, 1}, rm.lookup(4611686018427387904+1), "wraps around")

	// NTS: racks are spread before a rack is reused; DCs counted separately
	r = newRing(members("dc1/r1", "dc1/r1", "dc1/r2", "dc2/r1", "dc1/r2", "dc2/r1"))
	nts, err := parseStrategy(map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "2", "dc2": "1"})
	require.NoError(t, err)
	rm = nts.replicaMap(r)
	for i, tok := range r.entries {
		reps := rm.lookup(tok.token)
		require.Len(t, reps, 3, "token %d", i)
		dcs := map[string]int{}
		racks := map[string]bool{}
		for _, m := range reps {
			dcs[r.members[m].dc]++
			if r.members[m].dc == "dc1" {
				racks[r.members[m].rack] = true
			}
		}
		assert.Equal(t, map[string]int{"dc1": 2, "dc2": 1}, dcs)
		assert.Len(t, racks, 2, "dc1 replicas on distinct racks")
	}
	// from node 0's token range: node0 (dc1/r1), skip node1 (same rack), node2 (dc1/r2), node3 (dc2)
	assert.Equal(t, []int{0, 2, 3}, rm.lookup(math.MinInt64))

	_, err = parseStrategy(map[string]string{"class": "SimpleStrategy"})
	assert.ErrorContains(t, err, "replication_factor")
	_, err = parseStrategy(map[string]string{"class": "SimpleStrategy", "replication_factor": "x"})
	assert.ErrorContains(t, err, `"x"`)
	_, err = parseStrategy(map[string]string{"class": "NetworkTopologyStrategy", "dc1": "-1"})
	assert.ErrorContains(t, err, `"dc1"`)
}

func TestParser(t *testing.T) {
	st, err := parseStatement(`SELECT field0, "Field1" FROM ycsb.usertable WHERE y_id = ? LIMIT 5;`)
	require.NoError(t, err)
	assert.Equal(t, stSelect, st.kind)
	assert.Equal(t, []string{"field0", "Field1"}, st.columns)
	assert.Equal(t, "ycsb", st.keyspace)
	assert.Equal(t, 1, st.nBind)
	assert.Equal(t, "5", st.limit.lit)

	st, err = parseStatement("select * from usertable where token(y_id) >= token(?) limit ?")
	require.NoError(t, err)
	require.Len(t, st.where, 1)
	assert.True(t, st.where[0].token)
	assert.True(t, st.where[0].tokenOf)
	assert.Equal(t, ">=", st.where[0].op)
	assert.Equal(t, 2, st.nBind)

	st, err = parseStatement("INSERT INTO t (a, b) VALUES ('it''s', 0x0aFF) USING TTL 10")
	require.NoError(t, err)
	assert.Equal(t, "it's", st.values[0].lit)
	assert.Equal(t, tkHex, st.values[1].litKind)

	st, err = parseStatement("CREATE KEYSPACE IF NOT EXISTS k WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': 3} AND durable_writes = false")
	require.NoError(t, err)
	assert.True(t, st.ifNotExists)
	assert.Equal(t, map[string]string{"class": "NetworkTopologyStrategy", "dc1": "3"}, st.replication)
	assert.False(t, st.durable)

	st, err = parseStatement("CREATE TABLE k.t (id text, v int, PRIMARY KEY (id)) WITH compaction = {'class': 'X'} AND comment = 'c'")
	require.NoError(t, err)
	assert.Equal(t, []string{"id"}, st.primaryKey)
	assert.Equal(t, []colSpec{{"id", "text"}, {"v", "int"}}, st.colSpecs)

	st, err = parseStatement("UPDATE t SET a = ?, b = 'x' WHERE k = ?")
	require.NoError(t, err)
	assert.Len(t, st.sets, 2)
	assert.Equal(t, 1, st.where[0].val.bind)

	st, err = parseStatement("DELETE a FROM t WHERE k = 'x'")
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, st.columns)

	for _, bad := range []string{"", "SELECT", "SELECT * FROM", "SELECT * FROM t WHERE a", "SELECT * FROM t WHERE a IN (1)",
		"INSERT INTO t (a, b) VALUES (1)", "SELECT * FROM t extra", "SELECT 'unterminated", "GRANT ALL ON x TO y",
		"CREATE INDEX i ON t (a)", "SELECT * FROM t WHERE token(a) = 1"} {
		_, err := parseStatement(bad)
		var se *syntaxErr
		assert.ErrorAs(t, err, &se, "%q", bad)
	}
}

func TestModelPhases(t *testing.T) {
	base := time.Unix(1000, 0)
	ms := &modelState{ServiceModel: ServiceModel{Workers: 1, MeanService: 4 * time.Millisecond, Slowdown: 2,
		FluctuationInterval: 100 * time.Millisecond, FluctuationD: 3, PauseEvery: time.Second, PauseFor: 200 * time.Millisecond},
		base: base, seed: 42}
	// periodic pauses occupy the last 200 ms of every second
	assert.True(t, ms.periodicPauseEnd(base.Add(500*time.Millisecond)).IsZero())
	assert.Equal(t, base.Add(time.Second), ms.periodicPauseEnd(base.Add(850*time.Millisecond)))
	assert.Equal(t, base.Add(3*time.Second), ms.periodicPauseEnd(base.Add(2800*time.Millisecond)))
	assert.True(t, ms.periodicPauseEnd(base.Add(3000*time.Millisecond)).IsZero())

	// fluctuation: constant within an epoch, about half of the epochs slow
	slow := 0
	for e := 0; e < 1000; e++ {
		t0 := base.Add(time.Duration(e) * 100 * time.Millisecond)
		s := ms.slowPhase(t0)
		assert.Equal(t, s, ms.slowPhase(t0.Add(99*time.Millisecond)))
		if s {
			slow++
			assert.Equal(t, 24*time.Millisecond, ms.meanService(t0), "4ms x slowdown 2 x D 3")
		} else {
			assert.Equal(t, 8*time.Millisecond, ms.meanService(t0))
		}
	}
	assert.InDelta(t, 500, slow, 60)
	// nodes fluctuate independently (different seeds)
	other := *ms
	other.seed = 43
	same := 0
	for e := 0; e < 1000; e++ {
		t0 := base.Add(time.Duration(e) * 100 * time.Millisecond)
		if ms.slowPhase(t0) == other.slowPhase(t0) {
			same++
		}
	}
	assert.InDelta(t, 500, same, 60)

	off := &modelState{ServiceModel: DefaultModel(), base: base}
	assert.False(t, off.slowPhase(base.Add(time.Hour)))
	assert.True(t, off.periodicPauseEnd(base.Add(time.Hour)).IsZero())
	zero := &modelState{ServiceModel: ServiceModel{ZeroService: true, Slowdown: 5}, base: base}
	assert.Equal(t, time.Duration(0), zero.meanService(base))
}

func TestExponentialServiceMean(t *testing.T) {
	r := rng{s: 12345}
	sum := 0.0
	const n = 200000
	for i := 0; i < n; i++ {
		sum += r.exp()
	}
	assert.InDelta(t, 1.0, sum/n, 0.01)
}

func TestWindowCounter(t *testing.T) {
	start := time.Unix(0, 0)
	w := &windowCounter{start: start}
	w.inc(start)
	w.inc(start.Add(99 * time.Millisecond))
	w.inc(start.Add(250 * time.Millisecond))
	w.inc(start.Add(time.Duration(chunkLen) * windowWidth)) // second chunk
	got := w.snapshot(start.Add(300 * time.Millisecond))
	assert.Equal(t, []uint64{2, 0, 1, 0}, got)
	got = w.snapshot(start.Add(time.Duration(chunkLen) * windowWidth))
	assert.Len(t, got, chunkLen+1)
	assert.EqualValues(t, 1, got[chunkLen])
}

func TestDefaultModelIsValid(t *testing.T) {
	require.NoError(t, DefaultModel().Validate())
	assert.Equal(t, DefaultModel(), ServiceModel{}.withDefaults())
}

// phases returns the node's fast (0) and slow (1) phases over its first n
// fluctuation epochs since its latest SetModel.
func phases(n *Node, epochs int) []byte {
	ms := n.model.Load()
	out := make([]byte, epochs)
	for e := range out {
		if ms.slowPhase(ms.base.Add(time.Duration(e) * ms.FluctuationInterval)) {
			out[e] = 1
		}
	}
	return out
}

func TestFluctuationPhasesFollowTheSeed(t *testing.T) {
	bimodal := ServiceModel{ZeroService: true, FluctuationInterval: 100 * time.Millisecond, FluctuationD: 3}
	run := func(seed int64) [][]byte {
		c := startCluster(t, Config{Nodes: 3, Seed: seed, Model: ServiceModel{ZeroService: true}})
		var out [][]byte
		for _, n := range c.Nodes() {
			require.NoError(t, n.SetModel(bimodal))
			first := phases(n, 64)
			require.NoError(t, n.SetModel(bimodal))
			assert.Equal(t, first, phases(n, 64), "%s: a new SetModel replays the node's phases", n.IP())
			out = append(out, first)
		}
		require.NoError(t, c.Close())
		return out
	}
	a, b, other := run(7), run(7), run(8)
	assert.Equal(t, a, b, "two clusters of one seed meet the same phases")
	assert.NotEqual(t, a, other, "another seed, other phases")
	assert.NotEqual(t, a[0], a[1], "the nodes of a cluster fluctuate independently")
	assert.NotEqual(t, a[1], a[2])

	// members started in their own processes (StartNode) with one Seed
	assert.NotEqual(t, nodeSeed("127.0.0.1"), nodeSeed("127.0.0.2"))
}
