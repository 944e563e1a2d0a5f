package track

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// serverLoad is the latest server-load sample of a host (polled from the
// server, e.g. Cassandra's system_views.thread_pools): q_s at the sample
// time, a smoothed 1/mu_s, the sample time and how long it stays fresh.
type serverLoad struct {
	queue atomic.Uint64 // q_s, float64 bits
	svc   ewma          // 1/mu_s, nanoseconds
	at    atomic.Int64  // clock time of the latest sample; 0 = none
	fresh atomic.Int64  // age up to which a sample's queue counts in full
	// svcFresh is the same for its 1/mu_s (ServerLoad's serviceFresh).
	svcFresh atomic.Int64
	seen     atomic.Uint64 // the host's observed attempts (Host.samples) at the sample
	// workers is W_s, the requests the server serves at once (polled
	// active_tasks_limit); 0 = unknown.
	workers atomic.Int64
}

// ServerLoad records a server-load sample taken at clock time at: the
// host's queue (q_s: requests waiting or in service that this client does
// not count in os_s) and its mean service time per request (1/mu_s; 0 or
// less: none, which drops the previous one). The queue counts in full up
// to the age fresh and the service time up to serviceFresh (at least
// fresh), then each fades (see ServerLoadWeight): a queue changes with the
// load, a service time with the server's condition, so the poller gives
// the queue a little more than the poll interval and the service time
// until the host's next poll. Payload feedback (Feedback), when present,
// takes precedence.
func (h *Host) ServerLoad(at time.Duration, queue float64, serviceTime, fresh, serviceFresh time.Duration) {
	if queue < 0 || math.IsNaN(queue) {
		queue = 0
	}
	if fresh <= 0 {
		fresh = time.Nanosecond
	}
	h.load.svcFresh.Store(int64(max(serviceFresh, fresh)))
	h.load.queue.Store(math.Float64bits(queue))
	if serviceTime > 0 {
		h.load.svc.add(float64(serviceTime), 1) // the estimator's window smooths it
	} else {
		h.load.svc.reset()
	}
	h.load.fresh.Store(int64(fresh))
	h.load.seen.Store(h.samples.Load())
	if at <= 0 {
		at = 1 // 0 means "no sample"
	}
	h.load.at.Store(int64(at))
	h.t.updateQueueing(h.t.clock.Now())
}

// ServerQueue returns the latest server-load sample's queue as sampled
// (q_s: the requests waiting or in service that this client does not count
// in os_s, i.e. the other clients'), whatever its age; 0 without one.
// Unlike View.QueueSize it is there for a host the client uses too; read
// it with View.ServerLoadWeight, the weight its queue still has.
func (h *Host) ServerQueue() float64 { return math.Float64frombits(h.load.queue.Load()) }

// ServerWorkers records W_s, the number of requests the server serves at
// once (Cassandra: active_tasks_limit of the read stage in
// system_views.thread_pools, concurrent_reads in cassandra.yaml). View
// reports it as View.Workers whatever the age of the load sample: it is
// the server's configuration, not its load. A value outside
// 1..MaxServerWorkers (0, negative, garbage) is ignored and keeps the
// previous one.
func (h *Host) ServerWorkers(n int64) {
	if n < 1 || n > tracker.MaxServerWorkers {
		return
	}
	h.load.workers.Store(n)
}

func (l *serverLoad) reset() {
	l.workers.Store(0)
	l.at.Store(0)
	l.svc.reset()
	l.queue.Store(0)
}

// ServerLoadWeight is the weight a server-load sample of age age keeps in
// the ranking when samples count in full up to fresh: 1 up to fresh, then
// exp(-(age-fresh)/fresh), and 0 from serverLoadLife*fresh on (the weight
// has fallen below 5 %: the sample is dropped).
//
// View blends a sample into the client's estimates in two parts, each
// with this weight w for its own freshness (Host.ServerLoad). The service
// time counts for every host: when svc_sample > R_s, 1/mu_s = R_s + w *
// (svc_sample - R_s) and R_s is raised to it (a response takes at least
// its service time), else 1/mu_s = R_s as without a sample (package
// tailroute, "Server load", says why). The queue counts only for a host
// the client does not measure itself (no attempt observed since the
// sample, none outstanding and no response within fresh): q_s = w *
// q_sample; on a host it uses, its own os_s is fresher. Below a weight of
// 0.01 a part is ignored.
func ServerLoadWeight(age, fresh time.Duration) float64 {
	if fresh <= 0 {
		return 0
	}
	if age <= fresh {
		return 1
	}
	if age >= serverLoadLife*fresh {
		return 0
	}
	return math.Exp(-float64(age-fresh) / float64(fresh))
}

