package hedge

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sec = int64(time.Second)

func TestBudgetNeedsRequestsBeforeFirstHedge(t *testing.T) {
	b := NewBudget(0.05, 10*sec)
	for i := 0; i < 19; i++ {
		b.Request(0)
	}
	assert.False(t, b.TryReserve(0), "19 requests x 5% < 1 hedge")
	b.Request(0)
	assert.True(t, b.TryReserve(0), "20 requests x 5% = 1 hedge")
	assert.False(t, b.TryReserve(0), "the one token is reserved")
}

func TestBudgetCapsHedgesToFraction(t *testing.T) {
	b := NewBudget(0.05, 10*sec)
	for i := 0; i < 1000; i++ {
		b.Request(int64(i) * int64(time.Millisecond))
	}
	now := int64(time.Second)
	n := 0
	for b.TryReserve(now) {
		b.Charge(now, true)
		n++
		require.Less(t, n, 1000)
	}
	assert.Equal(t, 50, n)
	req, hedges, res := b.Window(now)
	assert.Equal(t, uint64(1000), req)
	assert.Equal(t, uint64(50), hedges)
	assert.Equal(t, int64(0), res)
}

func TestBudgetReservationsCountAndRelease(t *testing.T) {
	b := NewBudget(0.1, 10*sec)
	for i := 0; i < 100; i++ {
		b.Request(0)
	}
	for i := 0; i < 10; i++ {
		require.True(t, b.TryReserve(0), i)
	}
	assert.False(t, b.TryReserve(0), "10 reservations hold the whole budget")
	b.Release()
	assert.True(t, b.TryReserve(0), "a released token can be reserved again")
	b.Charge(0, true)
	_, hedges, res := b.Window(0)
	assert.Equal(t, uint64(1), hedges)
	assert.Equal(t, int64(9), res)
	assert.False(t, b.TryReserve(0))
}

func TestBudgetWindowSlides(t *testing.T) {
	const w = 10 * sec
	b := NewBudget(0.05, w)
	for i := 0; i < 100; i++ {
		b.Request(0)
	}
	for b.TryReserve(0) {
		b.Charge(0, true)
	}
	// spent: 5 hedges for 100 requests
	b.Request(w / 2)
	assert.False(t, b.TryReserve(w/2), "still spent half a window later")
	req, hedges, _ := b.Window(w / 2)
	assert.Equal(t, uint64(101), req)
	assert.Equal(t, uint64(5), hedges)

	// one full window later the old requests and hedges are gone; only the
	// request at w/2 is left
	req, hedges, _ = b.Window(w)
	assert.Equal(t, uint64(1), req)
	assert.Equal(t, uint64(0), hedges)
	assert.False(t, b.TryReserve(w), "1 request x 5% < 1 hedge")
	for i := 0; i < 19; i++ {
		b.Request(w)
	}
	assert.True(t, b.TryReserve(w), "fresh requests fund a hedge again")

	// far in the future everything expired, buckets are recycled correctly
	far := 1000 * w
	req, hedges, res := b.Window(far)
	assert.Equal(t, uint64(0), req)
	assert.Equal(t, uint64(0), hedges)
	assert.Equal(t, int64(1), res)
	b.Request(far)
	req, _, _ = b.Window(far)
	assert.Equal(t, uint64(1), req)
}

func TestBudgetBucketEdges(t *testing.T) {
	const w = 10 * sec
	b := NewBudget(0.5, w)
	bucket := w / budgetBuckets
	b.Request(0)
	// counted for budgetBuckets buckets, gone at the start of bucket 20
	req, _, _ := b.Window(w - 1)
	assert.Equal(t, uint64(1), req)
	req, _, _ = b.Window(w)
	assert.Equal(t, uint64(0), req)
	b.Request(3 * bucket)
	req, _, _ = b.Window(w + 3*bucket - 1)
	assert.Equal(t, uint64(1), req)
}

func TestBudgetZeroFractionNeverHedges(t *testing.T) {
	b := NewBudget(0, 10*sec)
	for i := 0; i < 10000; i++ {
		b.Request(0)
	}
	assert.False(t, b.TryReserve(0))
}

func TestBudgetConcurrentNeverOverspends(t *testing.T) {
	b := NewBudget(0.05, 10*sec)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				b.Request(0)
				if b.TryReserve(0) {
					if i%2 == 0 {
						b.Charge(0, true)
						mu.Lock()
						granted++
						mu.Unlock()
					} else {
						b.Release()
					}
				}
			}
		}()
	}
	wg.Wait()
	req, hedges, res := b.Window(0)
	assert.Equal(t, uint64(16000), req)
	assert.Equal(t, uint64(granted), hedges)
	assert.Equal(t, int64(0), res)
	assert.LessOrEqual(t, float64(hedges), 0.05*float64(req))
	assert.Greater(t, hedges, uint64(0))
}
