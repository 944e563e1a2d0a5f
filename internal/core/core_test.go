package core

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFigure4CubeRootOf5: with 1/mu = 4ms and 20ms, the cubic score treats
// the two servers as equal when the fast server's queue-size estimate is
// cbrt(20/4) = cbrt(5) times the slow server's (section 3.1, Figure 4); a
// linear score would need a ratio of 5.
func TestFigure4CubeRootOf5(t *testing.T) {
	const fast, slow = 4.0, 20.0 // ms
	for _, qSlow := range []float64{1, 2, 5, 20} {
		qFast := qSlow * math.Cbrt(5)
		// R_s = 1/mu_s so the R - 1/mu term vanishes, as in the figure;
		// qhat = 1 + os*w + q_s with os = 0: q_s = qhat - 1.
		psiFast := C3Score(fast, fast, qFast-1, 0, 1, 1)
		psiSlow := C3Score(slow, slow, qSlow-1, 0, 1, 1)
		assert.InEpsilon(t, psiSlow, psiFast, 1e-12, "qSlow=%v", qSlow)
		// a slightly longer queue at the fast server flips the preference
		assert.Greater(t, C3Score(fast, fast, qFast*1.01-1, 0, 1, 1), psiSlow)
		assert.Less(t, C3Score(fast, fast, qFast*0.99-1, 0, 1, 1), psiSlow)
		// the paper's linear example: 20 at the slow server ~ 100 at the fast one
		assert.InEpsilon(t, qSlow*slow, qSlow*5*fast, 1e-12)
	}
	// the concurrency compensation counts like queue: os*w adds to qhat
	assert.Equal(t, C3Score(3, 2, 4, 0, 1, 1), C3Score(3, 2, 0, 2, 2, 1))
	// qhat = 1 (idle, no queue): score reduces to R_s
	assert.Equal(t, 7.0, C3Score(7, 3, 0, 0, 5, 1))
}

// TestC3ScoreWorkers: W workers drain the queue ahead of a request W times
// as fast, so a fast host with a few requests in flight ranks before an idle
// host 5x slower (W = 1, the paper's single queue, it does not); queueing
// far beyond W still repels; each request in flight still costs something.
func TestC3ScoreWorkers(t *testing.T) {
	const fast, slow = 5.0, 25.0 // ms, R_s = 1/mu_s (no server signal)
	idleSlow := C3Score(slow, slow, 0, 0, 1, 4)
	assert.Equal(t, slow, idleSlow, "idle: R_s whatever W")
	for os := int64(1); os <= 2; os++ { // qhat = 1 + os < W = 4
		assert.Less(t, C3Score(fast, fast, 0, os, 1, 4), idleSlow, "os=%d, W=4", os)
		assert.Greater(t, C3Score(fast, fast, 0, os, 1, 1), idleSlow, "os=%d, W=1", os)
	}
	for os := int64(1); os <= 10; os++ {
		assert.Less(t, C3Score(fast, fast, 0, os, 1, 32), idleSlow, "os=%d, W=32", os)
	}
	// qhat = 1 + 8 = 9 with W = 4: qeff = 3, 27 service times
	assert.InEpsilon(t, 27*fast, C3Score(fast, fast, 0, 8, 1, 4), 1e-12)
	assert.Greater(t, C3Score(fast, fast, 0, 8, 1, 4), idleSlow)
	assert.Greater(t, C3Score(fast, fast, 0, 2, 4, 4), idleSlow, "w = 4 clients: 8 requests ahead")
	// polled queue counts like outstanding requests: q_s = 6, os = 2
	assert.Equal(t, C3Score(fast, 4, 0, 8, 1, 4), C3Score(fast, 4, 6, 2, 1, 4))
	// W <= 1 (and 0, unknown) is the paper's score
	for _, w := range []float64{0, 0.5, 1} {
		assert.Equal(t, C3Score(3, 2, 4, 1, 2, 1), C3Score(3, 2, 4, 1, 2, w))
	}
	// every request in flight costs something (monotone, strictly)
	prev := C3Score(fast, 4, 0, 0, 4, 32)
	for os := int64(1); os < 200; os++ {
		s := C3Score(fast, 4, 0, os, 4, 32)
		assert.Greater(t, s, prev, "os=%d", os)
		prev = s
	}
}

