package vsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tailroute/tailroute"
	"github.com/tailroute/tailroute/internal/core"
	"github.com/tailroute/tailroute/internal/paperbase"
	"github.com/tailroute/tailroute/internal/peers"
	"github.com/tailroute/tailroute/internal/selector"
	"gonum.org/v1/gonum/stat/distuv"
)

// strategy is one entry of Strategies: the engine with options, or a
// Selector.
type strategy struct {
	doc      string
	engine   func(Config) []tailroute.Option // nil: a Selector
	payload  bool                            // the engine gets the servers' piggybacked feedback (no real Cassandra sends it)
	rack     bool                            // the engine is told the client's rack (WithLocalRack)
	hedge    hedgeSource                     // the engine's queries are hedged (the product's hedger)
	hedgeOpt []tailroute.Option              // the hedger's options (nil: its defaults)
	selector func(selector.SelectorConfig) selector.Selector
}

// strategies are the clients' strategies by name.
var strategies = map[string]strategy{
	"tailroute": {doc: "the product as policy.New() gives it: C3 with server load polled from system_views.thread_pools",
		engine: func(Config) []tailroute.Option { return nil }},
	"tailroute-nopoll": {doc: "tailroute without a server signal (WithServerLoad(false))",
		engine: func(Config) []tailroute.Option { return []tailroute.Option{tailroute.WithServerLoad(false)} }},
	"tailroute+payload": {doc: "tailroute fed each answer's piggybacked queue and service time, the paper's feedback (no real Cassandra sends it)",
		engine: func(Config) []tailroute.Option { return nil }, payload: true},
	"tailroute-wn": {doc: "tailroute with the concurrency weight given as the number of clients (WithConcurrencyWeight) instead of measured",
		engine: func(c Config) []tailroute.Option {
			return []tailroute.Option{tailroute.WithConcurrencyWeight(float64(c.Clients))}
		}},
	"tailroute-wn-nopoll": {doc: "tailroute-wn without a server signal",
		engine: func(c Config) []tailroute.Option {
			return []tailroute.Option{tailroute.WithConcurrencyWeight(float64(c.Clients)), tailroute.WithServerLoad(false)}
		}},
	"tailroute+hedge": {doc: "tailroute with the product's hedging, following the policy (speculative.New(tailroute.WithSource(p)): p95 delay, 5 % budget, burst cap, load rule)",
		engine: func(Config) []tailroute.Option { return nil }, hedge: hedgePolicy},
	"token-aware+hedge": {doc: "token-aware with the product's hedging over its own latency recorder (speculative.New() over a driver's policy: p95 delay, 5 % budget; no burst cap nor load rule)",
		engine: tokenAware, hedge: hedgeRecorder},
	"token-aware": {doc: "round robin over the replicas (the engine's RoundRobin strategy, no signal): gocql's TokenAwareHostPolicy(RoundRobinHostPolicy())",
		engine: tokenAware},
	"tailroute-p2c": {doc: "tailroute's power of two choices strategy (WithStrategy(P2C))",
		engine: func(Config) []tailroute.Option { return []tailroute.Option{tailroute.WithStrategy(tailroute.P2C)} }},
	"tailroute-rack": {doc: "tailroute told the client's rack (WithLocalRack, the zone rule with its default bound; rack1 without zones)",
		engine: func(Config) []tailroute.Option { return nil }, rack: true},
	"rack-aware":        {doc: "gocql v1.7.0 TokenAwareHostPolicy(RackAwareRoundRobinPolicy(dc1, the client's rack)): the replicas in the client's rack first, in ring order", selector: sel(peers.NewRackAware)},
	"c3":                {doc: "the C3 paper's C3 exactly (absim): its score with n = clients, piggybacked feedback, CUBIC rate limiter and backlog", selector: paperbase.NewC3},
	"lor":               {doc: "least outstanding requests from this client (the paper's LOR)", selector: paperbase.NewLOR},
	"rr":                {doc: "round robin per replica group with C3's rate limiter and backlog (the paper's RR)", selector: paperbase.NewRRRateLimited},
	"oracle":            {doc: "the paper's ORA: least (1 + queued and in service) x current mean service time, read from the servers", selector: paperbase.NewORA},
	"latencyaware":      {doc: "LatencyAwarePolicy (DataStax C++ / Java 3.x / ScyllaDB Rust drivers) over the replicas shuffled", selector: sel(peers.NewLatencyAware)},
	"peakewma":          {doc: "Peak-EWMA with power of two choices (Finagle, Linkerd, tower)", selector: sel(peers.NewPeakEWMA)},
	"latency-inflight":  {doc: "autodeskcloud's LatencyAndInflightCountLoadBalancingPolicy (Java driver 4.x)", selector: sel(peers.NewLatencyInflight)},
	"latency-sensitive": {doc: "autodeskcloud's LatencySensitiveLoadBalancingPolicy (Java driver 4.x)", selector: sel(peers.NewLatencySensitive)},
	"datastax":          {doc: "the DataStax Java driver 4.x default policy (port): replicas shuffled, busy ones last, two choices by in flight", selector: sel(peers.NewDataStax)},
}

