package ycsb

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// ZipfianConstant is YCSB's default Zipfian skew (theta), 0.99.
const ZipfianConstant = 0.99

// scrambledItemCount and scrambledZetan are the fixed item space YCSB's
// ScrambledZipfianGenerator draws from before hashing, and zeta(10^10, 0.99)
// precomputed (YCSB's ScrambledZipfianGenerator.ZETAN).
const (
	scrambledItemCount = 10_000_000_000
	scrambledZetan     = 26.46902820178302
)

// 64-bit FNV parameters (YCSB's Utils.FNV_OFFSET_BASIS_64 and FNV_PRIME_64).
const (
	fnvOffsetBasis64 = 0xCBF29CE484222325
	fnvPrime64       = 1099511628211
)

// FNVHash64 is YCSB's Utils.fnvhash64: 64-bit FNV-1a (each byte XORed in,
// then multiplied by the prime) over the 8 little-endian bytes of val,
// returned as a non-negative int64 (Java's Math.abs; the single value whose
// absolute value overflows is mapped to 0).
func FNVHash64(val int64) int64 {
	h := uint64(fnvOffsetBasis64)
	v := uint64(val)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		v >>= 8
		h *= fnvPrime64
	}
	x := int64(h)
	if x < 0 {
		x = -x
	}
	if x < 0 { // math.MinInt64: Java would return it negative; keep keys non-negative
		x = 0
	}
	return x
}

// Generator yields integers from a distribution. Implementations are safe
// for concurrent use; the randomness comes from the caller's r, so each
// worker keeps its own deterministic stream.
type Generator interface {
	Next(r *rand.Rand) int64
}

// Uniform draws integers uniformly from [Min, Max] (YCSB's UniformLongGenerator).
type Uniform struct{ Min, Max int64 }

// Next returns a uniform value in [Min, Max].
func (u Uniform) Next(r *rand.Rand) int64 { return u.Min + r.Int64N(u.Max-u.Min+1) }

// Constant always yields V (YCSB's ConstantIntegerGenerator).
type Constant struct{ V int64 }

// Next returns V.
func (c Constant) Next(*rand.Rand) int64 { return c.V }

// zipfState is the part of a Zipfian generator that changes when the item
// count grows (YCSB's countforzeta, zetan and eta).
type zipfState struct {
	count int64
	zetan float64
	eta   float64
}

// Zipfian is YCSB's ZipfianGenerator (Gray et al., "Quickly Generating
// Billion-Record Synthetic Databases", SIGMOD 1994): item Min is the most
// popular, Min+1 the next, and so on. Items are in [Min, Min+items-1].
// Ranks 1 and 2 get exactly P(rank i) = 1/(i^theta * zeta(n, theta)); ranks
// >= 3 come from Gray et al.'s closed-form approximation, which does not give
// P(rank i) ~ 1/i^theta exactly: with theta 0.99 it puts a little more mass
// on the head (the top 10 of 1000 items get ((10/n)^(1-theta) - 1 + eta)/eta
// = 0.398 of the draws, against zeta(10)/zeta(1000) = 0.382 for an exact
// Zipf law). That approximation is what YCSB runs, so it is kept, to draw
// the same keys as YCSB. Next is lock-free; NextN with a larger item count
// extends zeta incrementally under a mutex, as YCSB does.
type Zipfian struct {
	base       int64
	items      int64
	theta      float64 // zipfian constant (theta), default 0.99
	alpha      float64 // 1/(1-theta)
	zeta2theta float64 // zeta(2, theta)
	half       float64 // 0.5^theta

	mu    sync.Mutex
	state atomic.Pointer[zipfState]
}

// NewZipfian returns a Zipfian generator over [min, max] with constant theta
// (0 < theta < 1; YCSB's default is ZipfianConstant). Construction computes
// zeta(n, theta) in O(n).
func NewZipfian(min, max int64, theta float64) (*Zipfian, error) {
	if max < min {
		return nil, fmt.Errorf("zipfian: max %d < min %d", max, min)
	}
	if !(theta > 0 && theta < 1) {
		return nil, fmt.Errorf("zipfian: constant %v out of range; allowed: 0 < theta < 1", theta)
	}
	return newZipfianZeta(min, max, theta, zeta(0, max-min+1, theta, 0)), nil
}

