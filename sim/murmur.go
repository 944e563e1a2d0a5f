package sim

import "github.com/tailroute/tailroute/internal/murmur3"

// Murmur3Token returns the Murmur3Partitioner token of a serialized partition
// key: the h1 half of MurmurHash3_x64_128 (seed 0) with Cassandra's signed tail
// bytes, exactly as Cassandra and gocql compute it.
func Murmur3Token(data []byte) int64 { return murmur3.Token(data) }
