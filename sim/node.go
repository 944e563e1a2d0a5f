package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// NodeStats is a snapshot of a node's counters.
type NodeStats struct {
	Served   uint64 // data requests answered successfully
	Errors   uint64 // data requests answered with an error (injected or invalid)
	QueueLen int    // data requests waiting for a worker
	InFlight int    // data requests received and not yet answered (waiting + in service)
	Dropped  uint64 // client connections dropped because they did not read their responses (Config.WriteQueueBytes)
	// Forwarded counts reads this node coordinated without being a
	// replica; the replica that executed each counts it in its Served or
	// Errors (and Windows), this node does not.
	Forwarded uint64
	Windows   []uint64 // successful data requests served per 100 ms window since the cluster started
}

// Node is one simulated Cassandra node.
type Node struct {
	c     *Cluster
	m     *member
	store *store

	model atomic.Pointer[modelState]
	seed  uint64

	queue      chan *request
	workersMu  sync.Mutex
	spawned    int                           // worker goroutines started (ids 0..spawned-1)
	target     atomic.Int32                  // W: workers with id >= target stay idle
	changed    atomic.Pointer[chan struct{}] // closed and replaced when target changes
	pauseUntil atomic.Int64                  // unix nanos of the end of a one-off pause

	waiting   atomic.Int64
	inService atomic.Int64
	served    atomic.Uint64
	errors    atomic.Uint64
	slowDrops atomic.Uint64 // connections dropped for not reading
	windows   windowCounter
	snitch    snitch                   // replica latencies seen as coordinator (forward.go)
	forwards  atomic.Uint64            // reads forwarded to a replica
	stages    [numStages]stageCounters // system_views.thread_pools
	noVirtual atomic.Bool              // answer like Cassandra 3.x (SetVirtualTables)
	admRng    struct {
		sync.Mutex
		r rng
	}

	prepared sync.Map // string(id) -> *prepared

	mu      sync.Mutex // guards ln, conns, stopped, admin
	ln      net.Listener
	conns   map[*conn]struct{}
	stopped bool
	admin   *http.Server
	adminLn net.Listener
	connWG  sync.WaitGroup

	statusMu  sync.Mutex    // orders this node's STATUS_CHANGE announcements
	statusGen atomic.Uint64 // bumped by Stop and Restart; a pending DOWN of an older generation is dropped
}

const queueCap = 1 << 16

func newNode(c *Cluster, m *member, model ServiceModel, seed uint64) *Node {
	n := &Node{c: c, m: m, store: newStore(), seed: seed | 1,
		queue: make(chan *request, queueCap), conns: map[*conn]struct{}{}}
	m.node = n
	n.windows.start = c.start
	n.admRng.r.s = splitmix(seed) | 1
	n.model.Store(&modelState{ServiceModel: model, base: time.Now(), seed: splitmix(seed)})
	n.setWorkers(model.Workers)
	return n
}

// IP returns the node's address.
func (n *Node) IP() string { return n.m.ip }

// DC returns the node's datacenter ("dc1"..).
func (n *Node) DC() string { return n.m.dc }

// Rack returns the node's rack ("rack1"..).
func (n *Node) Rack() string { return n.m.rack }

// Tokens returns the node's Murmur3 tokens.
func (n *Node) Tokens() []int64 { return append([]int64(nil), n.m.tokens...) }

// HostID returns the node's host_id as a UUID string.
func (n *Node) HostID() string { return uuidString(n.m.hostID) }

// AdminAddr returns the host:port of the node's admin HTTP endpoint, or "".
func (n *Node) AdminAddr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.adminLn == nil {
		return ""
	}
	return n.adminLn.Addr().String()
}

// Model returns the service model in force.
func (n *Node) Model() ServiceModel { return n.model.Load().ServiceModel }

// SetModel validates m (zero fields take defaults) and installs it at once.
// Periodic pauses and fluctuation epochs restart their phase now, and the
// fluctuation epochs replay the same sequence of fast and slow phases,
// drawn from the node's seed (Config.Seed): two runs of one seed meet the
// same phases from their SetModel on, so policies compared run by run face
// the same capacity (common random numbers).
func (n *Node) SetModel(m ServiceModel) error {
	m = m.withDefaults()
	if err := m.Validate(); err != nil {
		return err
	}
	n.model.Store(&modelState{ServiceModel: m, base: time.Now(), seed: splitmix(n.seed)})
	n.setWorkers(m.Workers)
	return nil
}