func TestMurmur3VectorsFromJavaDriver(t *testing.T) {
	series := []uint64{
		0x0000000000000000, 0x2ac9debed546a380, 0x649e4eaa7fc1708e, 0xce68f60d7c353bdb,
		0x0f95757ce7f38254, 0x0f04e459497f3fc1, 0x88c0a92586be0a27, 0x13eb9fb82606f7a6,
		0x8236039b7387354d, 0x4c1e87519fe738ba, 0x3f9652ac3effeb24, 0x3f33760ded9006c6,
		0xaed70a6631854cb1, 0x8a299a8f8e0e2da7, 0x624b675c779249a6, 0xa4b203bb1d90b9a3,
		0xa3293ad698ecb99a, 0xbc740023dbd50048, 0x3fe5ab9837d25cdd, 0x2d0338c1ca87d132,
	}
	s := ""
	for i, want := range series {
		assert.Equal(t, int64(want), Murmur3Token([]byte(s)), "%q", s)
		s += strconv.Itoa(i % 10)
	}
	assert.Equal(t, int64(-3758069500696749310), Murmur3Token([]byte("hello"))) // 0xcbd8a7b341bd9b02
	u := uint64(0xcd99481f9ee902c9)
	assert.Equal(t, int64(u), Murmur3Token([]byte("The quick brown fox jumps over the lazy dog.")))
	// sign-extended tail bytes (Cassandra's variant)
	key := []byte{0x00, 0x10, 0x43, 0x27, 0x52, 0x9f, 0xb6, 0x45, 0xdd, 0x00, 0xb8, 0x83, 0xec, 0x39, 0xae, 0x44, 0x8b, 0xb8, 0x00, 0x00, 0x04, 0x00, 0x06, 0x6a, 0x6b, 0x00}
	assert.Equal(t, int64(-9223371632693506265), Murmur3Token(key))
}

func threeNodeRing() *Ring {
	return NewRing([]Node{
		{ID: "a", DC: "dc1", Rack: "r1", Tokens: []int64{-100, 200}},
		{ID: "b", DC: "dc1", Rack: "r1", Tokens: []int64{0}},
		{ID: "c", DC: "dc2", Rack: "r1", Tokens: []int64{100}},
	})
}

func TestRingSimpleStrategy(t *testing.T) {
	r := threeNodeRing()
	// ring: -100:a 0:b 100:c 200:a
	assert.EqualValues(t, 0, r.Primary(-500), "before the first token: first token")
	assert.EqualValues(t, 0, r.Primary(-100))
	assert.EqualValues(t, 1, r.Primary(-99))
	assert.EqualValues(t, 2, r.Primary(100))
	assert.EqualValues(t, 0, r.Primary(201), "wraps around")
	m := r.Replicas(Replication{Class: "SimpleStrategy", RF: 2})
	require.Equal(t, 4, m.Ranges())
	assert.Equal(t, []int32{0, 1}, m.Lookup(-200))
	assert.Equal(t, []int32{1, 2}, m.Lookup(0))
	assert.Equal(t, []int32{2, 0}, m.Lookup(50))
	assert.Equal(t, []int32{0, 1}, m.Lookup(150), "a's second token, b is next distinct host")
	assert.Equal(t, []int32{0, 1}, m.Lookup(1000))
	m3 := r.Replicas(Replication{Class: "SimpleStrategy", RF: 5})
	assert.Len(t, m3.Lookup(7), 3, "RF larger than the cluster: every host once")
	var empty *ReplicaMap
	assert.Nil(t, empty.Lookup(1))
}

func TestRingNetworkTopology(t *testing.T) {
	r := threeNodeRing()
	m := r.Replicas(Replication{Class: "NetworkTopologyStrategy", DCs: map[string]int{"dc1": 1, "dc2": 1}})
	assert.Equal(t, []int32{1, 2}, m.Lookup(-50))
	assert.Equal(t, []int32{0, 2}, m.Lookup(150))
	// dc2 without replicas: ranges whose primary is in dc2 merge into the next
	only1 := r.Replicas(Replication{Class: "NetworkTopologyStrategy", DCs: map[string]int{"dc1": 2}})
	assert.Equal(t, 3, only1.Ranges())
	assert.Equal(t, []int32{0, 1}, only1.Lookup(50), "token 50 belongs to c (dc2); next dc1 range starts at a")
	// racks: two racks in dc1, RF 2 -> one replica per rack first
	rr := NewRing([]Node{
		{ID: "a", DC: "dc1", Rack: "r1", Tokens: []int64{0}},
		{ID: "b", DC: "dc1", Rack: "r1", Tokens: []int64{10}},
		{ID: "c", DC: "dc1", Rack: "r2", Tokens: []int64{20}},
	})
	mr := rr.Replicas(Replication{Class: "NetworkTopologyStrategy", DCs: map[string]int{"dc1": 2}})
	assert.Equal(t, []int32{0, 2}, mr.Lookup(0), "b is skipped: same rack as a")
	assert.Equal(t, []int32{1, 2}, mr.Lookup(5))
}

