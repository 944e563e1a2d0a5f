package core

import "github.com/tailroute/tailroute/internal/murmur3"

// Murmur3Token returns the Murmur3Partitioner token of a partition key; see
// internal/murmur3.
func Murmur3Token(data []byte) int64 { return murmur3.Token(data) }