// Pause starts one stop-the-world pause of d now: no data request starts or
// completes service and no system_views query (thread_pools) is answered
// until it ends; the system and schema tables drivers' control connections
// read are still answered.
func (n *Node) Pause(d time.Duration) {
	if d <= 0 {
		return
	}
	until := time.Now().Add(d).UnixNano()
	for {
		cur := n.pauseUntil.Load()
		if cur >= until || n.pauseUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// Stats returns a snapshot of the node's counters.
func (n *Node) Stats() NodeStats {
	w := n.waiting.Load()
	return NodeStats{Served: n.served.Load(), Errors: n.errors.Load(), QueueLen: int(w), Dropped: n.slowDrops.Load(),
		Forwarded: n.forwards.Load(),
		InFlight:  int(w + n.inService.Load()), Windows: n.windows.snapshot(time.Now())}
}

// Oracle returns the instantaneous truth for an Oracle baseline: the number
// of outstanding data requests (waiting + in service, q_s) and the current
// mean service time (1/mu_s, including slowdown and fluctuation; 0 with
// ZeroService).
func (n *Node) Oracle() (queueLen int, serviceTime time.Duration) {
	return int(n.waiting.Load() + n.inService.Load()), n.model.Load().meanService(time.Now())
}

// serve starts the accept loop on ln.
func (n *Node) serve(ln net.Listener) {
	n.mu.Lock()
	n.ln = ln
	n.stopped = false
	n.mu.Unlock()
	n.c.wg.Add(1)
	go func() {
		defer n.c.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			c := newConn(n, nc)
			n.mu.Lock()
			if n.stopped || n.ln != ln {
				n.mu.Unlock()
				nc.Close()
				continue
			}
			n.conns[c] = struct{}{}
			n.connWG.Add(1)
			n.mu.Unlock()
			c.start()
		}
	}()
}

func (n *Node) dropConn(c *conn) {
	n.mu.Lock()
	if _, ok := n.conns[c]; ok {
		delete(n.conns, c)
		n.connWG.Done()
	}
	n.mu.Unlock()
}

// Stop takes the node down: its listener is closed and every client
// connection dropped; Config.DownDelay later the other nodes announce
// STATUS_CHANGE DOWN (Stop does not wait for it). Data and model are kept;
// Restart brings it back.
func (n *Node) Stop() error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return errors.New("sim: node " + n.m.ip + " is already stopped")
	}
	n.stopped = true
	ln := n.ln
	n.ln = nil
	conns := make([]*conn, 0, len(n.conns))
	for c := range n.conns {
		conns = append(conns, c)
	}
	n.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	for _, c := range conns {
		c.close()
	}
	n.connWG.Wait()
	n.announceDown()
	return err
}

// announceDown sends STATUS_CHANGE DOWN to the other nodes' registered
// clients Config.DownDelay after the node's own connections were closed,
// unless the node was restarted meanwhile or the cluster closed.
func (n *Node) announceDown() {
	gen := n.statusGen.Add(1)
	select {
	case <-n.c.done:
		return
	default:
	}
	send := func() {
		n.statusMu.Lock()
		defer n.statusMu.Unlock()
		if n.statusGen.Load() == gen {
			n.c.broadcast(evStatus, n.statusEvent(primitive.StatusChangeTypeDown))
		}
	}
	d := n.c.limits.DownDelay
	if d <= 0 {
		send()
		return
	}
	n.c.wg.Add(1)
	go func() {
		defer n.c.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			send()
		case <-n.c.done:
		}
	}()
}

func (n *Node) statusEvent(t primitive.StatusChangeType) message.Message {
	return &message.StatusChangeEvent{ChangeType: t, Address: &primitive.Inet{Addr: ipv4(n.m.ip), Port: int32(n.c.port)}}
}

// Restart brings a stopped node back on its address and port.
func (n *Node) Restart() error {
	n.mu.Lock()
	if !n.stopped {
		n.mu.Unlock()
		return errors.New("sim: node " + n.m.ip + " is running")
	}
	n.mu.Unlock()
	select {
	case <-n.c.done:
		return errors.New("sim: cluster is closed")
	default:
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(n.listenIP(), fmt.Sprint(n.c.port)))
	if err != nil {
		return fmt.Errorf("sim: restart %s: %w", n.m.ip, err)
	}
	n.resetStageCounters()
	n.serve(ln)
	n.statusMu.Lock()
	n.statusGen.Add(1) // a DOWN still pending is not sent any more
	n.c.broadcast(evStatus, n.statusEvent(primitive.StatusChangeTypeUp))
	n.statusMu.Unlock()
	return nil
}

func (n *Node) listenIP() string {
	if n.m.listen != "" {
		return n.m.listen
	}
	return n.m.ip
}

// Running reports whether the node accepts connections.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.stopped
}

func (n *Node) shutdown() error {
	var err error
	n.mu.Lock()
	stopped := n.stopped
	n.mu.Unlock()
	if !stopped {
		err = n.Stop()
	}
	n.mu.Lock()
	admin := n.admin
	n.admin = nil
	n.mu.Unlock()
	if admin != nil {
		if cerr := admin.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}
