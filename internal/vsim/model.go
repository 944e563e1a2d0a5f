package vsim

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/hedge"
	"github.com/tailroute/tailroute/internal/route"
	"gonum.org/v1/gonum/stat/distuv"
)

// The model's event kinds (after the scheduler's).
const (
	evArrival   = evModel + iota // the next request is generated
	evAtServer                   // a request reaches its server
	evDone                       // a request's service ends (gen: the request's service generation)
	evAtClient                   // a response reaches its client
	evRetry                      // a Selector asked to be asked again
	evFlip                       // a server's bimodal phase is drawn anew
	evPause                      // a server's pause starts
	evResumeSrv                  // a server's pause ends
	evPollAt                     // a poll reaches its server
	evDown                       // a server goes down
	evUp                         // a server comes back
	evHedge                      // an armed request's hedge timer fires (engine clients with hedging)
)

// request is one request of the workload; its fields are the model's and
// the client strategy's.
type request struct {
	born     time.Duration // generated at the client (latency counts from here)
	sent     time.Duration // left the client
	client   int32
	server   int32
	key      [8]byte
	reps     [maxRF]int32 // the key's replicas (Selectors may reorder them)
	nreps    int
	svc      time.Duration // drawn service time
	doneAt   time.Duration // when the service ends (moves with pauses)
	gen      uint64        // service generation (a pause reschedules evDone)
	err      error         // the answer's error; nil: success
	queueOut int           // the server's queue when the answer left (Feedback)
	sel      any           // the engine's selection
	// hedging (engine clients): an armed request's Exec, its hedge (twin),
	// a hedge's request (main), and whether the request has its answer
	exec       *hedge.Exec[*vhost, vsel, route.Query]
	twin, main *request
	answered   bool
	poll       *pollCall
	shadow     bool // a read repair: served, not measured
}

// pollCall is a server-load poll in flight: the process waiting on it.
type pollCall struct {
	p      *proc
	client int32
	server int32
	active int
	queued int
	done   int64
	err    error
}

// server is one modelled server: a FIFO queue drained by W workers.
type server struct {
	busy      int
	queue     []*request // FIFO (head at qhead)
	qhead     int
	inSvc     []*request
	completed int64
	phase     float64 // bimodal: the service time's factor, 1 or 1/D
	paused    bool
	pauseAt   time.Duration
	waiting   []*pollCall // polls waiting out a pause
	down      bool
	rng       *rand.Rand
	counts    []uint32 // requests arrived per window
	polls     []uint32 // polls arrived per window
}

func (s *server) queued() int { return len(s.queue) - s.qhead }

// model is one run's world: servers, clients, the workload and the
// measurements.
type model struct {
	cfg     Config
	s       *sched
	servers []server
	clients []client
	rm      *core.ReplicaMap
	hosts   []*vhost
	arrive  *rand.Rand // arrivals: times, clients, keys
	flips   *rand.Rand
	fail    *rand.Rand
	repair  *rand.Rand
	rate    float64        // requests per second
	genLeft []int          // Config.Generators: each generator's requests still to make
	genGap  distuv.Poisson // Config.Generators: a generator's gap, in milliseconds

	generated, outstanding int
	threads                []int        // each client's busy threads (Config.Threads)
	waiting                [][]*request // each client's requests waiting for a thread
	closed                 bool
	skewN                  int // the skewed clients: the first skewN

	res     *Result
	polls   int64
	retries int64
	hedges  int64 // hedges sent (engine clients with hedging)

	// zones (Config.Racks): each server's and client's rack, 1-based (nil
	// without zones), the network's jitter, the requests sent and those
	// sent out of their client's rack
	srvRack, cliRack []int32
	net              *rand.Rand
	sent, outOfZone  int64
}

// delay is the one-way network latency of a message between client c and
// server s: Config.Network, or with zones the pair's SameRack or OtherRack
// with its jitter drawn.
func (m *model) delay(c, s int32) time.Duration {
	if m.srvRack == nil {
		return m.cfg.Network
	}
	base := m.cfg.OtherRack
	if m.cliRack[c] == m.srvRack[s] {
		base = m.cfg.SameRack
	}
	if base <= 0 || m.cfg.Jitter == 0 {
		return base
	}
	return time.Duration(float64(base) * (1 + m.cfg.Jitter*(2*m.net.Float64()-1)))
}