func newZipfianZeta(min, max int64, theta, zetan float64) *Zipfian {
	z := &Zipfian{
		base:       min,
		items:      max - min + 1,
		theta:      theta,
		alpha:      1 / (1 - theta),
		zeta2theta: zeta(0, 2, theta, 0),
		half:       math.Pow(0.5, theta),
	}
	z.state.Store(&zipfState{count: z.items, zetan: zetan, eta: z.eta(z.items, zetan)})
	return z
}

// zeta extends initial = zeta(st, theta) to zeta(n, theta) = sum_{i=1..n} 1/i^theta.
func zeta(st, n int64, theta, initial float64) float64 {
	sum := initial
	for i := st; i < n; i++ {
		sum += 1 / math.Pow(float64(i+1), theta)
	}
	return sum
}

// eta is Gray's eta for n items. (YCSB recomputes it with the original item
// count after growth; we use the current count, which is what the formula
// means.)
func (z *Zipfian) eta(n int64, zetan float64) float64 {
	return (1 - math.Pow(2/float64(n), 1-z.theta)) / (1 - z.zeta2theta/zetan)
}

// Items is the number of items the generator was built for.
func (z *Zipfian) Items() int64 { return z.items }

// Next returns the next value in [Min, Min+Items-1].
func (z *Zipfian) Next(r *rand.Rand) int64 { return z.NextN(r, z.items) }

// NextN draws from the first itemcount items (YCSB's nextLong(itemcount)).
// A count larger than ever seen before extends zeta incrementally; a smaller
// one reuses the larger zeta (YCSB's allowitemcountdecrease=false).
func (z *Zipfian) NextN(r *rand.Rand, itemcount int64) int64 {
	st := z.state.Load()
	if itemcount > st.count {
		z.mu.Lock()
		st = z.state.Load()
		if itemcount > st.count {
			zn := zeta(st.count, itemcount, z.theta, st.zetan)
			st = &zipfState{count: itemcount, zetan: zn, eta: z.eta(itemcount, zn)}
			z.state.Store(st)
		}
		z.mu.Unlock()
	}
	u := r.Float64()
	uz := u * st.zetan
	if uz < 1 {
		return z.base
	}
	if uz < 1+z.half {
		return z.base + 1
	}
	return z.base + int64(float64(itemcount)*math.Pow(st.eta*u-st.eta+1, z.alpha))
}

// ScrambledZipfian is YCSB's ScrambledZipfianGenerator: a Zipfian rank drawn
// from a fixed space of 10^10 items (theta 0.99) is hashed with FNVHash64
// and folded into [Min, Max], so popular items are scattered over the key
// space instead of clustering at Min.
type ScrambledZipfian struct {
	min, itemcount int64
	gen            *Zipfian
}

// NewScrambledZipfian returns YCSB's scrambled Zipfian over [min, max] with
// the default constant 0.99 (YCSB precomputes zeta(10^10, 0.99); other
// constants would need an O(10^10) zeta and are not offered).
func NewScrambledZipfian(min, max int64) (*ScrambledZipfian, error) {
	if max < min {
		return nil, fmt.Errorf("scrambled zipfian: max %d < min %d", max, min)
	}
	return &ScrambledZipfian{
		min:       min,
		itemcount: max - min + 1,
		gen:       newZipfianZeta(0, scrambledItemCount, ZipfianConstant, scrambledZetan),
	}, nil
}

// Next returns the next scrambled value in [Min, Max].
func (s *ScrambledZipfian) Next(r *rand.Rand) int64 {
	return s.min + FNVHash64(s.gen.Next(r))%s.itemcount
}

// Hotspot is YCSB's HotspotIntegerGenerator: a fraction HotOpn of draws
// fall uniformly in the first HotSet fraction of [Min, Max], the rest
// uniformly in the remainder.
type Hotspot struct {
	lower, hot, cold int64
	hotOpn           float64
}

// NewHotspot returns a hotspot generator over [lower, upper]. hotSet
// (hotspotdatafraction, default 0.2) and hotOpn (hotspotopnfraction, default
// 0.8) must be in [0, 1].
func NewHotspot(lower, upper int64, hotSet, hotOpn float64) (*Hotspot, error) {
	if upper < lower {
		return nil, fmt.Errorf("hotspot: upper %d < lower %d", upper, lower)
	}
	if !(hotSet >= 0 && hotSet <= 1) {
		return nil, fmt.Errorf("hotspot: hot set fraction %v out of range; allowed: [0, 1]", hotSet)
	}
	if !(hotOpn >= 0 && hotOpn <= 1) {
		return nil, fmt.Errorf("hotspot: hot operation fraction %v out of range; allowed: [0, 1]", hotOpn)
	}
	n := upper - lower + 1
	hot := int64(float64(n) * hotSet)
	return &Hotspot{lower: lower, hot: hot, cold: n - hot, hotOpn: hotOpn}, nil
}

