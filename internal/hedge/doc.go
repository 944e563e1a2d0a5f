// Package hedge is the driver-free core of budgeted hedging (see the
// speculative package doc for the design): the Hedger (hedge delay from a
// latency source, budget-pressure controller, error holdoff, Stats), the
// sliding-window hedge Budget and burst cap, the load rule (LoadSource,
// the loss record), the latency Recorder, and the per-execution state of
// an armed execution (Exec, Slot), generic over a driver's host,
// SelectedHost and query types. It imports no Cassandra
// driver; speculative (gocql v1) and apache/speculative (v2) are thin
// adapters over it.
package hedge
