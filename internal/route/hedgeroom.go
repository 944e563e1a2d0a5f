package route

import (
	"slices"
	"time"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/track"
)

// maxRoomHosts bounds the hosts HedgeRoom reads (a stack array: no
// allocation); with more local hosts it reads an evenly spaced sample.
const maxRoomHosts = 64

// HedgeRoom is the load a hedging rule reads (internal/hedge.LoadSource):
//
//   - Wait: the expected response time of the host a hedge would go to,
//     the median up local host by core.ExpectedResponse (the C3 inputs of
//     the score, without the cube). A hedge goes to the second-ranked
//     replica of its key; with the key's replicas spread over the hosts,
//     that replica ranks, on average, in the middle (exactly so with
//     replication factor 3). The client's own outstanding requests
//     (os_s x w) count only on a host whose W_s is known: with W_s assumed
//     (WithServerWorkers, default 1) they are the score's deliberately
//     pessimistic herd guard, not a queue, and the host's R_s (plus a
//     polled queue) is the estimate. 0 when no host is up.
//   - Busy: the median up local host's share of workers taken
//     (workersTaken / W_s), at most 1; 1 on a host whose W_s is unknown
//     (the client cannot tell its queue from work in service) and when no
//     host is up; BusyAssumed then says so.
//   - Saturated: every up local host has a known worker count W_s
//     (polled, WithServerLoad) and all its workers taken
//     (workersTaken >= W_s). False while some host's W_s is
//     unknown: that host may have room.
//   - StalledFor: the longest Silence among the up local hosts it reads
//     that are stalled by the rule the rate rule uses (stalled,
//     WithStall); 0 when none is.
//   - OneOfMany: track.Tracker.OneOfMany, the concurrency weight in force
//     (given at the start and after each poll pair) at least
//     track.ManyClients.
//
// One View per host; no allocation. The hedger calls it at most once per
// few milliseconds, not per request.
func (p *Router[H, S]) HedgeRoom() tailroute.Room {
	t := p.tbl.Load()
	many := p.tr.OneOfMany()
	if t == nil || len(t.local) == 0 {
		return tailroute.Room{Busy: 1, BusyAssumed: true, OneOfMany: many}
	}
	now := p.clock.Now()
	var waits, busy [maxRoomHosts]float64
	n, known, full := 0, 0, 0
	var stalledFor time.Duration
	step := 1
	if len(t.local) > maxRoomHosts {
		step = (len(t.local) + maxRoomHosts - 1) / maxRoomHosts
	}
	for k := 0; k < len(t.local) && n < maxRoomHosts; k += step {
		e := t.hosts[t.local[k]]
		if !e.up.Load() {
			continue
		}
		v := e.h.View(now)
		if p.stalled(&v) {
			stalledFor = max(stalledFor, v.Silence)
		}
		w, workers := p.scoreWeights(&v, now)
		os := v.Outstanding()
		if v.Workers <= 0 {
			os = 0 // W_s unknown: os_s x w says nothing of a queue
		}
		waits[n] = core.ExpectedResponse(v.ResponseTime, v.ServiceTime, v.QueueSize, os, w, workers)
		busy[n] = 1
		if v.Workers > 0 {
			known++
			taken := workersTaken(&v, w, e.h.ServerQueue())
			if taken >= v.Workers {
				full++
			}
			busy[n] = min(1, taken/v.Workers)
		}
		n++
	}
	if n == 0 {
		return tailroute.Room{Busy: 1, BusyAssumed: true, OneOfMany: many}
	}
	ws, bs := waits[:n], busy[:n]
	slices.Sort(ws)
	slices.Sort(bs)
	return tailroute.Room{Wait: time.Duration(ws[(n-1)/2]), Busy: bs[(n-1)/2], Saturated: known == n && full == known, StalledFor: stalledFor, BusyAssumed: known < n, OneOfMany: many}
}

// workersTaken is the requests a host is serving or queueing as the load
// rule counts them (package speculative, "Load rule"): the client's own
// outstanding requests plus the other clients'. Those are read from the
// polled queue (polled, track.Host.ServerQueue: C3's q_s, the host's active
// and pending tasks less this client's in flight counted w_eff times at the
// poll, so with w_eff > 1 it leaves out (w_eff-1) x os_s of the others' at
// the poll) as far as its sample counts (View.ServerLoadWeight) and guessed
// as outstanding x (w-1), C3's concurrency compensation, for the rest;
// without a polled sample, outstanding x w plus the queue the host reports
// (payload feedback).
func workersTaken(v *track.View, w, polled float64) float64 {
	os := float64(v.Outstanding())
	if wt := v.ServerLoadWeight; wt > 0 {
		return os + wt*polled + (1-wt)*os*(w-1)
	}
	return os*w + v.QueueSize
}
