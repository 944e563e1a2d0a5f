package vsim

import (
	"fmt"
	"time"
)

// Config is one simulated run: the cluster, the load, the faults and the
// strategy every client runs. The zero value of a field means its default.
type Config struct {
	Servers     int           // servers; default 50 (the C3 paper's §6)
	Clients     int           // clients, each with its own strategy instance; default 300
	Workers     int           // W, workers per server; default 4
	MeanService time.Duration // 1/mu, mean of the exponential service time; default 4ms
	Utilization float64       // offered load over the servers' capacity at mean service (0, 1.5]; default 0.7
	Requests    int           // requests generated; default 600000
	Network     time.Duration // one-way latency between a client and a server; default 250us
	RF          int           // replication factor; default 3
	Placement   Placement     // how replica groups are drawn; default Uniform
	Window      time.Duration // the per-node request counts' window; default 100ms
	// Generators is the arrival process. 0 (default): one Poisson process
	// at ArrivalRate, exponential gaps. N > 0: the C3 paper's simulator's
	// (absim's Workload, 200 in its runs): N generators, each starting at
	// 0 and waiting between its requests a whole number of milliseconds
	// drawn from a Poisson distribution of mean N/ArrivalRate, so the
	// requests arrive in batches on the millisecond; each makes
	// Requests/N of the requests (the first Requests mod N one more).
	Generators int `json:",omitempty"`
	// Threads bounds each client's requests in flight, as a YCSB client's
	// threads do: a request that arrives while all are busy waits at the
	// client, its latency counted from its arrival (YCSB's intended
	// start); 0 = no bound.
	Threads int

	// FluctuationT is the paper's bimodal fluctuation: every T each server
	// independently serves at rate mu (mean MeanService) or D x mu (mean
	// MeanService/D), probability 1/2 each, as the authors' simulator does;
	// 0 = off.
	FluctuationT time.Duration
	FluctuationD float64 // D; default 3

	// ReadRepair is the share of requests after which the client also
	// sends a shadow read to every other replica (the paper's simulator's
	// read repair, 0.1 in its runs): load on the servers, not measured.
	// The paper's strategies and the peers count them as their own
	// requests (they see their answers); the engine does not (a Cassandra
	// coordinator, not the client, repairs). Default 0.
	ReadRepair float64

	// Warmup: answers before it are not measured (the paper's analysis
	// leaves out the first 2 s); default 0.
	Warmup time.Duration

	// SkewClients is demand skew: this fraction of the clients (0, 1)
	// makes SkewDemand of the requests; 0 = every client alike.
	SkewClients float64
	SkewDemand  float64 // default 0.8

	Slow     []Slow     // servers that serve Factor times slower throughout (or from At to Until)
	Overload []Overload // servers that slow down when loaded past a queue length
	Failing  []Failing  // servers that fail a share of requests
	Down     []Down     // servers that go down
	// PauseEvery and PauseFor are stop-the-world pauses of every server
	// (or of PauseServers only), staggered evenly over PauseEvery; 0 = off.
	PauseEvery, PauseFor time.Duration
	PauseServers         []int `json:",omitempty"` // the servers that pause; nil = every server

	// Racks > 0 turns zones on (availability zones as racks of dc1):
	// server i is in rack (i mod Racks)+1 ("rack1".."rackK"), the replica
	// groups follow NetworkTopologyStrategy dc1:RF (with RF <= Racks, one
	// replica per rack), and every message between a client and a server
	// takes SameRack or OtherRack one way instead of Network, times
	// 1 + Jitter*u, u uniform in [-1, 1) drawn per message; 0 = no zones.
	Racks int `json:",omitempty"`
	// ClientRacks places client c in rack ClientRacks[c mod len] (1-based);
	// nil = every client in rack1.
	ClientRacks []int         `json:",omitempty"`
	SameRack    time.Duration `json:",omitempty"` // one way within a rack; default 50us (with Racks)
	OtherRack   time.Duration `json:",omitempty"` // one way between racks; default 500us (with Racks)
	Jitter      float64       `json:",omitempty"` // default 0.2 (with Racks); -1 = none

	Strategy string // a name of Strategies; default "tailroute"
	Seed     uint64 // every random draw of the run follows from it
}

// Placement is how replica groups are drawn (SimpleStrategy, Config.RF).
type Placement uint8

const (
	// Uniform: one token per server, evenly spaced in server order, so a
	// key's replica group is RF consecutive servers from a uniformly random
	// first one, as the paper's simulator draws it.
	Uniform Placement = iota
	// Ring: 16 random tokens per server (Cassandra 4.0's num_tokens), so
	// replica groups overlap as in a vnode ring.
	Ring
)

