// Package hedge holds the driver-free parts of budgeted hedging: the
// sliding-window hedge budget (Budget) and the sliding-window latency
// histogram (Recorder). It imports no Cassandra driver; the driver
// adapters (speculative for gocql v1) build on it.
package hedge
