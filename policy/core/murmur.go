package core

import "github.com/tailroute/tailroute/internal/murmur3"

// Murmur3Token returns the Murmur3Partitioner token of a partition key: the
// h1 half of the 128-bit x64 MurmurHash3 as Cassandra computes it (tail bytes
// are sign-extended, like Java bytes). It matches gocql's internal
// murmur.Murmur3H1, which is not importable; third-party murmur3 packages
// implement the standard (unsigned) variant and disagree on keys with bytes
// >= 0x80 in the tail.
func Murmur3Token(data []byte) int64 { return murmur3.Token(data) }