// tokenAware is the engine as gocql's TokenAwareHostPolicy(RoundRobinHostPolicy()).
func tokenAware(Config) []tailroute.Option {
	return []tailroute.Option{tailroute.WithStrategy(tailroute.RoundRobin), tailroute.WithServerLoad(false)}
}

// hedgeSource is what an engine strategy's hedger follows.
type hedgeSource int

const (
	hedgeNone     hedgeSource = iota // no hedging
	hedgePolicy                      // the engine (tailroute.WithSource(p))
	hedgeRecorder                    // the hedger's own latency recorder
)

// sel adapts a peer's constructor.
func sel[T selector.Selector](f func(selector.SelectorConfig) T) func(selector.SelectorConfig) selector.Selector {
	return func(c selector.SelectorConfig) selector.Selector { return f(c) }
}

// StrategyNames returns the strategies' names, sorted, comma-separated.
func StrategyNames() string {
	names := make([]string, 0, len(strategies))
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// StrategyDoc returns a strategy's one-line description ("" if unknown).
func StrategyDoc(name string) string { return strategies[name].doc }

// Result is one run's measurements.
type Result struct {
	Strategy string
	Config   Config
	Requests int           // requests measured (answered after Config.Warmup: successes and errors)
	Errors   int           // requests answered with an error
	Duration time.Duration // virtual time until the last answer
	Arrivals time.Duration // virtual time of the last request's arrival
	Polls    int64         // server-load polls sent (all clients)
	Retries  int64         // a Selector's backpressure deferrals
	Hedges   int64         // hedges sent (strategies with hedging)
	Served   []int64       // requests each server received
	// Sent is the requests sent to a server (attempts, measured or not;
	// not read repairs), OutOfZone those sent to a server out of their
	// client's rack (0 without zones).
	Sent, OutOfZone int64
	Windows         [][]uint32 // requests each server received per Config.Window
	PollWins        [][]uint32 // server-load polls each server received per Config.Window
	hist            *hdrhistogram.Histogram
}

func (r *Result) record(lat time.Duration) {
	r.Requests++
	_ = r.hist.RecordValue(max(1, lat.Microseconds()))
}

// Quantile returns the q-quantile (0..1) of the successful requests'
// latency, counted from each request's arrival at its client.
func (r *Result) Quantile(q float64) time.Duration {
	return time.Duration(r.hist.ValueAtQuantile(q*100)) * time.Microsecond
}

// Over returns the share of successful requests slower than d.
func (r *Result) Over(d time.Duration) float64 { return OverShare(r.hist, d) }

// OverShare returns the share of a latency histogram's values
// (microseconds) above d.
func OverShare(h *hdrhistogram.Histogram, d time.Duration) float64 {
	total := h.TotalCount()
	if total == 0 {
		return 0
	}
	var n int64
	lim := d.Microseconds()
	for _, b := range h.Distribution() {
		if b.From > lim {
			n += b.Count
		}
	}
	return float64(n) / float64(total)
}

// Histogram returns the latency histogram (microseconds).
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.hist }

// Share returns the share of all requests each server received.
func (r *Result) Share() []float64 {
	var total int64
	for _, n := range r.Served {
		total += n
	}
	out := make([]float64, len(r.Served))
	for i, n := range r.Served {
		if total > 0 {
			out[i] = float64(n) / float64(total)
		}
	}
	return out
}

// Dispersion returns each server's index of dispersion (variance over
// mean) of its requests per window, over the whole windows after the
// first second while requests arrive (NaN for a server that received
// nothing).
func (r *Result) Dispersion() []float64 {
	from := int(time.Second / r.Config.Window)
	to := int(r.Arrivals / r.Config.Window) // the window of the last arrival is partial
	out := make([]float64, len(r.Windows))
	for i, w := range r.Windows {
		w = w[:min(len(w), to)]
		if from >= len(w) {
			out[i] = math.NaN()
			continue
		}
		out[i] = dispersion(w[from:])
	}
	return out
}