// Slow is a server that serves Factor times slower from At until Until (0:
// to the end).
type Slow struct {
	Server    int
	Factor    float64
	At, Until time.Duration
}

// Overload is a server whose service time is multiplied by Factor while
// more than Queue requests wait or are served on it: the second node of a
// cascade, which becomes slow when the load moved off a slow node lands on
// it.
type Overload struct {
	Server int
	Queue  int
	Factor float64
}

// Failing is a server that answers Rate of its requests with an error at
// once, without serving them (Cassandra's Overloaded), from At until Until
// (0: to the end).
type Failing struct {
	Server    int
	Rate      float64
	At, Until time.Duration
}

// Down is a server that goes down at At: its connections close (what it
// holds is lost), clients learn it at once and send it nothing until Up (0:
// never).
type Down struct {
	Server int
	At, Up time.Duration
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Servers, 50)
	def(&c.Clients, 300)
	def(&c.Workers, 4)
	def(&c.Requests, 600000)
	def(&c.RF, 3)
	if c.MeanService == 0 {
		c.MeanService = 4 * time.Millisecond
	}
	if c.Utilization == 0 {
		c.Utilization = 0.7
	}
	if c.Network == 0 {
		c.Network = 250 * time.Microsecond
	}
	if c.Window == 0 {
		c.Window = 100 * time.Millisecond
	}
	if c.FluctuationD == 0 {
		c.FluctuationD = 3
	}
	if c.SkewDemand == 0 {
		c.SkewDemand = 0.8
	}
	if c.Strategy == "" {
		c.Strategy = "tailroute"
	}
	if c.Racks > 0 {
		if c.SameRack == 0 {
			c.SameRack = 50 * time.Microsecond
		}
		if c.OtherRack == 0 {
			c.OtherRack = 500 * time.Microsecond
		}
		switch c.Jitter {
		case 0:
			c.Jitter = 0.2
		case -1:
			c.Jitter = 0
		}
	}
	return c
}

// Validate checks every field and names the first bad one, its value and
// the allowed range.
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(field string, v any, allowed string) error {
		return fmt.Errorf("vsim: Config.%s = %v, allowed %s", field, v, allowed)
	}
	badServer := func(field string, s int) error { return bad(field, s, fmt.Sprintf("0..%d", c.Servers-1)) }
	switch {
	case c.Servers < 1 || c.Servers > 10000:
		return bad("Servers", c.Servers, "1..10000")
	case c.Clients < 1 || c.Clients > 100000:
		return bad("Clients", c.Clients, "1..100000")
	case c.Workers < 1 || c.Workers > 1024:
		return bad("Workers", c.Workers, "1..1024")
	case c.MeanService < time.Microsecond || c.MeanService > time.Minute:
		return bad("MeanService", c.MeanService, "1us..1m")
	case !(c.Utilization > 0 && c.Utilization <= 1.5):
		return bad("Utilization", c.Utilization, "(0, 1.5]")
	case c.Threads < 0 || c.Threads > 1e6:
		return bad("Threads", c.Threads, "0..1e6 (0 = no bound)")
	case c.Requests < 1 || c.Requests > 1e9:
		return bad("Requests", c.Requests, "1..1e9")
	case c.Generators < 0 || c.Generators > c.Requests:
		return bad("Generators", c.Generators, fmt.Sprintf("0..Requests (%d) (0 = one Poisson process)", c.Requests))
	case c.Network < 0 || c.Network > time.Second:
		return bad("Network", c.Network, "0..1s")
	case c.RF < 1 || c.RF > min(c.Servers, maxRF):
		return bad("RF", c.RF, fmt.Sprintf("1..min(Servers, %d) (Servers = %d)", maxRF, c.Servers))
	case c.Placement > Ring:
		return bad("Placement", c.Placement, "Uniform (0) or Ring (1)")
	case !(c.ReadRepair >= 0 && c.ReadRepair <= 1):
		return bad("ReadRepair", c.ReadRepair, "[0, 1]")
	case c.Warmup < 0:
		return bad("Warmup", c.Warmup, ">= 0")
	case c.Window < time.Millisecond:
		return bad("Window", c.Window, ">= 1ms")
	case c.FluctuationT < 0:
		return bad("FluctuationT", c.FluctuationT, ">= 0 (0 = off)")
	case !(c.FluctuationD >= 1 && c.FluctuationD <= 1e3):
		return bad("FluctuationD", c.FluctuationD, "[1, 1000]")
	case !(c.SkewClients >= 0 && c.SkewClients < 1):
		return bad("SkewClients", c.SkewClients, "[0, 1)")
	case !(c.SkewDemand > 0 && c.SkewDemand < 1):
		return bad("SkewDemand", c.SkewDemand, "(0, 1)")
	case c.PauseEvery < 0 || c.PauseFor < 0 || c.PauseFor > 0 && c.PauseFor >= c.PauseEvery:
		return bad("PauseFor", c.PauseFor, fmt.Sprintf("0..PauseEvery (%v), with PauseEvery >= 0", c.PauseEvery))
	}
	if err := c.validateZones(bad); err != nil {
		return err
	}
	for i, s := range c.PauseServers {
		if s < 0 || s >= c.Servers {
			return badServer(fmt.Sprintf("PauseServers[%d]", i), s)
		}
	}
	if _, ok := strategies[c.Strategy]; !ok {
		return bad("Strategy", fmt.Sprintf("%q", c.Strategy), "one of "+StrategyNames())
	}
	for i, s := range c.Slow {
		switch {
		case s.Server < 0 || s.Server >= c.Servers:
			return badServer(fmt.Sprintf("Slow[%d].Server", i), s.Server)
		case !(s.Factor > 0 && s.Factor <= 1e4):
			return bad(fmt.Sprintf("Slow[%d].Factor", i), s.Factor, "(0, 1e4]")
		case s.At < 0 || s.Until != 0 && s.Until <= s.At:
			return bad(fmt.Sprintf("Slow[%d].Until", i), s.Until, "0 (never) or after At")
		}
	}
	for i, o := range c.Overload {
		switch {
		case o.Server < 0 || o.Server >= c.Servers:
			return badServer(fmt.Sprintf("Overload[%d].Server", i), o.Server)
		case o.Queue < 0:
			return bad(fmt.Sprintf("Overload[%d].Queue", i), o.Queue, ">= 0")
		case !(o.Factor >= 1 && o.Factor <= 1e4):
			return bad(fmt.Sprintf("Overload[%d].Factor", i), o.Factor, "[1, 1e4]")
		}
	}
	for i, f := range c.Failing {
		switch {
		case f.Server < 0 || f.Server >= c.Servers:
			return badServer(fmt.Sprintf("Failing[%d].Server", i), f.Server)
		case !(f.Rate >= 0 && f.Rate <= 1):
			return bad(fmt.Sprintf("Failing[%d].Rate", i), f.Rate, "[0, 1]")
		case f.At < 0 || f.Until != 0 && f.Until <= f.At:
			return bad(fmt.Sprintf("Failing[%d].Until", i), f.Until, fmt.Sprintf("0 (never) or after At (%v), with At >= 0", f.At))
		}
	}
	for i, d := range c.Down {
		switch {
		case d.Server < 0 || d.Server >= c.Servers:
			return badServer(fmt.Sprintf("Down[%d].Server", i), d.Server)
		case d.At < 0 || d.Up != 0 && d.Up <= d.At:
			return bad(fmt.Sprintf("Down[%d].Up", i), d.Up, "0 (never) or after At")
		}
	}
	return nil
}

