// Snapshots the policies and hedgers of both adapters report: HostStats
// (one host as the policy sees it), Counters (cumulative policy events),
// ServerLoadCounters (server-load polling) and Hedging (a Hedger's
// counters). Code that consumes them (dashboards, policy/promstats,
// speculative/promstats) serves either driver.

package tailroute

import (
	"time"

	"github.com/tailroute/tailroute/tracker"
)

// HostStats is a snapshot of one host as the policy sees it: the tracker's
// measurements (tracker.HostSnapshot: os_s, R_s, q_s, 1/mu_s, rates,
// success rate, latency quantiles and totals) and the policy's verdicts at
// the time of the snapshot.
type HostStats struct {
	tracker.HostSnapshot
	Address string // connect address and port
	DC      string
	Rack    string
	Up      bool
	Local   bool // in the local data center (see the adapters' WithLocalDC)
	// InZone reports that the host is in the client's zone: the local data
	// center and the rack WithLocalRack names (false without it).
	InZone bool
	// OutOfZone counts the attempts sent to the host while it was out of
	// the client's zone (only with WithLocalRack), since it was added.
	OutOfZone uint64
	// Score is the host's C3 score (Psi_s plus the tail term k/mu_s, in
	// nanoseconds) at the time of the snapshot, whatever the strategy.
	Score float64 `unit:"ns"`
	// Busy is the DataStax busy-node condition at the time of the snapshot.
	Busy bool
	// WithinRate reports whether the host is within its sending rate now.
	WithinRate bool
	// Stalled reports that the host owes responses and has given none for
	// longer than the stall threshold (see the adapters' WithStall): the
	// rate limiter does not promote it.
	Stalled bool
	// RateInterval is the rate window (delta) Rate and ReceiveRate are
	// counted per (the tracker's RateConfig.Interval, default 20ms).
	RateInterval time.Duration
}

// Counters are cumulative policy events.
type Counters struct {
	BackpressureWaits uint64 // requests that waited because every eligible replica was over its rate
	SentOverRate      uint64 // requests sent to the best replica although over its rate (after the bounded wait)
	Probes            uint64 // requests sent first to a replica ranked last for its health (recovery probing)
	Demoted           uint64 // replicas ranked last for being materially less healthy than the best (WithHealthTolerance), summed over picks
	Abandoned         uint64 // hand-outs the driver skipped without Mark (ended without measurement)
	Unrouted          uint64 // picks without token information (ranked over a sample of local hosts)
	OutOfZone         uint64 // attempts sent to a host outside the client's zone (only with WithLocalRack)
}

// ServerLoadCounters are the counters of server-load polling
// (WithServerLoad, WithPollBudget); zero without polling.
type ServerLoadCounters struct {
	Requests uint64   // user requests planned while polling (what earns poll credit, WithPollBudget)
	Polls    uint64   // poll queries sent
	Failures uint64   // polls that failed or timed out
	Samples  uint64   // samples recorded
	Skipped  []string // hosts not polled (no system_views.thread_pools, not allowed), by host ID
	// PollsPerSecond is this client's polls per second per node polled, over
	// about the last 5 seconds (an exponentially weighted rate), and
	// Interval the poll interval I in force now (WithPollBudget).
	PollsPerSecond float64
	Interval       time.Duration
	// QueueMax is Qmax, the longest of the polled hosts' smoothed queues
	// (pending + active), and Weight the concurrency weight in force,
	// min(w, max(1, Qmax)) (package doc, "The concurrency weight").
	QueueMax float64
	Weight   float64
	// Clients is w as the polls measure it: the clients like this one
	// sharing the hosts (1 until measured); the default w.
	Clients float64
}

// Hedging is a snapshot of a Hedger's counters since it was created
// (speculative.Hedger.Stats and the v2 adapter's): what the load rule, the
// budget, the burst cap and the host count let through, and how the hedges
// that fired ended.
type Hedging struct {
	Executions    uint64        // query executions seen by the wrapped policy (Pick calls)
	Eligible      uint64        // of those, idempotent and not opted out with Disable
	Armed         uint64        // of those, allowed to hedge (a budget token was reserved)
	Hedges        uint64        // hedges that actually fired (extra attempts sent)
	Won           uint64        // fired hedges whose attempt was the execution's first success
	Lost          uint64        // fired hedges beaten by a success of an earlier attempt
	InFlight      int64         // hedges fired whose attempt has not ended yet
	BudgetDenied  uint64        // eligible executions not armed because the budget was spent
	BurstDenied   uint64        // eligible executions not armed by the burst cap (WithBurstCap)
	BurstLifted   uint64        // eligible executions over the burst cap, armed because a host was stalled
	TooFewHosts   uint64        // eligible executions not armed: fewer than 2 hosts up
	ManyClients   uint64        // eligible executions not armed by the load rule: the client is one of many (Room.OneOfMany)
	Queueing      uint64        // armed executions whose hedge the load rule deferred: every host has a known W_s and all its workers taken
	TargetSlow    uint64        // armed executions whose hedge the load rule deferred: the hedge's host is expected to take longer than the delay (TargetWait > Delay)
	Losing        uint64        // armed executions whose hedge the load rule deferred: hedges at the delay mostly lose
	NoTarget      uint64        // hedges that fired but found no host left (see package speculative)
	Unreserved    uint64        // hedges that fired after their reservation was released (see package speculative)
	Delay         time.Duration // current hedge delay
	DeferredDelay time.Duration // current delay of a hedge the load rule deferred
	Quantile      float64       // quantile the delay follows now (>= the configured one under budget pressure)
	// Load rule inputs now: the expected response time of the host a
	// hedge would go to (compared with Delay), and the median host's share
	// of its workers taken, the latest reading or its average over about
	// a second, whichever is higher (the loss record's gate: package
	// speculative, "Load rule").
	TargetWait time.Duration
	Busy       float64
	// Budget window: requests and hedges counted in the sliding window,
	// and reservations currently held.
	WindowRequests, WindowHedges uint64
	Reserved                     int64
}

// Suppression is a count of executions whose hedge was held back, for one
// reason.
type Suppression struct {
	Reason string // the Prometheus label value and report key (see Suppressed and Deferred)
	N      uint64
}

// Suppressed returns the eligible executions not armed, by reason
// (budget, burst, too_few_hosts, many_clients), in a fixed order (the one
// place the reasons are named).
func (s Hedging) Suppressed() [4]Suppression {
	return [4]Suppression{
		{"budget", s.BudgetDenied},
		{"burst", s.BurstDenied},
		{"too_few_hosts", s.TooFewHosts},
		{"many_clients", s.ManyClients},
	}
}

// Deferred returns the armed executions whose hedge the load rule deferred
// to DeferredDelay, by reason (queueing, target_slow, losing), in a fixed
// order (the one place the reasons are named).
func (s Hedging) Deferred() [3]Suppression {
	return [3]Suppression{
		{"queueing", s.Queueing},
		{"target_slow", s.TargetSlow},
		{"losing", s.Losing},
	}
}

// ExtraPct returns the hedges sent as a percentage of the executions: the
// extra requests hedging cost.
func (s Hedging) ExtraPct() float64 {
	if s.Executions == 0 {
		return 0
	}
	return 100 * float64(s.Hedges) / float64(s.Executions)
}