// PollRates returns the server-load polls a server received per second:
// the mean over the servers and the whole windows from `from` while
// requests arrive, and the most one server received in one window.
func (r *Result) PollRates(from time.Duration) (mean, peak float64) {
	first, last := int(from/r.Config.Window), int(r.Arrivals/r.Config.Window)
	var n float64
	for _, w := range r.PollWins {
		for i, c := range w {
			if i >= first && i < last {
				n += float64(c)
			}
			peak = max(peak, float64(c))
		}
	}
	win := r.Config.Window.Seconds()
	if last > first {
		mean = n / float64(len(r.PollWins)) / (float64(last-first) * win)
	}
	return mean, peak / win
}

// Run runs cfg to its last answer and returns what it measured. The same
// Config gives the same Result.
func Run(cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m := &model{cfg: cfg, rate: cfg.ArrivalRate(),
		arrive: rand.New(rand.NewPCG(cfg.Seed, 1)),
		flips:  rand.New(rand.NewPCG(cfg.Seed, 2)),
		fail:   rand.New(rand.NewPCG(cfg.Seed, 3)),
		repair: rand.New(rand.NewPCG(cfg.Seed, 5)),
		res: &Result{Strategy: cfg.Strategy, Config: cfg,
			hist: hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)}}
	m.s = newSched(m.handle)
	if err := m.build(); err != nil {
		return nil, err
	}
	m.start()
	go m.s.run()
	<-m.s.done
	if m.s.procs != 0 {
		return nil, fmt.Errorf("vsim: %d processes still parked after the run (a scheduler bug)", m.s.procs)
	}
	m.res.Polls, m.res.Retries, m.res.Hedges = m.polls, m.retries, m.hedges
	m.res.Sent, m.res.OutOfZone = m.sent, m.outOfZone
	m.res.Served = make([]int64, len(m.servers))
	m.res.Windows = make([][]uint32, len(m.servers))
	m.res.PollWins = make([][]uint32, len(m.servers))
	for i := range m.servers {
		for _, n := range m.servers[i].counts {
			m.res.Served[i] += int64(n)
		}
		m.res.Windows[i] = m.servers[i].counts
		m.res.PollWins[i] = m.servers[i].polls
	}
	return m.res, nil
}

// OutOfZoneShare is the share of the requests sent out of their client's
// rack (0 without zones).
func (r *Result) OutOfZoneShare() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.OutOfZone) / float64(r.Sent)
}

// replication is the keyspace's replication: SimpleStrategy, or with zones
// NetworkTopologyStrategy dc1:RF.
func (m *model) replication() (string, map[string]any) {
	if m.cfg.Racks > 0 {
		return "NetworkTopologyStrategy", map[string]any{"dc1": strconv.Itoa(m.cfg.RF)}
	}
	return "SimpleStrategy", map[string]any{"replication_factor": strconv.Itoa(m.cfg.RF)}
}

// rackName is the name of rack k (1-based; rack1 without zones).
func rackName(k int32) string { return "rack" + strconv.Itoa(int(max(k, 1))) }

// placeZones sets each server's and client's rack (Config.Racks).
func (m *model) placeZones() {
	cfg := m.cfg
	if cfg.Racks == 0 {
		return
	}
	m.net = rand.New(rand.NewPCG(cfg.Seed, 6))
	m.srvRack = make([]int32, cfg.Servers)
	for i := range m.srvRack {
		m.srvRack[i] = int32(i%cfg.Racks + 1)
	}
	m.cliRack = make([]int32, cfg.Clients)
	for c := range m.cliRack {
		m.cliRack[c] = 1
		if n := len(cfg.ClientRacks); n > 0 {
			m.cliRack[c] = int32(cfg.ClientRacks[c%n])
		}
	}
}

// clientRack is client c's rack name (rack1 without zones).
func (m *model) clientRack(c int) string {
	if m.cliRack == nil {
		return rackName(1)
	}
	return rackName(m.cliRack[c])
}

// place is server s's data center and rack, as a driver reads them.
func (m *model) place(s int32) (dc, rack string) {
	if m.srvRack == nil {
		return "dc1", rackName(1)
	}
	return "dc1", rackName(m.srvRack[s])
}

