package vsim

import (
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/hedge"
	"github.com/tailroute/tailroute/internal/route"
	"github.com/tailroute/tailroute/internal/track"
)

// hedging is an engine client's hedger, driven as the adapters' wrapper
// (speculative.Wrap) and gocql's speculative executor drive it: Admit per
// execution; an armed one's first host from its Exec, a timer of the
// hedge's delay (Spec.Delay) that, while no answer has come, asks the Exec
// for the hedge's host and sends the same request there; the first answer,
// error or not, is the request's, and the other attempt is cancelled
// while its server still serves it: gocql v1.7.0 cancels the losing
// attempt's context, its observer sees context.Canceled (Cancelled) and
// its host is marked nil (query_executor.go: a cancelled attempt is no
// failure of the host).
type hedging struct {
	h   *hedge.Hedger
	pl  hedge.Planner[*vhost, vsel, route.Query]
	rec *hedge.Recorder // the hedger's own source (no WithSource): fed as gocql's QueryObserver feeds it
	up  hedge.UpHosts   // the servers up, as the adapters' wrapper counts them
}

// newHedging returns c's hedger: following the engine (own: false) or its
// own latency recorder (own: true, as speculative.New() over a driver's
// policy), with the options and the model's clock.
func newHedging(c *engineClient, own bool, opts []tailroute.Option) (*hedging, error) {
	all := []tailroute.Option{tailroute.WithClock(c.m.s)}
	if !own {
		all = append(all, tailroute.WithSource(c.r))
	}
	h, err := hedge.New(append(all, opts...)...)
	if err != nil {
		return nil, err
	}
	hg := &hedging{h: h, rec: h.Recorder()}
	for _, v := range c.m.hosts {
		hg.up.Set(v.addr, true)
	}
	hg.pl = hedge.Planner[*vhost, vsel, route.Query]{
		H:         h,
		Pick:      c.r.Pick,
		HostError: func(err error) bool { return err != nil }, // every model error is the host's: Overloaded, connection closed
	}
	return hg, nil
}

// hedgedSend is engineClient.send with hedging: false when the execution
// is not armed (the caller sends it as without hedging).
func (c *engineClient) hedgedSend(r *request, q route.Query) bool {
	d := c.hedge.h.Admit(true, true, c.hedge.up.N())
	if d != hedge.Armed && d != hedge.Deferred {
		return false
	}
	ex := c.hedge.pl.NewExec(q, d)
	s := ex.Next() // the plan's first host; Pick's backpressure may have slept
	if s == nil {
		r.server = -1
		c.m.answerNow(r, errNoHost)
		return true
	}
	r.sel, r.exec = s, ex
	c.m.dispatch(r, s.Info().idx)
	c.m.s.at(c.m.s.now+c.hedge.h.SpecFor(d).Delay(), event{kind: evHedge, r: r})
	return true
}

// fire is the hedge's timer: while r has no answer, the same request goes
// to the Exec's next host.
func (c *engineClient) fire(r *request) {
	if r.answered {
		return
	}
	s := r.exec.Next()
	if s == nil {
		return
	}
	h := &request{born: r.born, client: r.client, key: r.key, reps: r.reps, nreps: r.nreps, main: r, sel: s}
	r.twin = h
	c.m.hedges++
	c.m.outstanding++
	c.m.dispatch(h, s.Info().idx)
}

// cancelTwin cancels the other attempt of a's request, if one is in
// flight: observed as Cancelled after the time it has been out, and
// marked nil, as gocql marks a cancelled attempt.
func (c *engineClient) cancelTwin(a *request) {
	o := a.twin // a is the request: its hedge
	if a.main != nil {
		o = a.main // a is the hedge: the request's first attempt
	}
	if o == nil || o.sel == nil {
		return
	}
	s := o.sel.(vsel)
	o.sel = nil
	lat := c.m.s.now - o.sent
	c.r.Observe(s.Info(), lat, track.Cancelled)
	if c.hedge.rec != nil {
		c.hedge.rec.Record(lat) // a censored sample, as the Recorder's observer takes it
	}
	s.Mark(nil)
}
