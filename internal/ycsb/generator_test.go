package ycsb

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0xdeadbeef)) }

// zetaExact is sum_{i=1..n} 1/i^theta.
func zetaExact(n int, theta float64) float64 {
	s := 0.0
	for i := 1; i <= n; i++ {
		s += 1 / math.Pow(float64(i), theta)
	}
	return s
}

func TestFNVHash64MatchesYCSBKeys(t *testing.T) {
	// YCSB's first hashed key for record 0 is the well-known "user6284781860667377211".
	if got := BuildKeyName(0, 1, false); got != "user6284781860667377211" {
		t.Fatalf("key for record 0 = %q, want user6284781860667377211", got)
	}
	if got := BuildKeyName(42, 1, true); got != "user42" {
		t.Fatalf("ordered key = %q, want user42", got)
	}
	if got := BuildKeyName(42, 6, true); got != "user000042" {
		t.Fatalf("zero-padded key = %q, want user000042", got)
	}
	seen := map[int64]bool{}
	for i := int64(0); i < 10000; i++ {
		h := FNVHash64(i)
		if h < 0 {
			t.Fatalf("FNVHash64(%d) = %d, negative", i, h)
		}
		if seen[h] {
			t.Fatalf("FNVHash64 collision at %d", i)
		}
		seen[h] = true
	}
}

func TestZipfianMatchesAnalytic(t *testing.T) {
	const n, theta, draws = 1000, 0.99, 400_000
	z, err := NewZipfian(0, n-1, theta)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(1)
	counts := make([]int, n)
	for i := 0; i < draws; i++ {
		v := z.Next(r)
		if v < 0 || v >= n {
			t.Fatalf("value %d outside [0,%d)", v, n)
		}
		counts[v]++
	}
	zn := zetaExact(n, theta)
	// Most popular item: P(0) = 1/zeta(n) exactly (Gray's algorithm is exact for ranks 0 and 1).
	top := float64(counts[0]) / draws
	if want := 1 / zn; math.Abs(top-want) > 0.004 {
		t.Errorf("P(item 0) = %.4f, analytical 1/zeta(%d,%.2f) = %.4f", top, n, theta, want)
	}
	if want := math.Pow(0.5, theta) / zn; math.Abs(float64(counts[1])/draws-want) > 0.003 {
		t.Errorf("P(item 1) = %.4f, analytical %.4f", float64(counts[1])/draws, want)
	}
	// Item 0 must be the most popular and frequencies must decrease with rank overall.
	for i := 1; i < n; i++ {
		if counts[i] > counts[0] {
			t.Fatalf("item %d (%d draws) more popular than item 0 (%d)", i, counts[i], counts[0])
		}
	}
	top10 := 0
	for i := 0; i < 10; i++ {
		top10 += counts[i]
	}
	share := float64(top10) / draws
	// Exact Zipf share of the top 10 is zeta(10)/zeta(1000) = 0.3825; Gray's
	// approximation (YCSB) puts slightly more mass there for ranks >= 2.
	exact := zetaExact(10, theta) / zn
	if math.Abs(share-exact) > 0.025 {
		t.Errorf("top-10 share %.4f, analytical Zipf %.4f (tolerance 0.025)", share, exact)
	}
	// And precisely what Gray's closed form gives: P(X<10) = ((10/n)^(1-theta) - 1 + eta)/eta.
	eta := (1 - math.Pow(2.0/n, 1-theta)) / (1 - zetaExact(2, theta)/zn)
	gray := (math.Pow(10.0/n, 1-theta) - 1 + eta) / eta
	if math.Abs(share-gray) > 0.005 {
		t.Errorf("top-10 share %.4f, YCSB/Gray closed form %.4f (tolerance 0.005)", share, gray)
	}
}

func TestZipfianIncrementalZeta(t *testing.T) {
	z, err := NewZipfian(0, 99, ZipfianConstant)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(2)
	for i := 0; i < 1000; i++ {
		if v := z.NextN(r, 500); v < 0 || v >= 500 {
			t.Fatalf("NextN(500) = %d", v)
		}
	}
	st := z.state.Load()
	if st.count != 500 || math.Abs(st.zetan-zetaExact(500, ZipfianConstant)) > 1e-9 {
		t.Fatalf("after growth: count %d zetan %v, want 500 and %v", st.count, st.zetan, zetaExact(500, ZipfianConstant))
	}
	if _, err := NewZipfian(0, 10, 1); err == nil {
		t.Fatal("theta 1 accepted")
	}
	if _, err := NewZipfian(5, 4, 0.5); err == nil {
		t.Fatal("max < min accepted")
	}
}