// build makes the servers, the ring and the clients.
func (m *model) build() error {
	cfg := m.cfg
	m.servers = make([]server, cfg.Servers)
	tokRand := rand.New(rand.NewPCG(cfg.Seed, 4))
	perServer := 1
	if cfg.Placement == Ring {
		perServer = 16
	}
	nodes := make([]core.Node, cfg.Servers)
	m.hosts = make([]*vhost, cfg.Servers)
	m.placeZones()
	for i := range m.servers {
		m.servers[i] = server{phase: 1, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(1000+i)))}
		id := fmt.Sprintf("s%03d", i)
		dc, rack := m.place(int32(i))
		h := &vhost{id: id, addr: fmt.Sprintf("10.%d.%d.%d:9042", i>>16&255, i>>8&255, i&255), rack: rack, idx: int32(i)}
		nodes[i] = core.Node{ID: id, DC: dc, Rack: rack}
		for k := 0; k < perServer; k++ {
			t := int64(tokRand.Uint64())
			if cfg.Placement == Uniform { // evenly spaced, in server order
				t = math.MinInt64 + int64(uint64(i)*(math.MaxUint64/uint64(cfg.Servers)))
			}
			nodes[i].Tokens = append(nodes[i].Tokens, t)
			h.tokens = append(h.tokens, strconv.FormatInt(t, 10))
		}
		m.hosts[i] = h
	}
	rep, _, err := core.ParseReplication(m.replication())
	if err != nil {
		return err
	}
	m.rm = core.NewRing(nodes).Replicas(rep)
	m.threads, m.waiting = make([]int, cfg.Clients), make([][]*request, cfg.Clients)
	if cfg.SkewClients > 0 {
		m.skewN = max(1, int(math.Round(cfg.SkewClients*float64(cfg.Clients))))
	}
	st := strategies[cfg.Strategy]
	m.clients = make([]client, cfg.Clients)
	for i := range m.clients {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(1_000_000+i)))
		if st.engine != nil {
			opts := st.engine(cfg)
			if st.rack {
				opts = append(opts, tailroute.WithLocalRack(m.clientRack(i)))
			}
			c, err := newEngineClient(m, int32(i), rng, opts)
			if err != nil {
				return err
			}
			c.payload = st.payload
			if st.hedge != hedgeNone {
				if c.hedge, err = newHedging(c, st.hedge == hedgeRecorder, st.hedgeOpt); err != nil {
					return err
				}
			}
			m.clients[i] = c
			continue
		}
		m.clients[i] = &selectorClient{m: m, backlog: map[int32][]*request{},
			sel: st.selector(selector.SelectorConfig{Rand: rng, Clients: cfg.Clients, Env: m,
				LocalDC: "dc1", LocalRack: m.clientRack(i), Place: m.place})}
	}
	return nil
}

// start schedules the first arrival and the faults.
func (m *model) start() {
	cfg := m.cfg
	if n := cfg.Generators; n > 0 {
		m.genLeft = make([]int, n)
		for g := range m.genLeft {
			m.genLeft[g] = cfg.Requests / n
			if g < cfg.Requests%n {
				m.genLeft[g]++
			}
			m.s.at(0, event{kind: evArrival, i: int32(g)})
		}
		m.genGap = distuv.Poisson{Lambda: float64(n) / m.rate * 1e3, Src: rand.NewPCG(cfg.Seed, 7)}
	} else {
		m.s.at(0, event{kind: evArrival})
	}
	for i := range m.servers {
		s := int32(i)
		if cfg.FluctuationT > 0 {
			m.s.at(0, event{kind: evFlip, i: s})
		}
		if cfg.PauseEvery > 0 && cfg.PauseServers == nil {
			m.s.at(cfg.PauseEvery*time.Duration(i)/time.Duration(cfg.Servers)+cfg.PauseEvery/2, event{kind: evPause, i: s})
		}
	}
	for j, s := range cfg.PauseServers { // staggered over the listed servers
		if cfg.PauseEvery > 0 {
			m.s.at(cfg.PauseEvery*time.Duration(j)/time.Duration(len(cfg.PauseServers))+cfg.PauseEvery/2, event{kind: evPause, i: int32(s)})
		}
	}
	for _, d := range cfg.Down {
		m.s.at(d.At, event{kind: evDown, i: int32(d.Server)})
		if d.Up > 0 {
			m.s.at(d.Up, event{kind: evUp, i: int32(d.Server)})
		}
	}
}