func TestParseReplication(t *testing.T) {
	rep, ok, err := ParseReplication("org.apache.cassandra.locator.SimpleStrategy", map[string]any{"replication_factor": "3"})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 3, rep.RF)
	rep, ok, err = ParseReplication("NetworkTopologyStrategy", map[string]any{"class": "x", "dc1": 3, "dc2": "2", "dc3": "x"})
	assert.True(t, ok)
	assert.ErrorContains(t, err, "dc3")
	assert.Equal(t, map[string]int{"dc1": 3, "dc2": 2}, rep.DCs)
	_, ok, err = ParseReplication("LocalStrategy", nil)
	assert.False(t, ok)
	assert.NoError(t, err)
	_, _, err = ParseReplication("SimpleStrategy", map[string]any{"replication_factor": -1})
	assert.ErrorContains(t, err, "allowed >= 0")
}

func cands(scores ...float64) []Candidate {
	c := make([]Candidate, len(scores))
	for i, s := range scores {
		c[i] = Candidate{Host: int32(i), Score: s, InRate: true}
	}
	return c
}

// TestOrderByScore: C3 ranks by score alone; a busy candidate (the
// DataStax condition, P2C's rule) keeps its place.
func TestOrderByScore(t *testing.T) {
	r := Rand(1)
	c := cands(3, 1, 2)
	assert.Equal(t, 3, OrderByScore(c, &r))
	assert.Equal(t, []int32{1, 2, 0}, hosts(c))

	c = cands(3, 1, 2)
	c[1].Busy = true
	assert.Equal(t, 3, OrderByScore(c, &r))
	assert.Equal(t, []int32{1, 2, 0}, hosts(c))
}

func hosts(c []Candidate) []int32 {
	out := make([]int32, len(c))
	for i := range c {
		out[i] = c[i].Host
	}
	return out
}

func TestPromoteInRate(t *testing.T) {
	c := cands(1, 2, 3, 4)
	c[0].InRate, c[1].InRate = false, false
	assert.True(t, PromoteInRate(c, 4))
	assert.Equal(t, []int32{2, 0, 1, 3}, hosts(c), "first within rate goes first, others keep order")
	c = cands(1, 2, 3)
	for i := range c {
		c[i].InRate = false
	}
	c[2].InRate = true
	assert.False(t, PromoteInRate(c, 2), "only the eligible prefix counts")
}

func TestHerdSpreadIdenticalScores(t *testing.T) {
	r := Rand(42)
	first := make([]int, 3)
	const n = 30000
	for i := 0; i < n; i++ {
		c := cands(5, 5, 5)
		OrderByScore(c, &r)
		first[c[0].Host]++
	}
	for h, k := range first {
		assert.InDelta(t, n/3, k, n/30, "host %d first %d of %d", h, k, n)
	}
	// the lower score always goes first, however close
	for i := 0; i < 1000; i++ {
		c := cands(1.01, 1.0)
		OrderByScore(c, &r)
		require.EqualValues(t, 1, c[0].Host)
	}
}

func TestP2CPicksLessLoaded(t *testing.T) {
	r := Rand(7)
	counts := make([]int, 3)
	for i := 0; i < 30000; i++ {
		c := cands(0, 0, 0)
		c[0].InFlight, c[1].InFlight, c[2].InFlight = 0, 5, 10
		OrderP2C(c, &r)
		counts[c[0].Host]++
		require.LessOrEqual(t, c[0].InFlight, c[1].InFlight, "first of the two random choices is the less loaded")
	}
	// least loaded wins whenever it is one of the two choices (2/3), the
	// middle one when the pair is {1,2} (1/3), the most loaded never
	assert.InDelta(t, 20000, counts[0], 800)
	assert.InDelta(t, 10000, counts[1], 800)
	assert.Equal(t, 0, counts[2])

	// busy host goes last while the majority is healthy
	for i := 0; i < 100; i++ {
		c := cands(0, 0, 0)
		c[0].Busy = true
		assert.Equal(t, 2, OrderP2C(c, &r))
		assert.EqualValues(t, 0, c[2].Host)
	}
	// two busy of three: no healthy majority, the rule is ignored
	last := map[int32]bool{}
	for i := 0; i < 100; i++ {
		c := cands(0, 0, 0)
		c[0].Busy, c[1].Busy = true, true
		assert.Equal(t, 3, OrderP2C(c, &r))
		last[c[2].Host] = true
	}
	assert.Len(t, last, 3, "any host may be last")
	// one busy of two: 1 healthy is not a strict majority
	for i := 0; i < 100; i++ {
		c := cands(0, 0)
		c[0].Busy = true
		assert.Equal(t, 2, OrderP2C(c, &r))
	}
}

func TestOrderRoundRobin(t *testing.T) {
	for k := uint64(0); k < 6; k++ {
		c := cands(0, 0, 0)
		OrderRoundRobin(c, k)
		assert.EqualValues(t, k%3, c[0].Host)
		assert.EqualValues(t, (k+1)%3, c[1].Host)
	}
	big := make([]Candidate, 20)
	for i := range big {
		big[i].Host = int32(i)
	}
	OrderRoundRobin(big, 3)
	assert.EqualValues(t, 3, big[0].Host)
	assert.EqualValues(t, 2, big[19].Host)
}