// validateZones checks the zone fields (c with its defaults).
func (c Config) validateZones(bad func(field string, v any, allowed string) error) error {
	if c.Racks == 0 {
		if len(c.ClientRacks) > 0 || c.SameRack != 0 || c.OtherRack != 0 || c.Jitter != 0 {
			return bad("Racks", c.Racks, "1..64 with ClientRacks, SameRack, OtherRack or Jitter (0 = no zones)")
		}
		return nil
	}
	switch {
	case c.Racks < 0 || c.Racks > min(c.Servers, 64):
		return bad("Racks", c.Racks, fmt.Sprintf("0..min(Servers, 64) (Servers = %d)", c.Servers))
	case c.SameRack < 0 || c.SameRack > time.Second:
		return bad("SameRack", c.SameRack, "0..1s")
	case c.OtherRack < 0 || c.OtherRack > time.Second:
		return bad("OtherRack", c.OtherRack, "0..1s")
	case !(c.Jitter >= 0 && c.Jitter <= 1):
		return bad("Jitter", c.Jitter, "0..1 (0 = default 0.2, -1 = none)")
	}
	for i, r := range c.ClientRacks {
		if r < 1 || r > c.Racks {
			return bad(fmt.Sprintf("ClientRacks[%d]", i), r, fmt.Sprintf("1..Racks (%d)", c.Racks))
		}
	}
	return nil
}

// maxRF is the most replicas a request carries (request.reps).
const maxRF = 8

// ArrivalRate is the requests per second that load the servers to
// Utilization: U x Servers x W x the mean service rate, which with the
// bimodal fluctuation is (mu + D x mu)/2, as the paper's simulator
// computes it.
func (c Config) ArrivalRate() float64 {
	c = c.withDefaults()
	mu := 1 / c.MeanService.Seconds()
	if c.FluctuationT > 0 {
		mu *= (1 + c.FluctuationD) / 2
	}
	return c.Utilization * float64(c.Servers*c.Workers) * mu
}
