package murmur3

import (
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokenMatchesCassandra(t *testing.T) {
	// vectors from gocql's internal/murmur tests (generated with Cassandra's Java implementation)
	series := []uint64{0x0000000000000000, 0x2ac9debed546a380, 0x649e4eaa7fc1708e, 0xce68f60d7c353bdb,
		0x0f95757ce7f38254, 0x0f04e459497f3fc1, 0x88c0a92586be0a27, 0x13eb9fb82606f7a6, 0x8236039b7387354d,
		0x4c1e87519fe738ba, 0x3f9652ac3effeb24, 0x3f33760ded9006c6, 0xaed70a6631854cb1, 0x8a299a8f8e0e2da7,
		0x624b675c779249a6, 0xa4b203bb1d90b9a3, 0xa3293ad698ecb99a, 0xbc740023dbd50048, 0x3fe5ab9837d25cdd,
		0x2d0338c1ca87d132}
	sample := ""
	for i, want := range series {
		assert.Equal(t, int64(want), Token([]byte(sample)), "%q", sample)
		sample += strconv.Itoa(i % 10)
	}
	assert.Equal(t, int64(-3758069500696749310), Token([]byte("hello"))) // 0xcbd8a7b341bd9b02
	assert.Equal(t, int64(0x342fac623a5ebc8e), Token([]byte("hello, world")))
	key, _ := hex.DecodeString("00104327529fb645dd00b883ec39ae448bb800000400066a6b00")
	assert.Equal(t, int64(-9223371632693506265), Token(key), "signed tail bytes")
	data := make([]byte, 1024)
	for i := range data {
		data[i] = byte(i)
	}
	assert.Equal(t, int64(7627370222079200297), Token(data))
}
