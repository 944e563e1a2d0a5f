// Service queue: admission of data requests, the W workers serving them and
// their completion (the node's queueing model, see model.go).

package sim

import (
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// request is one queued data request.
type request struct {
	c        *conn
	stream   int16
	version  uint8
	bound    *boundStmt
	injectRT bool // answer with an injected read timeout after service
	stage    int  // thread pool it is counted in (stageRead, stageMutation)
	enq      time.Time
	fwd      *forwarded // non-nil when a replica executes it for another coordinator
	// With Config.Network: when the request reaches the node executing it
	// (the client's send plus the one-way delays on its way), the delay of
	// its answer's way back to the client (through the coordinator for a
	// forwarded read), and of the last hop, coordinator to client.
	arrive         time.Time
	back, toClient time.Duration
}

// setWorkers sets W. Worker goroutines are never retired before Close:
// those with an id >= W just stay idle, so W can go up and down freely.
func (n *Node) setWorkers(w int) {
	n.workersMu.Lock()
	defer n.workersMu.Unlock()
	n.target.Store(int32(w))
	ch := make(chan struct{})
	if old := n.changed.Swap(&ch); old != nil {
		close(*old)
	}
	for n.spawned < w {
		n.c.wg.Add(1)
		go n.worker(n.spawned, n.seed+uint64(n.spawned+1)*0x632be59bd9b4e019)
		n.spawned++
	}
}

// worker serves the FIFO queue. Service is timed on a per-worker virtual
// clock: a request starts at max(its arrival, the worker's previous virtual
// completion, the end of a pause) and completes st later; the worker sleeps
// until that instant. Timer overshoot (about 1 ms on Linux) therefore delays
// single responses but never accumulates, so the node's rate stays mu.
func (n *Node) worker(id int, seed uint64) {
	defer n.c.wg.Done()
	r := rng{s: splitmix(seed) | 1}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	sleep := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		timer.Reset(d)
		select {
		case <-timer.C:
			return true
		case <-n.c.done:
			return false
		}
	}
	var vt time.Time // virtual completion time of the previous request
	for {
		var req *request
		changed := *n.changed.Load()
		if int32(id) >= n.target.Load() {
			select { // retired: wait for W to change
			case <-changed:
				continue
			case <-n.c.done:
				return
			}
		}
		select {
		case req = <-n.queue:
		case <-changed:
			continue
		case <-n.c.done:
			return
		}
		n.waiting.Add(-1)
		n.inService.Add(1)
		n.stages[req.stage].pending.Add(-1)
		n.stages[req.stage].active.Add(1)
		paused, ok := n.waitPause(sleep)
		if !ok {
			return
		}
		ms := n.model.Load()
		var st time.Duration
		if !ms.ZeroService {
			start := req.enq
			if vt.After(start) {
				start = vt
			}
			now := time.Now()
			if paused && now.After(start) {
				start = now
			}
			st = time.Duration(float64(ms.meanService(start)) * r.exp())
			end := start.Add(st)
			if !n.sleepUntil(end, req.back, sleep) {
				return
			}
			if paused, ok = n.waitPause(sleep); !ok {
				return
			} else if paused {
				end = time.Now()
				if !n.sleepUntil(end, req.back, sleep) {
					return
				}
			}
			vt = end
		}
		// The stage counts the task done before its response leaves, so a
		// client holding the answer never polls a count without it.
		n.stages[req.stage].active.Add(-1)
		n.stages[req.stage].completed.Add(1)
		n.complete(req, st)
		n.inService.Add(-1)
	}
}

// sleepUntil waits until a request's service ends (end) and, with
// Config.Network, its answer has travelled back (end + back): the worker
// holds the request on its way back, so the answer leaves on time without
// a timer of its own (the virtual clock keeps the node's rate). Without a
// Network it sleeps on a Go timer, as every node always has; with one,
// precisely (sleepUntil), so sub-millisecond delays are not lost in the
// timer's millisecond wake-ups.
func (n *Node) sleepUntil(end time.Time, back time.Duration, sleep func(time.Duration) bool) bool {
	if n.c.net == nil {
		return sleep(time.Until(end))
	}
	return sleepUntil(end.Add(back), n.c.done)
}

// waitPause blocks while a one-off or periodic pause is in force; paused
// reports whether it waited, ok is false when the cluster closed.
func (n *Node) waitPause(sleep func(time.Duration) bool) (paused, ok bool) {
	for {
		now := time.Now()
		end := n.pauseEnd(now)
		if !end.After(now) {
			return paused, true
		}
		paused = true
		if !sleep(end.Sub(now)) {
			return paused, false
		}
	}
}

// maxAhead is how long before its arrival (Config.Network) a data request
// may be queued; one arriving later waits outside the queue.
const maxAhead = 2 * time.Millisecond

// admit decides injected errors and enqueues a data request; overloaded
// and unavailable errors are answered at once, read timeouts after service.
func (n *Node) admit(req *request) {
	ms := n.model.Load()
	if !ms.ZeroService {
		req.enq = time.Now()
		if ahead := req.arrive.Sub(req.enq); ahead > maxAhead {
			// still on its way (another DC): admitted on arrival, so it
			// never holds a worker idle while others could serve
			n.c.wg.Add(1)
			go func() {
				defer n.c.wg.Done()
				if sleepUntil(req.arrive, n.c.done) {
					n.admit(req)
				}
			}()
			return
		} else if ahead > 0 {
			req.enq = req.arrive // in service no earlier than its arrival
		}
	}
	switch n.injectedKind(ms) {
	case "":
	case "read_timeout":
		req.injectRT = true
	default:
		n.errors.Add(1)
		req.answer(req.failure(injectedError(ms.InjectedError)), nil)
		return
	}
	req.stage = stageOf(req.bound)
	n.waiting.Add(1)
	n.stages[req.stage].pending.Add(1)
	select {
	case n.queue <- req:
	default:
		n.waiting.Add(-1)
		n.stages[req.stage].pending.Add(-1)
		n.errors.Add(1)
		req.answer(req.failure(injectedError("overloaded")), nil)
	}
}

// injectedKind draws whether a data request gets the model's injected
// error and returns its kind, or "" for none.
func (n *Node) injectedKind(ms *modelState) string {
	if ms.ErrorRate <= 0 {
		return ""
	}
	n.admRng.Lock()
	hit := n.admRng.r.float() < ms.ErrorRate
	n.admRng.Unlock()
	if !hit {
		return ""
	}
	return ms.InjectedError
}

// complete executes the request and answers it.
func (n *Node) complete(req *request, st time.Duration) {
	var payload map[string][]byte
	if n.c.feedback && req.version >= 4 {
		// outstanding requests besides this one
		payload = feedbackPayload(uint64(n.waiting.Load()+n.inService.Load()-1), uint64(st/time.Microsecond))
	}
	if req.injectRT {
		n.errors.Add(1)
		req.answer(req.failure(injectedError("read_timeout")), payload)
		return
	}
	msg := n.execDataSafe(req.bound)
	if isErrorMsg(msg) {
		n.errors.Add(1)
	} else {
		n.served.Add(1)
		n.windows.inc(time.Now())
	}
	req.answer(msg, payload)
}

func (n *Node) execDataSafe(b *boundStmt) (msg message.Message) {
	defer func() {
		if r := recover(); r != nil {
			msg = &message.ServerError{ErrorMessage: fmt.Sprintf("sim: internal error: %v", r)}
		}
	}()
	return n.execData(b)
}
