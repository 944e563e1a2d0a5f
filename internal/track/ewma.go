package track

import (
	"math"
	"sync/atomic"
)

// emptyMask makes the zero value of ewma mean "no sample yet": the stored word
// is the float's bits XOR emptyMask, so a zero word decodes to a NaN marker.
const emptyMask = 0x7ff8_0000_0000_0001

// ewma is a lock-free exponentially weighted moving average of float64
// samples. The zero value is empty.
type ewma struct{ w atomic.Uint64 }

func (e *ewma) add(x, alpha float64) { e.addCapped(x, alpha, 0) }

// addCapped is add with x first bounded to capFactor times the current
// average (no bound when capFactor <= 0 or the average is empty), read in
// the same load as the update.
func (e *ewma) addCapped(x, alpha, capFactor float64) {
	for {
		old := e.w.Load()
		nf := x
		if old != 0 {
			of := math.Float64frombits(old ^ emptyMask)
			if capFactor > 0 && x > capFactor*of {
				x = capFactor * of
			}
			nf = of + alpha*(x-of)
		}
		if e.w.CompareAndSwap(old, math.Float64bits(nf)^emptyMask) {
			return
		}
	}
}

// get returns the average and whether any sample was recorded.
func (e *ewma) get() (float64, bool) {
	v := e.w.Load()
	if v == 0 {
		return 0, false
	}
	return math.Float64frombits(v ^ emptyMask), true
}

func (e *ewma) reset() { e.w.Store(0) }

// decay moves a non-empty average toward target: v <- target + (v-target)*f.
func (e *ewma) decay(target, f float64) {
	for {
		old := e.w.Load()
		if old == 0 {
			return
		}
		of := math.Float64frombits(old ^ emptyMask)
		if e.w.CompareAndSwap(old, math.Float64bits(target+(of-target)*f)^emptyMask) {
			return
		}
	}
}