// errFailed is the answer of a failing server; errLost of one that went
// down with the request.
type simError string

func (e simError) Error() string { return string(e) }

const (
	errFailed simError = "vsim: overloaded"
	errLost   simError = "vsim: connection closed"
)

// Env of the Selectors (the Oracle reads it).
func (m *model) Oracle(s int32) (int, time.Duration) {
	sv := &m.servers[s]
	return sv.busy + sv.queued(), time.Duration(float64(m.cfg.MeanService) * m.factor(s, m.s.now, sv.busy+sv.queued()))
}

func (m *model) Servers() int { return len(m.servers) }

// factor is server s's service-time multiplier at now for a request that
// finds load queued or in service.
func (m *model) factor(s int32, now time.Duration, load int) float64 {
	f := m.servers[s].phase
	for _, sl := range m.cfg.Slow {
		if int32(sl.Server) == s && now >= sl.At && (sl.Until == 0 || now < sl.Until) {
			f *= sl.Factor
		}
	}
	for _, o := range m.cfg.Overload {
		if int32(o.Server) == s && load > o.Queue {
			f *= o.Factor
		}
	}
	return f
}

func (m *model) handle(ev *event) {
	switch ev.kind {
	case evArrival:
		m.arrival(ev.i)
	case evAtServer:
		m.atServer(ev.r)
	case evDone:
		if ev.gen == ev.r.gen {
			m.done(ev.r)
		}
	case evAtClient:
		m.atClient(ev.r)
	case evRetry:
		m.clients[ev.r.client].send(ev.r)
	case evFlip:
		m.flip(ev.i)
	case evPause:
		m.pause(ev.i)
	case evResumeSrv:
		m.resume(ev.i)
	case evPollAt:
		m.pollAt(ev.r.poll)
	case evDown:
		m.setDown(ev.i, true)
	case evUp:
		m.setDown(ev.i, false)
	case evHedge:
		m.clients[ev.r.client].(*engineClient).fire(ev.r)
	}
}

// arrival generates one request and schedules the next (of generator g
// with Config.Generators).
func (m *model) arrival(g int32) {
	if m.closed {
		return
	}
	now := m.s.now
	r := &request{born: now}
	n := len(m.clients)
	switch {
	case m.skewN > 0 && m.arrive.Float64() < m.cfg.SkewDemand:
		r.client = int32(m.arrive.IntN(m.skewN))
	case m.skewN > 0:
		r.client = int32(m.skewN + m.arrive.IntN(n-m.skewN))
	default:
		r.client = int32(m.arrive.IntN(n))
	}
	binary.BigEndian.PutUint64(r.key[:], m.arrive.Uint64())
	for _, h := range m.rm.Lookup(core.Murmur3Token(r.key[:])) {
		if !m.servers[h].down && r.nreps < len(r.reps) {
			r.reps[r.nreps] = h
			r.nreps++
		}
	}
	m.generated++
	m.outstanding++
	m.res.Arrivals = now
	if m.cfg.Threads > 0 {
		if m.threads[r.client] == m.cfg.Threads {
			m.waiting[r.client] = append(m.waiting[r.client], r) // until a thread is free
		} else {
			m.threads[r.client]++
			m.clients[r.client].send(r)
		}
	} else {
		m.clients[r.client].send(r)
	}
	switch {
	case m.genLeft != nil:
		if m.genLeft[g]--; m.genLeft[g] > 0 {
			m.s.at(now+time.Duration(m.genGap.Rand())*time.Millisecond, event{kind: evArrival, i: g})
		}
	case m.generated < m.cfg.Requests:
		m.s.at(now+expDuration(m.arrive, 1/m.rate), event{kind: evArrival})
	}
}

// expDuration draws an exponential duration of mean seconds.
func expDuration(rng *rand.Rand, mean float64) time.Duration {
	return time.Duration(rng.ExpFloat64() * mean * float64(time.Second))
}