// minServerLoadWeight: below it a sample is dropped.
const minServerLoadWeight = 0.01

// serverLoadLife is a sample's life in multiples of fresh: ServerLoadWeight
// is 0 from that age on (and at least exp(-3), above minServerLoadWeight,
// before it).
const serverLoadLife = 4

// floorResponseTime raises R_s to the server's 1/mu_s: a response takes at
// least its service time, so an R_s below it is out of date (forgotten
// toward the other hosts' mean while the host was idle, or measured before
// the host slowed down). Without the floor an idle slow host scores as a
// fast one (with qhat = 1, Psi_s = R_s whatever mu_s is).
func floorResponseTime(v *View) {
	if v.ServiceTime > v.ResponseTime {
		v.ResponseTime = v.ServiceTime
	}
}

// applyServerLoad blends the server-load sample into v (no payload
// feedback; see ServerLoadWeight) and reports whether any of it applied.
func (h *Host) applyServerLoad(v *View, now time.Duration) bool {
	age, fresh, w, ok := h.serverLoadCounts(now)
	if fresh == 0 {
		return false // no sample
	}
	ws, svcOK := h.serviceTimeCounts(age)
	if !ok && !svcOK {
		return false
	}
	v.ServerLoadAge, v.ServerLoadWeight = age, w
	if s, has := h.load.svc.get(); has && svcOK {
		v.ServerServiceTime = s
		if s > v.ServiceTime {
			// Only above R_s: a polled 1/mu_s below it would make the
			// host look faster than its latencies said (C3's R_s - 1/mu_s
			// + qhat^3/mu_s).
			v.ServiceTime += ws * (s - v.ServiceTime)
		}
	}
	if ok && (!h.t.off.On(RuleIdleQueue) || h.samples.Load() == h.load.seen.Load() && v.InFlight == 0 && v.SinceResponse >= fresh) {
		// The client does not measure the host itself: the polled queue
		// is the only one it has.
		v.QueueSize = w * math.Float64frombits(h.load.queue.Load())
	}
	return true
}

// serverLoadCounts returns the age at now of the host's server-load
// sample, the interval it was polled at (fresh; 0 without a sample) and
// its queue's weight (ServerLoadWeight), and whether the queue still
// counts: there is a sample and that weight is at least
// minServerLoadWeight.
func (h *Host) serverLoadCounts(now time.Duration) (age, fresh time.Duration, w float64, ok bool) {
	at := h.load.at.Load()
	if at == 0 {
		return 0, 0, 0, false
	}
	age = max(now-time.Duration(at), 0)
	fresh = time.Duration(h.load.fresh.Load())
	w = ServerLoadWeight(age, fresh)
	return age, fresh, w, w >= minServerLoadWeight
}

// serviceTimeCounts returns the weight of the host's sample's 1/mu_s at
// age age (ServerLoadWeight with its own freshness) and whether it still
// counts.
func (h *Host) serviceTimeCounts(age time.Duration) (float64, bool) {
	w := ServerLoadWeight(age, time.Duration(h.load.svcFresh.Load()))
	return w, w >= minServerLoadWeight
}

// QueueingLoad is RuleQueueing's bound: the hosts queue while the polled
// hosts hold on average more than QueueingLoad times their W_s requests
// (waiting or in service). The queues then come from the clients herding:
// many clients, each a small share of a host's load and each seeing it
// through signals older than its changes (at 150 clients over 50 servers a
// client polls a host about once a second), send to the replica that looked
// best, and Algorithm 2's decrease, holding each client to about one
// request per rate window on a host that has not returned more, spreads
// them. In cmd/vsim's Figure 14 cells at 70 % utilization the polled hosts
// hold 5.6-6.4 W_s on average, the paper's decrease lowers the requests a
// request finds at its server from 31 to 24 (T = 100 ms) and 63 to 35
// (T = 500 ms), and the rule takes 4-40 % off p99; at 45 % (1.2-1.6 W_s,
// at most 3) and in the 5-server cells (under one W_s) the decrease only
// sends 5-20 % of the requests to replicas worse at that moment
// (1.02-1.10x p99 at 45 %, 1.26-71x at 5 servers), and the rule leaves it
// off. The bound is the most the 45 % cells reach: above it the rule
// takes 6-19 % off p99 in ten cells of Figures 14 and 15 that 4 left
// (Figure 15's skewed demand most) and costs at most 1.03x; at 2.5 up to
// 1.06x (u70-T10-c300, u70-T500-c300), at 2 the 45 % cells 1.05-1.11x
// (docs/experiments/fig14-gap.md, sections 4 and 5).
const QueueingLoad = 3

