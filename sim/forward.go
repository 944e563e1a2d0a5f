// Read forwarding: a single-partition read whose coordinator is not one of
// its replicas is executed by a replica the coordinator's dynamic snitch
// picks, through that replica's service model.

package sim

import (
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// forwarded is set on a request a coordinator handed to a replica.
type forwarded struct {
	coord   *Node     // the coordinator the client sent the request to
	replica int       // member index of the executing replica
	at      time.Time // when the coordinator forwarded it
}

// route admits a data request on the node that executes it: this node,
// unless the request is a single-partition SELECT, this node is not one
// of the partition's replicas and the replicas run in this process; then
// the snitch's replica among the running ones executes it (no running
// replica: Unavailable). The coordinator spends no service time on it but
// forwards only when not paused, and answers its own injected overloaded
// or unavailable errors (decisions a Cassandra coordinator takes itself)
// at once; an injected read_timeout applies on the executing node only.
func (n *Node) route(req *request) {
	reps := n.readReplicas(req.bound)
	if reps == nil {
		n.admit(req)
		return
	}
	var live []int
	for _, r := range reps {
		if rn := n.c.members[r].node; rn != nil && rn.Running() {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		n.errors.Add(1)
		req.c.sendMsg(req.version, req.stream, &message.Unavailable{ErrorMessage: "Cannot achieve consistency level ONE",
			Consistency: primitive.ConsistencyLevelOne, Required: 1, Alive: 0}, nil)
		return
	}
	n.afterPause(func() {
		if kind := n.injectedKind(n.model.Load()); kind != "" && kind != "read_timeout" {
			n.errors.Add(1)
			req.c.sendMsg(req.version, req.stream, injectedError(kind), nil)
			return
		}
		r := n.snitch.pick(live, time.Now())
		n.forwards.Add(1)
		req.fwd = &forwarded{coord: n, replica: r, at: time.Now()}
		if nw := n.c.net; nw != nil && !req.arrive.IsZero() {
			rm, cz := n.c.members[r], Zone{n.m.dc, n.m.rack}
			rz := Zone{rm.dc, rm.rack}
			req.fwd.at = req.arrive // the snitch times from the request's arrival here
			req.arrive = req.arrive.Add(nw.delay(cz, rz))
			req.back += nw.delay(rz, cz)
		}
		n.c.members[r].node.admit(req)
	})
}

// readReplicas returns the replicas of a single-partition SELECT when this
// node is not one of them and all of them run in this process; nil
// otherwise (the request is executed here).
func (n *Node) readReplicas(b *boundStmt) []int {
	p := b.p
	if p.st.kind != stSelect || p.keyRel < 0 {
		return nil
	}
	r := p.st.where[p.keyRel]
	key, ok, err := b.value(r.val, p.td.cols[p.td.pk].typ, r.col)
	if err != nil || !ok || key == nil {
		return nil // execData answers the error
	}
	reps := n.c.schema.replicasOf(p.ks, Murmur3Token(key))
	for _, i := range reps {
		if i == n.m.idx || n.c.members[i].node == nil {
			return nil
		}
	}
	return reps
}

// afterPause runs f now, or once this node's pause ends.
func (n *Node) afterPause(f func()) {
	now := time.Now()
	end := n.pauseEnd(now)
	if !end.After(now) {
		f()
		return
	}
	n.c.wg.Add(1)
	go func() {
		defer n.c.wg.Done()
		t := time.NewTimer(time.Until(end))
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-n.c.done:
				return
			}
			now := time.Now()
			if end = n.pauseEnd(now); !end.After(now) {
				f()
				return
			}
			t.Reset(end.Sub(now))
		}
	}()
}

// pauseEnd returns the end of the one-off or periodic pause covering now
// (not after now when the node is not paused).
func (n *Node) pauseEnd(now time.Time) time.Time {
	end := time.Unix(0, n.pauseUntil.Load())
	if pe := n.model.Load().periodicPauseEnd(now); pe.After(end) {
		end = pe
	}
	return end
}

// answer sends a data request's response: directly when this node
// coordinated it, otherwise through its coordinator once that is not
// paused, after recording the replica's latency in the coordinator's
// snitch (failed: readRequestTimeout).
func (req *request) answer(msg message.Message, payload map[string][]byte) {
	if due := req.arrive.Add(req.back); !req.arrive.IsZero() && time.Until(due) > 0 {
		// answered before service (an error at admission): the answer
		// still travels the network
		n := req.c.n
		n.c.wg.Add(1)
		go func() {
			defer n.c.wg.Done()
			if sleepUntil(due, n.c.done) {
				req.answerNow(msg, payload)
			}
		}()
		return
	}
	req.answerNow(msg, payload)
}

func (req *request) answerNow(msg message.Message, payload map[string][]byte) {
	f := req.fwd
	if f == nil {
		req.c.sendMsg(req.version, req.stream, msg, payload)
		return
	}
	lat := time.Since(f.at) - req.toClient // until the answer reached the coordinator
	if isErrorMsg(msg) {
		lat = readRequestTimeout
	}
	f.coord.snitch.record(f.replica, lat)
	f.coord.afterPause(func() { req.c.sendMsg(req.version, req.stream, msg, payload) })
}

// failure returns the answer to a request that failed with own (an
// injected error or a full queue) on the node executing it: own when that
// node coordinated it; otherwise ReadTimeout, as a coordinator reports a
// replica that does not answer (its read_request_timeout is not waited).
func (req *request) failure(own message.Message) message.Message {
	if req.fwd == nil {
		return own
	}
	return &message.ReadTimeout{ErrorMessage: "Operation timed out - received only 0 responses (replica failed, sim)",
		Consistency: primitive.ConsistencyLevelOne, Received: 0, BlockFor: 1, DataPresent: false}
}
