// Package ycsb is a Go implementation of the YCSB core workload: the
// property files that describe a workload (workloads A–F as YCSB ships
// them are embedded), YCSB's key and operation generators (Zipfian with
// constant 0.99, ScrambledZipfian with 64-bit FNV-1a hashing, SkewedLatest,
// Hotspot, uniform), hashed insert order with "user<hash>" keys, load and
// run phases driven by a number of threads at an optional target rate, and
// per-operation latency measurement in HDR histograms.
//
// With a target rate every operation has an intended start time on a fixed
// schedule; latency is then also measured from that intended time
// ("Intended-" lines, as YCSB does), so a stalled server cannot hide its
// queueing behind a stalled client (no coordinated omission).
//
// The package knows nothing about a particular database: a DB implements
// Read, Update, Insert and Scan. cmd/ycsb-lite provides the gocql one.
package ycsb
