//go:build ignore

// Scratch tests of docs/experiments/scale-dispersion.md: copy this file into
// internal/vsim/ as scratch_test.go (without this build line) and run
//
//	REQ=300000 go test -count=1 -v -run TestScratchRRvsRR ./internal/vsim/
//	REQ=1200000 ST=tailroute go test -count=1 -v -timeout 30m -run TestScratchSeries ./internal/vsim/
//	go test -count=1 -v -timeout 30m -run TestScratchPhase ./internal/vsim/
//	REQ=1200000 U=0.8 ST=tailroute go test -count=1 -v -timeout 30m -run TestScratchCascade ./internal/vsim/
//
// TestScratchPhase needs one line in model.go's atServer, after the counts:
//
//	if scratchPhase != nil && !r.shadow && sv.pauseAt > 0 && now > m.cfg.Warmup {
//		scratchPhase[int((now-sv.pauseAt)/(10*time.Millisecond))]++
//	}
//
// and `var scratchPhase map[int]int` in the package.
package vsim

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"
)

func worst(a, b []float64) (float64, int) {
	w, wi := 0.0, -1
	for i := range a {
		if b[i] > 0 && !math.IsNaN(a[i]) && a[i]/b[i] > w {
			w, wi = a[i]/b[i], i
		}
	}
	return w, wi
}

func TestScratchRRvsRR(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("REQ"))
	run := func(st string, seed uint64) []float64 {
		c := Config{Servers: 100, Clients: 1000, Workers: 4, MeanService: 4 * time.Millisecond,
			Utilization: 0.5, Placement: Ring, Requests: n, Warmup: time.Second, Strategy: st, Seed: seed}
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		return res.Dispersion()
	}
	d1, d2, d3 := run("token-aware", 1), run("token-aware", 2), run("token-aware", 3)
	w12, i12 := worst(d1, d2)
	w21, i21 := worst(d2, d1)
	w13, i13 := worst(d3, d1)
	fmt.Printf("requests %d: RR seed1/seed2 worst %.2f (s%d), seed2/seed1 %.2f (s%d), seed3/seed1 %.2f (s%d)\n", n, w12, i12, w21, i21, w13, i13)
}
func TestScratchPhase(t *testing.T) {
	for _, u := range []float64{0.5} {
		for _, st := range []string{"token-aware", "tailroute", "datastax", "oracle"} {
			scratchPhase = map[int]int{}
			c := Config{Servers: 100, Clients: 1000, Workers: 4, MeanService: 4 * time.Millisecond,
				Utilization: u, Placement: Ring, Requests: 200000, Warmup: time.Second, Strategy: st, Seed: 1,
				PauseEvery: 2 * time.Second, PauseFor: 150 * time.Millisecond}
			if _, err := Run(c); err != nil {
				t.Fatal(err)
			}
			tot := 0
			for _, v := range scratchPhase {
				tot += v
			}
			sh := func(a, b int) float64 { // ms
				n := 0
				for k, v := range scratchPhase {
					if k*10 >= a && k*10 < b {
						n += v
					}
				}
				return 100 * float64(n) / float64(tot)
			}
			fmt.Printf("u%.0f %-12s pause 0-50 %.2f%% 50-100 %.2f%% 100-150 %.2f%% | after 150-300 %.2f%% 300-600 %.2f%% | before 1700-2000 %.2f%% (even: 2.5/2.5/2.5 | 7.5 15 | 15)\n",
				u*100, st, sh(0, 50), sh(50, 100), sh(100, 150), sh(150, 300), sh(300, 600), sh(1700, 2000))
		}
	}
}
func TestScratchSeries(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("REQ"))
	st := os.Getenv("ST")
	c := Config{Servers: 100, Clients: 1000, Workers: 4, MeanService: 4 * time.Millisecond,
		Utilization: 0.5, Placement: Ring, Requests: n, Warmup: time.Second, Strategy: st, Seed: 1,
		Slow: []Slow{{Server: 0, Factor: 5}}}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	printWindows(st, res, 0, 34)
}

func TestScratchCascade(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("REQ"))
	u, _ := strconv.ParseFloat(os.Getenv("U"), 64)
	st := os.Getenv("ST")
	c := Config{Servers: 100, Clients: 1000, Workers: 4, MeanService: 4 * time.Millisecond,
		Utilization: u, Placement: Uniform, Requests: n, Warmup: time.Second, Strategy: st, Seed: 1,
		Slow: []Slow{{Server: 0, Factor: 5}}, Overload: []Overload{{Server: 1, Queue: 8, Factor: 2}}}
	res, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Dispersion()
	fmt.Printf("%s dispersion s0 %.2f s1 %.2f p99 %.2f ms\n", st, d[0], d[1], float64(res.Quantile(0.99))/1e6)
	printWindows(st, res, 0, 1)
}

// printWindows prints the servers' requests per 100 ms, 5 s a line.
func printWindows(st string, res *Result, servers ...int) {
	for _, srv := range servers {
		fmt.Printf("%s s%d per 100ms:", st, srv)
		for i, v := range res.Windows[srv] {
			if i%50 == 0 {
				fmt.Printf("\n%3ds:", i/10)
			}
			fmt.Printf(" %d", v)
		}
		fmt.Println()
	}
}
