package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tailroute/tailroute/internal/ycsb"
)

// demandWeights returns each of n clients' share of the demand. skew ""
// is an even split; "P/Q" means P % of the clients issue Q % of the
// requests (C3 §6, Figure 15): round(n*P/100) heavy clients (the first
// ones) share Q % evenly, the others share the rest evenly.
func demandWeights(skew string, n int) ([]float64, error) {
	skew = strings.TrimSpace(skew)
	w := make([]float64, n)
	if skew == "" {
		for i := range w {
			w[i] = 1 / float64(n)
		}
		return w, nil
	}
	const allowed = "P/Q with P and Q numbers in (0, 100), e.g. 20/80 (P % of the clients issue Q % of the requests)"
	ps, qs, ok := strings.Cut(skew, "/")
	p, perr := strconv.ParseFloat(strings.TrimSpace(ps), 64)
	q, qerr := strconv.ParseFloat(strings.TrimSpace(qs), 64)
	if !ok || perr != nil || qerr != nil || !(p > 0 && p < 100) || !(q > 0 && q < 100) {
		return nil, badFlag("demand-skew", skew, allowed)
	}
	heavy := int(math.Round(float64(n) * p / 100))
	if heavy < 1 || heavy > n-1 {
		return nil, badFlag("demand-skew", skew, fmt.Sprintf("%s, with -clients × P/100 rounding to at least one client in each group (here %d × %g/100 = %g gives %d of %d heavy clients; use more -clients)",
			allowed, n, p, float64(n)*p/100, heavy, n))
	}
	for i := range w {
		if i < heavy {
			w[i] = q / 100 / float64(heavy)
		} else {
			w[i] = (1 - q/100) / float64(n-heavy)
		}
	}
	return w, nil
}

// splitCount divides total among the weights by largest remainder and
// then lifts every entry to at least least, taking from the largest
// entries, so the sum stays total; only when total < len(weights)*least
// does every entry get least (and the sum exceed total).
func splitCount(total int64, weights []float64, least int64) []int64 {
	out := make([]int64, len(weights))
	if total < int64(len(weights))*least {
		for i := range out {
			out[i] = least
		}
		return out
	}
	frac := make([]float64, len(weights))
	var given int64
	for i, w := range weights {
		exact := float64(total) * w
		out[i] = int64(math.Floor(exact))
		given += out[i]
		frac[i] = exact - float64(out[i])
	}
	// The remainder goes to the largest fractional parts (first on ties).
	for left := total - given; left > 0; left-- {
		best := 0
		for j := range frac {
			if frac[j] > frac[best] {
				best = j
			}
		}
		out[best]++
		frac[best] = -1
	}
	for i := range out {
		for out[i] < least {
			big := 0
			for j := range out {
				if out[j] > out[big] {
					big = j
				}
			}
			out[big]--
			out[i]++
		}
	}
	return out
}

// client is one of -clients independent clients: its own session (in db),
// policy instance and per-host counter.
type client struct {
	inst    installed
	counter *hostCounter
	db      *cqlDB
	// attempts counts attempts per host and 100 ms (FaultStats).
	attempts *attemptWindows
}

// clientRuns is the run phase of every client: one ycsb.Runner each with its
// share of the threads, target rate and operations, all recording into the
// same Measurements.
type clientRuns struct {
	runners  []*ycsb.Runner
	results  []ycsb.Result
	progress func(done int64, elapsed time.Duration) // every progressEvery while running, when set
	// progressEvery is the progress period; 0 = every second.
	progressEvery time.Duration
}

// clientSeed is client c's workload seed; client 0 keeps -seed so a
// one-client run is the single-client run it always was.
func clientSeed(seed int64, c int) int64 { return seed + int64(c)*1_000_003 }

func newClientRuns(w *ycsb.Workload, clients []*client, o *options, m *ycsb.Measurements) (*clientRuns, error) {
	threads := splitCount(int64(o.cfg.Threads), o.weights, 1)
	var ops []int64
	if o.cfg.OperationCount > 0 {
		ops = splitCount(o.cfg.OperationCount, o.weights, 1)
	}
	cr := &clientRuns{}
	for c, cli := range clients {
		ro := ycsb.RunOptions{Phase: ycsb.PhaseRun, Seed: clientSeed(o.seed, c), Measurements: m,
			Threads: int(threads[c]), Target: -1, Operations: -1, MaxExecutionTime: o.cfg.MaxExecutionTime}
		if o.cfg.Target > 0 {
			ro.Target = o.cfg.Target * o.weights[c]
		}
		if ops != nil {
			ro.Operations = ops[c]
		}
		r, err := ycsb.NewRunner(w, cli.db, ro)
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", c, err)
		}
		cr.runners = append(cr.runners, r)
	}
	return cr, nil
}

// Done is the operations completed so far by all clients.
func (cr *clientRuns) Done() int64 {
	var n int64
	for _, r := range cr.runners {
		n += r.Done()
	}
	return n
}

// Total is the operations all clients will do (<0 = unbounded).
func (cr *clientRuns) Total() int64 {
	var n int64
	for _, r := range cr.runners {
		t := r.Total()
		if t < 0 {
			return -1
		}
		n += t
	}
	return n
}

// Run runs every client at once and returns the combined result: summed
// operations over the longest client's elapsed time, the merged summary.
func (cr *clientRuns) Run(ctx context.Context) (ycsb.Result, error) {
	cr.results = make([]ycsb.Result, len(cr.runners))
	errs := make([]error, len(cr.runners))
	start := time.Now()
	var wg sync.WaitGroup
	for i, r := range cr.runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr.results[i], errs[i] = r.Run(ctx)
		}()
	}
	stopProgress := func() {}
	if cr.progress != nil {
		stopProgress = background(ctx, func(ctx context.Context) {
			every := cr.progressEvery
			if every <= 0 {
				every = time.Second
			}
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					cr.progress(cr.Done(), time.Since(start))
				}
			}
		})
	}
	wg.Wait()
	stopProgress()
	if len(cr.results) == 1 {
		return cr.results[0], errs[0]
	}
	res := cr.results[0]
	res.Operations, res.Threads, res.Target = 0, 0, 0
	for _, r := range cr.results {
		res.Operations += r.Operations
		res.Threads += r.Threads
		res.Target += r.Target
		if r.Start.Before(res.Start) {
			res.Start = r.Start
		}
		res.Elapsed = max(res.Elapsed, r.Elapsed)
		res.Interrupted = res.Interrupted || r.Interrupted
		res.TimedOut = res.TimedOut || r.TimedOut
	}
	res.Throughput = 0
	if res.Elapsed > 0 {
		res.Throughput = float64(res.Operations) / res.Elapsed.Seconds()
	}
	res.Summary = cr.runners[0].Measurements().Summary()
	return res, errors.Join(errs...)
}

// clientOps are the operations each client completed (after Run).
func (cr *clientRuns) clientOps() []int64 {
	out := make([]int64, len(cr.results))
	for i, r := range cr.results {
		out[i] = r.Operations
	}
	return out
}