// Next returns the next hotspot value.
func (h *Hotspot) Next(r *rand.Rand) int64 {
	if h.cold == 0 || (h.hot > 0 && r.Float64() < h.hotOpn) {
		return h.lower + r.Int64N(h.hot)
	}
	return h.lower + h.hot + r.Int64N(h.cold)
}

// AcknowledgedCounter is YCSB's AcknowledgedCounterGenerator: Next hands
// out increasing key numbers for inserts; Last is the highest number below
// which every insert has been acknowledged, so readers never pick a key
// whose insert is still in flight.
type AcknowledgedCounter struct {
	next  atomic.Int64
	limit atomic.Int64
	mu    sync.Mutex
	win   []bool
}

const ackWindow = 1 << 16

// ErrTooManyUnacknowledged reports more than 65536 inserts in flight.
var ErrTooManyUnacknowledged = errors.New("ycsb: too many unacknowledged insert keys")

// NewAcknowledgedCounter starts handing out numbers at start; Last is start-1.
func NewAcknowledgedCounter(start int64) *AcknowledgedCounter {
	c := &AcknowledgedCounter{win: make([]bool, ackWindow)}
	c.next.Store(start)
	c.limit.Store(start - 1)
	return c
}

// Next returns the next key number to insert.
func (c *AcknowledgedCounter) Next() int64 { return c.next.Add(1) - 1 }

// Last returns the highest key number such that it and all before it are acknowledged.
func (c *AcknowledgedCounter) Last() int64 { return c.limit.Load() }

// Acknowledge marks v as inserted (successfully or not) and advances Last
// over every contiguous acknowledged number.
func (c *AcknowledgedCounter) Acknowledge(v int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.limit.Load()
	if v-limit > ackWindow {
		return ErrTooManyUnacknowledged
	}
	c.win[v&(ackWindow-1)] = true
	i := limit + 1
	for c.win[i&(ackWindow-1)] {
		c.win[i&(ackWindow-1)] = false
		i++
	}
	c.limit.Store(i - 1)
	return nil
}

// SkewedLatest is YCSB's SkewedLatestGenerator: a Zipfian over the distance
// from the most recently acknowledged insert, so the newest records are the
// most popular (requestdistribution=latest).
type SkewedLatest struct {
	basis *AcknowledgedCounter
	zipf  *Zipfian
}

// NewSkewedLatest builds the generator on basis; basis.Last() must be >= 1.
func NewSkewedLatest(basis *AcknowledgedCounter) (*SkewedLatest, error) {
	n := basis.Last()
	if n < 1 {
		return nil, fmt.Errorf("latest distribution needs at least 2 records, have %d", n+1)
	}
	z, err := NewZipfian(0, n-1, ZipfianConstant)
	if err != nil {
		return nil, err
	}
	return &SkewedLatest{basis: basis, zipf: z}, nil
}

// Next returns Last() minus a Zipfian distance.
func (s *SkewedLatest) Next(r *rand.Rand) int64 {
	max := s.basis.Last()
	return max - s.zipf.NextN(r, max)
}

// Discrete picks one of several values with given weights (YCSB's
// DiscreteGenerator); weights need not sum to 1.
type Discrete[T any] struct {
	cum    []float64
	values []T
}

// Add appends value with weight w (ignored when w <= 0, as YCSB does).
func (d *Discrete[T]) Add(w float64, value T) {
	if w <= 0 {
		return
	}
	prev := 0.0
	if n := len(d.cum); n > 0 {
		prev = d.cum[n-1]
	}
	d.cum = append(d.cum, prev+w)
	d.values = append(d.values, value)
}

// Len is the number of values with positive weight.
func (d *Discrete[T]) Len() int { return len(d.values) }

// Next picks a value; it must not be called on an empty Discrete.
func (d *Discrete[T]) Next(r *rand.Rand) T {
	x := r.Float64() * d.cum[len(d.cum)-1]
	for i, c := range d.cum {
		if x < c {
			return d.values[i]
		}
	}
	return d.values[len(d.values)-1]
}