// dispatch sends r from its client to server s now, and with
// probability Config.ReadRepair a shadow read to each other replica.
func (m *model) dispatch(r *request, s int32) {
	r.server, r.sent = s, m.s.now
	m.sent++
	if m.srvRack != nil && m.cliRack[r.client] != m.srvRack[s] {
		m.outOfZone++
	}
	m.s.at(m.s.now+m.delay(r.client, s), event{kind: evAtServer, r: r})
	if m.cfg.ReadRepair == 0 || m.repair.Float64() >= m.cfg.ReadRepair {
		return
	}
	sc, _ := m.clients[r.client].(*selectorClient)
	for _, o := range r.reps[:r.nreps] {
		if o == s {
			continue
		}
		sh := &request{born: m.s.now, sent: m.s.now, client: r.client, server: o, shadow: true}
		m.outstanding++
		if sc != nil {
			sc.repaired(o)
		}
		m.s.at(m.s.now+m.delay(r.client, o), event{kind: evAtServer, r: sh})
	}
}

func (m *model) atServer(r *request) {
	sv := &m.servers[r.server]
	now := m.s.now
	sv.counts = countIn(sv.counts, int(now/m.cfg.Window))
	if sv.down {
		m.answer(r, errLost)
		return
	}
	for _, f := range m.cfg.Failing {
		if int32(f.Server) == r.server && now >= f.At && (f.Until == 0 || now < f.Until) && m.fail.Float64() < f.Rate {
			m.answer(r, errFailed)
			return
		}
	}
	sv.queue = append(sv.queue, r)
	m.serve(r.server)
}

// serve starts service on free workers while requests wait.
func (m *model) serve(s int32) {
	sv := &m.servers[s]
	for !sv.paused && !sv.down && sv.busy < m.cfg.Workers && sv.queued() > 0 {
		r := sv.queue[sv.qhead]
		sv.queue[sv.qhead] = nil
		sv.qhead++
		if sv.qhead > 1024 && sv.qhead*2 > len(sv.queue) {
			sv.queue = append(sv.queue[:0], sv.queue[sv.qhead:]...)
			sv.qhead = 0
		}
		sv.busy++
		now := m.s.now
		r.svc = time.Duration(sv.rng.ExpFloat64() * float64(m.cfg.MeanService) * m.factor(s, now, sv.busy+sv.queued()))
		r.doneAt = now + r.svc
		r.gen++
		sv.inSvc = append(sv.inSvc, r)
		m.s.at(r.doneAt, event{kind: evDone, r: r, gen: r.gen})
	}
}

func (m *model) done(r *request) {
	sv := &m.servers[r.server]
	for i, x := range sv.inSvc {
		if x == r {
			last := len(sv.inSvc) - 1
			sv.inSvc[i] = sv.inSvc[last]
			sv.inSvc[last] = nil
			sv.inSvc = sv.inSvc[:last]
			break
		}
	}
	sv.busy--
	sv.completed++
	m.serve(r.server)
	r.queueOut = sv.busy + sv.queued()
	m.answer(r, nil)
}

// answer sends r's response (err: its error) back to its client.
func (m *model) answer(r *request, err error) {
	r.err = err
	m.s.at(m.s.now+m.delay(r.client, r.server), event{kind: evAtClient, r: r})
}

func (m *model) atClient(r *request) {
	m.outstanding--
	if r.shadow {
		if sc, ok := m.clients[r.client].(*selectorClient); ok {
			sc.answer(r)
		}
		m.maybeClose()
		return
	}
	if r = m.clients[r.client].answer(r); r == nil {
		m.maybeClose() // a losing hedge's answer
		return
	}
	if m.cfg.Threads > 0 { // the thread takes the client's next waiting request
		if q := m.waiting[r.client]; len(q) > 0 {
			next := q[0]
			q[0] = nil
			m.waiting[r.client] = q[1:]
			m.clients[r.client].send(next)
		} else {
			m.threads[r.client]--
		}
	}
	lat := m.s.now - r.born
	switch {
	case m.s.now < m.cfg.Warmup:
	case r.err != nil:
		m.res.Requests++
		m.res.Errors++
	default:
		m.res.record(lat)
	}
	m.maybeClose()
}

// maybeClose ends the run at its last answer: the engine's processes
// drain, recurring events stop.
func (m *model) maybeClose() {
	if m.generated >= m.cfg.Requests && m.outstanding == 0 {
		m.closed = true
		m.res.Duration = m.s.now
	}
}

