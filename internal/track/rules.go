package track

// Rule names one of the engine's rules that has no option of its own, so
// that an ablation can run the engine with that rule alone turned off
// (internal/vsim's "-<rule>" strategies, cmd/vsim -preset ablation). A
// Rule set is a bit mask; the zero value turns nothing off, and nothing
// outside the simulator sets one. Each rule is specified in package
// tailroute's doc, under the heading named here.
type Rule uint32

const (
	// RuleQueueWeight: w_eff = min(w, max(1, Qmax)) ("The concurrency
	// weight"); off: w.
	RuleQueueWeight Rule = 1 << iota
	// RuleDrainSilence: W_s and w_eff shrink with a host's silence ("W_s
	// workers"); off: they stand.
	RuleDrainSilence
	// RulePolledWorkers: W_s from a host's polled active_tasks_limit ("W_s
	// workers"); off: WithServerWorkers for every host.
	RulePolledWorkers
	// RuleKnownSlow: the known-slow rule ("Known-slow replicas").
	RuleKnownSlow
	// RuleWarmup: a host's first polls every minInterval ("Server load",
	// Warm-up).
	RuleWarmup
	// RuleIdleQueue: a polled q_s counts only for a host the client does
	// not measure ("Server load"); off: for every host.
	RuleIdleQueue
	// RuleFullRate: Algorithm 2's decrease only while the client sends at
	// its full rate ("Rate control"); off: the paper's decrease.
	RuleFullRate
	// RuleMeasuredWeight: w measured from the polls ("The concurrency
	// weight"); off: w = 1 (WithConcurrencyWeight(1)).
	RuleMeasuredWeight
	// RuleQueueing: Algorithm 2's decrease below the full rate too while
	// the polled hosts queue ("Rate control"); off: only at full rate.
	RuleQueueing
	// RuleManyClients: RuleQueueing's bound is ManyClientsLoad for a
	// client that is one of many (ManyClients, "Rate control"); off:
	// QueueingLoad for every client.
	RuleManyClients
	// RuleFastAnswer: an answer faster than R_s weighs FastAnswerWeight
	// for a client that is one of many ("Fast answers"); off: the
	// age-weighted alpha' for every answer.
	RuleFastAnswer

	// RuleCount is the number of rules above.
	RuleCount = iota
)

// RuleNames are the rules' names, by bit position, as the ablation prints
// them.
var RuleNames = [RuleCount]string{"queue-weight", "drain-silence", "polled-workers", "known-slow",
	"warmup", "idle-queue", "full-rate", "measured-weight", "queueing", "many-clients", "fast-answer"}

// On reports whether rule r is on (not in the set turned off).
func (off Rule) On(r Rule) bool { return off&r == 0 }