func TestScrambledZipfianSpreadsHotKeys(t *testing.T) {
	const n, draws = 1000, 300_000
	s, err := NewScrambledZipfian(0, n-1)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(3)
	counts := make([]int, n)
	for i := 0; i < draws; i++ {
		v := s.Next(r)
		if v < 0 || v >= n {
			t.Fatalf("value %d outside [0,%d)", v, n)
		}
		counts[v]++
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return counts[idx[a]] > counts[idx[b]] })
	// The hottest item is rank 0 hashed: FNVHash64(0) mod n, drawn with
	// probability about 1/zeta(10^10, 0.99) = 1/26.47.
	if want := FNVHash64(0) % n; int64(idx[0]) != want {
		t.Errorf("hottest item %d, want FNVHash64(0)%%%d = %d", idx[0], n, want)
	}
	if p := float64(counts[idx[0]]) / draws; math.Abs(p-1/scrambledZetan) > 0.004 {
		t.Errorf("hottest item frequency %.4f, want about %.4f", p, 1/scrambledZetan)
	}
	// Still skewed: the hottest item is far above uniform (1/n).
	if counts[idx[0]] < 20*draws/n {
		t.Errorf("hottest item only %d draws; distribution lost its skew", counts[idx[0]])
	}
	// Spread: the 10 hottest items are scattered over the key space, not clustered at the start.
	lo, hi, below100 := n, -1, 0
	for _, i := range idx[:10] {
		lo, hi = min(lo, i), max(hi, i)
		if i < 100 {
			below100++
		}
	}
	if hi-lo < n/2 {
		t.Errorf("10 hottest items span only [%d,%d]", lo, hi)
	}
	if below100 > 5 {
		t.Errorf("%d of the 10 hottest items are in the first 10%% of the key space", below100)
	}
}

func TestHotspot(t *testing.T) {
	h, err := NewHotspot(0, 999, 0.2, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(4)
	hot := 0
	const draws = 100_000
	for i := 0; i < draws; i++ {
		v := h.Next(r)
		if v < 0 || v > 999 {
			t.Fatalf("value %d out of range", v)
		}
		if v < 200 {
			hot++
		}
	}
	if f := float64(hot) / draws; math.Abs(f-0.8) > 0.01 {
		t.Errorf("hot fraction %.3f, want 0.8", f)
	}
	for _, bad := range [][2]float64{{-0.1, 0.5}, {0.5, 1.1}} {
		if _, err := NewHotspot(0, 9, bad[0], bad[1]); err == nil {
			t.Errorf("hotspot %v accepted", bad)
		}
	}
	// Degenerate fractions still work.
	all, _ := NewHotspot(0, 9, 1, 0)
	none, _ := NewHotspot(0, 9, 0, 1)
	for i := 0; i < 100; i++ {
		if v := all.Next(r); v < 0 || v > 9 {
			t.Fatal(v)
		}
		if v := none.Next(r); v < 0 || v > 9 {
			t.Fatal(v)
		}
	}
}

func TestAcknowledgedCounterAndLatest(t *testing.T) {
	c := NewAcknowledgedCounter(100)
	if c.Last() != 99 {
		t.Fatalf("Last = %d, want 99", c.Last())
	}
	a, b, d := c.Next(), c.Next(), c.Next()
	if a != 100 || b != 101 || d != 102 {
		t.Fatalf("Next = %d %d %d", a, b, d)
	}
	_ = c.Acknowledge(b)
	_ = c.Acknowledge(d)
	if c.Last() != 99 {
		t.Fatalf("Last advanced over an unacknowledged key: %d", c.Last())
	}
	_ = c.Acknowledge(a)
	if c.Last() != 102 {
		t.Fatalf("Last = %d, want 102", c.Last())
	}

	l, err := NewSkewedLatest(c)
	if err != nil {
		t.Fatal(err)
	}
	r := rng(5)
	counts := map[int64]int{}
	for i := 0; i < 50_000; i++ {
		v := l.Next(r)
		if v < 0 || v > c.Last() {
			t.Fatalf("latest value %d outside [0,%d]", v, c.Last())
		}
		counts[v]++
	}
	for k, n := range counts {
		if n > counts[102] {
			t.Fatalf("key %d (%d) more popular than the newest key 102 (%d)", k, n, counts[102])
		}
	}
	if _, err := NewSkewedLatest(NewAcknowledgedCounter(1)); err == nil {
		t.Fatal("latest over 1 record accepted")
	}
}

func TestDiscreteProportions(t *testing.T) {
	var d Discrete[OpType]
	want := map[OpType]float64{OpRead: 0.6, OpUpdate: 0.2, OpInsert: 0.1, OpScan: 0.05, OpReadModifyWrite: 0.05}
	for op := OpRead; op < numOps; op++ {
		d.Add(want[op], op)
	}
	d.Add(0, OpRead) // ignored
	r := rng(6)
	const draws = 200_000
	got := map[OpType]int{}
	for i := 0; i < draws; i++ {
		got[d.Next(r)]++
	}
	for op, p := range want {
		if f := float64(got[op]) / draws; math.Abs(f-p) > 0.01 {
			t.Errorf("%v: %.3f, want %.3f", op, f, p)
		}
	}
}

func BenchmarkScrambledZipfian(b *testing.B) {
	s, _ := NewScrambledZipfian(0, 999_999)
	r := rng(7)
	b.ReportAllocs()
	for b.Loop() {
		s.Next(r)
	}
}

func BenchmarkKeyName(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = BuildKeyName(int64(i), 1, false)
	}
}
