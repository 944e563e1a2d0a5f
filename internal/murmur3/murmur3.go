// Package murmur3 computes Cassandra's Murmur3Partitioner token. It is shared
// by the routing core (internal/core) and the simulator (sim), so the two can
// never disagree on where a key lives.
package murmur3

import "encoding/binary"

// Token returns the Murmur3Partitioner token of a partition key: the
// h1 half of the 128-bit x64 MurmurHash3 as Cassandra computes it (tail bytes
// are sign-extended, like Java bytes). It matches gocql's internal
// murmur.Murmur3H1, which is not importable; third-party murmur3 packages
// implement the standard (unsigned) variant and disagree on keys with bytes
// >= 0x80 in the tail.
func Token(data []byte) int64 {
	const (
		c1    = -8663945395140668459 // 0x87c37b91114253d5
		c2    = 5545529020109919103  // 0x4cf5ad432745937f
		fmix1 = -49064778989728563   // 0xff51afd7ed558ccd
		fmix2 = -4265267296055464877 // 0xc4ceb9fe1a85ec53
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
	switch length & 15 {
	case 15:
		k2 ^= int64(int8(tail[14])) << 48
		fallthrough
	case 14:
		k2 ^= int64(int8(tail[13])) << 40
		fallthrough
	case 13:
		k2 ^= int64(int8(tail[12])) << 32
		fallthrough
	case 12:
		k2 ^= int64(int8(tail[11])) << 24
		fallthrough
	case 11:
		k2 ^= int64(int8(tail[10])) << 16
		fallthrough
	case 10:
		k2 ^= int64(int8(tail[9])) << 8
		fallthrough
	case 9:
		k2 ^= int64(int8(tail[8]))
		k2 *= c2
		k2 = rotl(k2, 33)
		k2 *= c1
		h2 ^= k2
		fallthrough
	case 8:
		k1 ^= int64(int8(tail[7])) << 56
		fallthrough
	case 7:
		k1 ^= int64(int8(tail[6])) << 48
		fallthrough
	case 6:
		k1 ^= int64(int8(tail[5])) << 40
		fallthrough
	case 5:
		k1 ^= int64(int8(tail[4])) << 32
		fallthrough
	case 4:
		k1 ^= int64(int8(tail[3])) << 24
		fallthrough
	case 3:
		k1 ^= int64(int8(tail[2])) << 16
		fallthrough
	case 2:
		k1 ^= int64(int8(tail[1])) << 8
		fallthrough
	case 1:
		k1 ^= int64(int8(tail[0]))
		k1 *= c1
		k1 = rotl(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= int64(length)
	h2 ^= int64(length)
	h1 += h2
	h2 += h1
	h1 = fmix(h1, fmix1, fmix2)
	h2 = fmix(h2, fmix1, fmix2)
	return h1 + h2
}

func rotl(x int64, r uint8) int64 { return (x << r) | int64(uint64(x)>>(64-r)) }

func fmix(n, f1, f2 int64) int64 {
	n ^= int64(uint64(n) >> 33)
	n *= f1
	n ^= int64(uint64(n) >> 33)
	n *= f2
	n ^= int64(uint64(n) >> 33)
	return n
}