func (m *model) flip(s int32) {
	if m.closed {
		return
	}
	sv := &m.servers[s]
	sv.phase = 1
	if m.flips.Float64() < 0.5 {
		sv.phase = 1 / m.cfg.FluctuationD
	}
	m.s.at(m.s.now+m.cfg.FluctuationT, event{kind: evFlip, i: s})
}

// pause stops server s's world: services in progress end PauseFor later,
// nothing starts, polls wait.
func (m *model) pause(s int32) {
	if m.closed {
		return
	}
	sv := &m.servers[s]
	sv.paused, sv.pauseAt = true, m.s.now
	for _, r := range sv.inSvc {
		r.doneAt += m.cfg.PauseFor
		r.gen++
		m.s.at(r.doneAt, event{kind: evDone, r: r, gen: r.gen})
	}
	m.s.at(m.s.now+m.cfg.PauseFor, event{kind: evResumeSrv, i: s})
	m.s.at(m.s.now+m.cfg.PauseEvery, event{kind: evPause, i: s})
}

func (m *model) resume(s int32) {
	sv := &m.servers[s]
	sv.paused = false
	for _, pc := range sv.waiting {
		m.pollReply(pc)
	}
	sv.waiting = sv.waiting[:0]
	m.serve(s)
}

// setDown takes server s down (its requests are lost, every client is
// told) or back up.
func (m *model) setDown(s int32, down bool) {
	sv := &m.servers[s]
	sv.down = down
	if down {
		lost := append(sv.inSvc[:len(sv.inSvc):len(sv.inSvc)], sv.queue[sv.qhead:]...)
		sv.inSvc, sv.queue, sv.qhead, sv.busy = sv.inSvc[:0], sv.queue[:0], 0, 0
		for _, r := range lost {
			r.gen++
			m.answer(r, errLost)
		}
		for _, pc := range sv.waiting {
			pc.err = errLost
			m.pollReply(pc)
		}
		sv.waiting = sv.waiting[:0]
	}
	for _, c := range m.clients {
		c.hostState(s, !down)
	}
	if !down {
		m.serve(s)
	}
}

// poll is a server-load poll of server s by client c, run by the poller's
// process: the reading is taken when the poll reaches the server (after a
// pause, if it arrives during one) and comes back a network hop later.
func (m *model) poll(c, s int32) (active, queued int, completed int64, err error) {
	m.polls++
	pc := &pollCall{p: m.s.cur, client: c, server: s}
	if m.closed {
		return 0, 0, 0, errLost
	}
	m.s.at(m.s.now+m.delay(c, s), event{kind: evPollAt, r: &request{poll: pc}})
	m.s.park()
	return pc.active, pc.queued, pc.done, pc.err
}

func (m *model) pollAt(pc *pollCall) {
	sv := &m.servers[pc.server]
	sv.polls = countIn(sv.polls, int(m.s.now/m.cfg.Window))
	switch {
	case sv.down:
		pc.err = errLost
	case sv.paused && !m.closed:
		sv.waiting = append(sv.waiting, pc)
		return
	}
	m.pollReply(pc)
}

func (m *model) pollReply(pc *pollCall) {
	sv := &m.servers[pc.server]
	pc.active, pc.queued, pc.done = sv.busy, sv.queued(), sv.completed
	m.s.at(m.s.now+m.delay(pc.client, pc.server), event{kind: evWake, p: pc.p})
}

// countIn counts one in window w of counts, growing it as needed.
func countIn(counts []uint32, w int) []uint32 {
	if w >= len(counts) {
		counts = append(counts, make([]uint32, w+1-len(counts))...)
	}
	counts[w]++
	return counts
}

// dispersion returns the index of dispersion (variance over mean) of
// counts, or NaN when the mean is 0.
func dispersion(counts []uint32) float64 {
	if len(counts) == 0 {
		return math.NaN()
	}
	var sum, sq float64
	for _, c := range counts {
		sum += float64(c)
		sq += float64(c) * float64(c)
	}
	n := float64(len(counts))
	mean := sum / n
	if mean == 0 {
		return math.NaN()
	}
	return (sq/n - mean*mean) / mean
}
