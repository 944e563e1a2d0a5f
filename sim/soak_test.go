package sim

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// soakDuration is 20s (5s with -short); TAILROUTE_SOAK=2m runs longer.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("TAILROUTE_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "TAILROUTE_SOAK=%q, want a duration such as 2m", v)
		return d
	}
	if testing.Short() {
		return 5 * time.Second
	}
	return 20 * time.Second
}

// soakStall is the longest any gocql operation or DDL may take in the soak.
const soakStall = 5 * time.Second

// TestSoak runs, against a 3-node cluster on loopback, 4 gocql clients that
// write and read back their own keys, DDL whose schema events go to every
// registered connection, one client that registers for events and floods
// requests without ever reading (reconnecting whenever the server drops
// it), and one client sending frames that declare 2 GiB bodies or 2 GiB
// fields. It asserts 0 wrong values, 0 errors, no operation slower than
// soakStall, the bad clients answered or dropped, and a bounded heap.
func TestSoak(t *testing.T) {
	dur := soakDuration(t)
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{Workers: 8, MeanService: 200 * time.Microsecond},
		WriteQueueBytes: 1 << 20})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':3}", 1)
	base := heapInUse()

	var (
		wrong, errs, ops atomic.Int64
		slowest          atomic.Int64 // nanoseconds
		hogDrops         atomic.Int64
		bigAnswers       atomic.Int64
		peakHeap         atomic.Uint64
	)
	observe := func(start time.Time, err error, what string) {
		d := time.Since(start)
		for {
			cur := slowest.Load()
			if int64(d) <= cur || slowest.CompareAndSwap(cur, int64(d)) {
				break
			}
		}
		if err != nil {
			if errs.Add(1) <= 5 {
				t.Errorf("%s: %v", what, err)
			}
		}
	}
	done := make(chan struct{})
	deadline := time.Now().Add(dur + soakStall)
	var wg sync.WaitGroup
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}

	// 4 gocql clients, 2 workers each, on disjoint keys: every read must
	// return the value this worker wrote last
	for cl := 0; cl < 4; cl++ {
		s := newSession(t, c, "ycsb", true)
		for w := 0; w < 2; w++ {
			run(func() {
				rng := rand.New(rand.NewPCG(uint64(cl), uint64(w)))
				last := map[string]string{}
				for seq := 0; ; seq++ {
					select {
					case <-done:
						return
					default:
					}
					key := fmt.Sprintf("c%d-w%d-k%d", cl, w, rng.IntN(200))
					if v, ok := last[key]; ok && rng.IntN(2) == 0 {
						var got string
						start := time.Now()
						err := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", key).Scan(&got)
						observe(start, err, "read "+key)
						if err == nil && got != v {
							if wrong.Add(1) <= 5 {
								t.Errorf("read %s = %q, wrote %q", key, got, v)
							}
						}
					} else {
						v := fmt.Sprintf("v%d", seq)
						start := time.Now()
						err := s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", key, v).Exec()
						observe(start, err, "write "+key)
						if err == nil {
							last[key] = v
						}
					}
					ops.Add(1)
				}
			})
		}
	}

	// DDL: SCHEMA_CHANGE events are pushed to every registered connection,
	// the non-reading one included
	ddl := newSession(t, c, "ycsb", false)
	run(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
			start := time.Now()
			err := ddl.Query(fmt.Sprintf("CREATE TABLE IF NOT EXISTS soak%d (k text PRIMARY KEY, v text)", i)).Exec()
			observe(start, err, "DDL")
		}
	})

	// the client that never reads
	run(func() {
		q := &message.Query{Query: "SELECT * FROM system.local", Options: &message.QueryOptions{}}
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			ip := c.Hosts()[i%3]
			nc, err := net.DialTimeout("tcp", net.JoinHostPort(ip, strconv.Itoa(c.Port())), 5*time.Second)
			if err != nil {
				t.Errorf("non-reading client: %v", err)
				return
			}
			bw := bufio.NewWriter(nc)
			codec.EncodeFrame(frame.NewFrame(v4, 0, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}}), bw)
			codec.EncodeFrame(frame.NewFrame(v4, 1, &message.Register{EventTypes: []primitive.EventType{
				primitive.EventTypeSchemaChange, primitive.EventTypeStatusChange, primitive.EventTypeTopologyChange}}), bw)
			nc.SetWriteDeadline(deadline) // a server that never drops it must not hang the test
			for s := 0; ; s++ {
				if err := codec.EncodeFrame(frame.NewFrame(v4, int16(s%30000+2), q), bw); err != nil {
					if !errors.Is(err, os.ErrDeadlineExceeded) {
						hogDrops.Add(1) // the server hung up on it
					}
					break
				}
				select {
				case <-done:
					nc.Close()
					return
				default:
				}
			}
			nc.Close()
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})

	// the client sending oversized frames
	run(func() {
		bodies := [][]byte{nil, {0x7f, 0xff, 0xff, 0xff, 'x'}}
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			nc, br := dialNode(t, c, c.Hosts()[i%3])
			if i%2 == 0 {
				rawFrame(t, nc, 3, primitive.OpCodeQuery, math.MaxInt32, bodies[0])
			} else {
				rawFrame(t, nc, 3, primitive.OpCodeQuery, int32(len(bodies[1])), bodies[1])
			}
			nc.SetReadDeadline(time.Now().Add(soakStall))
			f, err := codec.DecodeFrame(br)
			nc.Close()
			if err != nil {
				t.Errorf("oversized frame: no answer: %v", err)
				return
			}
			if _, ok := f.Body.Message.(*message.ProtocolError); !ok || f.Header.StreamId != 3 {
				t.Errorf("oversized frame answered %v on stream %d", f.Body.Message, f.Header.StreamId)
				return
			}
			bigAnswers.Add(1)
		}
	})

	// heap sampler
	run(func() {
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peakHeap.Load() {
				peakHeap.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})

	time.Sleep(dur)
	close(done)
	wg.Wait()
	var dropped uint64
	for _, n := range c.Nodes() {
		dropped += n.Stats().Dropped
	}
	end := heapInUse()
	t.Logf("%v: %d gocql ops, slowest %v, %d errors, %d wrong values; non-reading client dropped %d times (nodes count %d); "+
		"%d oversized frames refused; heap in use %d MiB at start, peak %d MiB, %d MiB at the end",
		dur, ops.Load(), time.Duration(slowest.Load()), errs.Load(), wrong.Load(), hogDrops.Load(), dropped,
		bigAnswers.Load(), base>>20, peakHeap.Load()>>20, end>>20)
	assert.Zero(t, wrong.Load(), "wrong values")
	assert.Zero(t, errs.Load(), "errors")
	assert.Less(t, time.Duration(slowest.Load()), soakStall, "slowest operation")
	assert.Greater(t, ops.Load(), int64(dur/time.Second)*20, "the gocql clients made progress")
	assert.Positive(t, hogDrops.Load(), "the non-reading client was dropped")
	assert.Positive(t, dropped, "nodes counted the drops")
	assert.Positive(t, bigAnswers.Load(), "oversized frames answered")
	assert.Less(t, peakHeap.Load(), uint64(512<<20), "peak heap")
	assert.Less(t, int64(end)-int64(base), int64(128<<20), "heap after the soak")
}
