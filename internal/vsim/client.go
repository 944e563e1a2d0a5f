package vsim

import (
	"context"
	"math/rand/v2"

	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/selector"
	"github.com/tailroute/tailroute/internal/track"
)

// client is one application instance's request path.
type client interface {
	// send chooses r's server and dispatches r (or defers it).
	send(r *request)
	// answer takes the response of attempt r and returns the request it
	// answers, nil when that request has its answer already (a losing
	// hedge's).
	answer(r *request) *request
	// hostState tells the client that server s went down or came up.
	hostState(s int32, up bool)
}

// keyspace is the one keyspace of the model (SimpleStrategy, Config.RF).
const keyspace = "ks"

// vhost is a modelled server as the engine sees a driver's host.
type vhost struct {
	id, addr string
	rack     string // "rack1" without zones
	tokens   []string
	idx      int32
}

func (h *vhost) HostID() string                { return h.id }
func (h *vhost) ConnectAddressAndPort() string { return h.addr }
func (h *vhost) DataCenter() string            { return "dc1" }
func (h *vhost) Rack() string                  { return h.rack }
func (h *vhost) Tokens() []string              { return h.tokens }
func (h *vhost) IsUp() bool                    { return true } // the clients are told with HostDown/HostUp

// vsel is the engine's selected host (a driver's SelectedHost).
type vsel interface {
	Info() *vhost
	Mark(error)
}

// engineClient runs the product's engine (internal/route) as a driver's
// adapter does: a plan per request, its first host, the attempt measured
// by the observer (Observe) and marked; server load polled through the
// model when the options poll.
type engineClient struct {
	m       *model
	idx     int32
	r       *route.Router[*vhost, vsel]
	payload bool     // Router.Feedback with each answer's Feedback
	hedge   *hedging // nil: no hedging
}

func newEngineClient(m *model, idx int32, rng *rand.Rand, opts []tailroute.Option) (*engineClient, error) {
	all := append([]tailroute.Option{
		tailroute.WithClock(m.s),
		route.WithRand(rng.Uint64),
		route.WithSpawn(m.s.spawn),
		route.WithKeyspaceFunc(func(string) (string, map[string]any, error) {
			class, opts := m.replication()
			return class, opts, nil
		}),
	}, opts...)
	r, err := route.New[*vhost, vsel](route.Hooks{Classify: classify}, all...)
	if err != nil {
		return nil, err
	}
	r.SetObserved()
	r.SetPartitioner("org.apache.cassandra.dht.Murmur3Partitioner")
	r.AddHosts(m.hosts)
	c := &engineClient{m: m, idx: idx, r: r}
	r.StartServerLoad(route.PollDriver[*vhost]{
		Closed: func() bool { return m.closed },
		Query:  c.poll,
	})
	return c, nil
}

// classify is the adapters' error classification for the model's errors.
func classify(err error) track.Outcome {
	switch err {
	case nil:
		return track.Success
	case errLost:
		return track.Lost
	}
	return track.Failure
}

func (c *engineClient) send(r *request) {
	q := route.Query{Key: r.key[:], Keyspace: keyspace}
	if c.hedge != nil {
		q.Idempotent = true // a hedged workload marks its queries idempotent
		if c.hedgedSend(r, q) {
			return
		}
	}
	next := c.r.Pick(q)
	s := next() // Pick's backpressure may have slept: the clock is the send time
	if s == nil {
		r.server = -1
		c.m.answerNow(r, errNoHost)
		return
	}
	r.sel = s
	c.m.dispatch(r, s.Info().idx)
}

func (c *engineClient) answer(r *request) *request {
	if r.server < 0 {
		return r
	}
	req := r
	if r.main != nil {
		req = r.main // r is a hedge
	}
	if req.answered {
		return nil // the losing attempt, cancelled at the winner's answer
	}
	req.answered, req.err = true, r.err
	s := r.sel.(vsel)
	r.sel = nil
	if c.payload && r.err == nil {
		c.r.Feedback(s.Info(), float64(r.queueOut), r.svc)
	}
	lat := c.m.s.now - r.sent
	c.r.Observe(s.Info(), lat, classify(r.err))
	if c.hedge != nil {
		if c.hedge.rec != nil && r.err == nil {
			c.hedge.rec.Record(lat)
		}
		c.cancelTwin(r)
	}
	s.Mark(r.err)
	return req
}

func (c *engineClient) hostState(s int32, up bool) {
	if up {
		c.r.HostUp(c.m.hosts[s])
	} else {
		c.r.HostDown(c.m.hosts[s])
	}
	if c.hedge != nil {
		c.hedge.up.Set(c.m.hosts[s].addr, up)
	}
}

// poll is the engine's server-load query, answered by the model as the
// real simulator answers system_views.thread_pools (one ReadStage row).
func (c *engineClient) poll(_ context.Context, h *vhost, _ string) (route.ThreadPoolSample, error) {
	active, queued, completed, err := c.m.poll(c.idx, h.idx)
	var smp route.ThreadPoolSample
	if err == nil {
		smp.AddStage("ReadStage", active, c.m.cfg.Workers, queued, completed)
	}
	return smp, err
}

// selectorClient runs a Selector: the paper's strategies and the peers.
// A request its Selector defers (backpressure) waits in a FIFO backlog of
// its replica group (keyed by the group's first replica), as in the
// paper's simulator: only the head is asked again, and after it is sent
// the next head is asked at once.
type selectorClient struct {
	m       *model
	sel     selector.Selector
	backlog map[int32][]*request
}

func (c *selectorClient) send(r *request) {
	if r.nreps == 0 {
		r.server = -1
		c.m.answerNow(r, errNoHost)
		return
	}
	g := r.reps[0]
	q := c.backlog[g]
	if len(q) > 0 && q[0] != r {
		c.backlog[g] = append(q, r) // behind the group's head
		return
	}
	for {
		now := c.m.s.now
		s, wait := c.sel.Choose(now, r.reps[:r.nreps])
		if wait > 0 {
			if len(q) == 0 {
				c.backlog[g] = append(q, r)
			}
			c.m.retries++
			c.m.s.at(now+wait, event{kind: evRetry, r: r})
			return
		}
		c.sel.Sent(now, s)
		c.m.dispatch(r, s)
		if len(q) == 0 {
			return
		}
		q[0] = nil
		q = q[1:]
		if len(q) == 0 {
			delete(c.backlog, g)
			return
		}
		c.backlog[g] = q
		r = q[0]
	}
}

func (c *selectorClient) answer(r *request) *request {
	if r.server < 0 {
		return r
	}
	fb := selector.Feedback{Queue: r.queueOut, ServiceTime: r.svc, Failed: r.err != nil}
	if r.err != nil {
		fb.Queue, fb.ServiceTime = 0, 0
	}
	c.sel.Done(c.m.s.now, r.server, c.m.s.now-r.sent, fb)
	return r
}

func (c *selectorClient) hostState(int32, bool) {} // down servers leave the replica lists

// repaired tells the Selector of a read repair (a shadow read) sent to s.
func (c *selectorClient) repaired(s int32) { c.sel.Sent(c.m.s.now, s) }

// errNoHost: no replica is up.
const errNoHost simError = "vsim: no host"

// answerNow answers r at once at its client (no server took it).
func (m *model) answerNow(r *request, err error) {
	r.err = err
	m.s.at(m.s.now, event{kind: evAtClient, r: r})
}