// ManyClientsLoad is RuleQueueing's bound for a client that is one of
// many (w >= ManyClients, RuleManyClients): the hosts queue at all, more
// than W_s requests on average. Such a client is at most about 3 % of its
// hosts' load and sees each host through a few answers and a poll now and
// then; with demand skewed over the clients the herd's queues form only
// at the replicas it picks, and the mean over every host stays below
// QueueingLoad. Measured (cmd/vsim -preset fig15, 20 % of 150 clients
// making 80 % of the requests, w about 37 for those): p99 0.31-0.66x at
// T = 10, 100 and 500 ms (0.80-0.89x at 300 clients, 0.88-1.01x with 50 %
// of the clients making 80 %; at 45 % utilization with 20 % making 80 %
// 0.91-1.00x), for 1.01-1.06x at 45 % with even demand. Below one W_s the
// decrease only diverts: at 64 clients on 5 servers at 20 % utilization
// with two 5x slow servers (w about 64) the decrease there costs 1.14x p99
// (docs/experiments/fig14-gap.md, section 6).
const ManyClientsLoad = 1

// ManyClients is the concurrency weight from which a client is one of
// many (OneOfMany: RuleManyClients, RuleFastAnswer, the hedger's room). A
// client that is a larger share of its hosts' load keeps QueueingLoad
// (RuleManyClients): 20 clients on 10 servers with one 5x slow
// server (vsim's quick cell, w about 20) read 1.12x p99 and 1.59x p99.9
// with the decrease below the full rate from w >= 16, 1.01x from 24, and
// Figure 15's heaviest clients measure about 37.
const ManyClients = 32

// SetClients records w, the concurrency weight in force (C3's number of
// clients, as the router measures or is given it), for OneOfMany,
// and recomputes whether the hosts queue if that makes the client one of
// many or no longer.
func (t *Tracker) SetClients(w float64) {
	was := t.manyClients()
	t.clients.Store(math.Float64bits(w))
	if t.manyClients() != was {
		t.updateQueueing(t.clock.Now())
	}
}

// Clients returns the w SetClients gave last (0: none).
func (t *Tracker) Clients() float64 { return math.Float64frombits(t.clients.Load()) }

// OneOfMany reports whether the client is one of many: the w SetClients
// gave last is at least ManyClients.
func (t *Tracker) OneOfMany() bool { return t.Clients() >= ManyClients }

// fastAnswers reports whether RuleFastAnswer applies: the rule on and the
// client one of many.
func (t *Tracker) fastAnswers() bool {
	return t.off.On(RuleFastAnswer) && t.OneOfMany()
}

// manyClients reports whether RuleManyClients applies: the rule on and the
// client one of many.
func (t *Tracker) manyClients() bool {
	return t.off.On(RuleManyClients) && t.OneOfMany()
}

// updateQueueing recomputes, after a server-load sample at now or once a
// sample it counted stops counting, whether the hosts queue
// (RuleQueueing): the mean over the hosts with a polled W_s and a sample
// still counting (ServerLoadWeight) of their requests, the sampled queue
// q_s plus this client's os_s, over W_s, is above QueueingLoad
// (ManyClientsLoad for a client that is one of many). It walks
// every host once per poll or expiry, not per request.
func (t *Tracker) updateQueueing(now time.Duration) {
	if !t.off.On(RuleQueueing) || !t.off.On(RuleFullRate) {
		return
	}
	var sum float64
	n := 0
	var until time.Duration // the first time a sample counted here stops counting
	for _, h := range t.hosts.Load().list {
		w := h.load.workers.Load()
		age, fresh, _, counts := h.serverLoadCounts(now)
		if w < 1 || !counts {
			continue
		}
		sum += (h.ServerQueue() + float64(h.InFlight())) / float64(w)
		n++
		if end := now - age + serverLoadLife*fresh; until == 0 || end < until {
			until = end
		}
	}
	bound := float64(QueueingLoad)
	if t.manyClients() {
		bound = ManyClientsLoad
	}
	t.queueing.Store(n > 0 && sum > bound*float64(n))
	t.queueingUntil.Store(int64(until))
}

// hostsQueue returns RuleQueueing's flag at now. The flag is recomputed
// at each poll and, since a client's polls can stop (no budget left), also
// once a sample it counted has aged out, so that it never outlives the
// samples it was computed from.
func (t *Tracker) hostsQueue(now time.Duration) bool {
	if u := t.queueingUntil.Load(); u != 0 && int64(now) >= u {
		t.updateQueueing(now)
	}
	return t.queueing.Load()
}
