package sim

import "encoding/binary"

// Murmur3Token returns the Murmur3Partitioner token of a serialized partition
// key: the h1 half of MurmurHash3_x64_128 (seed 0) with Cassandra's signed tail
// bytes, exactly as Cassandra and gocql compute it.
func Murmur3Token(data []byte) int64 {
	const (
		c1 int64 = -8663945395140668459 // 0x87c37b91114253d5
		c2 int64 = 5545529020109919103  // 0x4cf5ad432745937f
	)
	length := len(data)
	var h1, h2, k1, k2 int64
	nBlocks := length / 16
	for i := 0; i < nBlocks; i++ {
		k1 = int64(binary.LittleEndian.Uint64(data[i*16:]))
		k2 = int64(binary.LittleEndian.Uint64(data[i*16+8:]))
		k1 *= c1
		k1 = rotl(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = rotl(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = rotl(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = rotl(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := data[nBlocks*16:]
	k1, k2 = 0, 0
	n := length & 15
	if n > 8 {
		for i := n - 1; i >= 8; i-- {
			k2 ^= int64(int8(tail[i])) << (8 * uint(i-8))
		}
		k2 *= c2
		k2 = rotl(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	if n > 0 {
		m := n
		if m > 8 {
			m = 8
		}
		for i := m - 1; i >= 0; i-- {
			k1 ^= int64(int8(tail[i])) << (8 * uint(i))
		}
		k1 *= c1
		k1 = rotl(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= int64(length)
	h2 ^= int64(length)
	h1 += h2
	h2 += h1
	h1 = fmix(h1)
	h2 = fmix(h2)
	h1 += h2
	return h1
}

func rotl(x int64, r uint8) int64 {
	return (x << r) | int64(uint64(x)>>(64-r))
}

func fmix(n int64) int64 {
	n ^= int64(uint64(n) >> 33)
	n *= -49064778989728563 // 0xff51afd7ed558ccd
	n ^= int64(uint64(n) >> 33)
	n *= -4265267296055464877 // 0xc4ceb9fe1a85ec53
	n ^= int64(uint64(n) >> 33)
	return n
}
