package sim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"runtime"
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

var v4 = primitive.ProtocolVersion4

// dialNode opens a raw CQL connection to node ip of c and sends STARTUP.
func dialNode(t testing.TB, c *Cluster, ip string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(ip, fmt.Sprint(c.Port())), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 0, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}}), nc))
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := codec.DecodeFrame(br)
	require.NoError(t, err)
	require.IsType(t, &message.Ready{}, f.Body.Message)
	nc.SetReadDeadline(time.Time{})
	return nc, br
}

// TestResponsesNeverCrossConnections has one client queue many data
// requests and hang up before they are answered, while another client asks
// OPTIONS in a loop: every frame the second client receives must be its own
// SUPPORTED answer on its own stream, never a leftover of the first client's
// responses (a pooled response buffer reused without being cleared).
func TestResponsesNeverCrossConnections(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{Workers: 1, MeanService: 100 * time.Microsecond}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':1}", 1)
	ip := c.Hosts()[0]

	b, bbr := dialNode(t, c, ip)
	var foreign atomic.Int64
	var answered atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // client B: one OPTIONS at a time on stream 7
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := codec.EncodeFrame(frame.NewFrame(v4, 7, &message.Options{}), b); err != nil {
				t.Error(err)
				return
			}
			b.SetReadDeadline(time.Now().Add(10 * time.Second))
			for {
				f, err := codec.DecodeFrame(bbr)
				if err != nil {
					t.Error(err)
					return
				}
				if _, ok := f.Body.Message.(*message.Supported); ok && f.Header.StreamId == 7 {
					answered.Add(1)
					break
				}
				foreign.Add(1) // someone else's frame
			}
		}
	}()
	q := &message.Query{Query: "SELECT * FROM ycsb.usertable WHERE y_id = 'k'", Options: &message.QueryOptions{}}
	deadline := time.Now().Add(3 * time.Second)
	for round := 0; time.Now().Before(deadline) && foreign.Load() == 0; round++ {
		a, _ := dialNode(t, c, ip)
		bw := bufio.NewWriter(a)
		for s := int16(1); s <= 300; s++ {
			require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, s, q), bw))
		}
		require.NoError(t, bw.Flush())
		a.Close() // hang up with the requests still queued
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, foreign.Load(), "frames of another connection delivered to client B")
	assert.Positive(t, answered.Load())
}

// TestNonReadingClientDoesNotStallOthers registers a client for every event
// and floods requests without ever reading. Other clients' DDL (whose
// SCHEMA_CHANGE events are pushed to it), their queries and Node.Stop /
// Cluster.Close must all proceed; the server drops the non-reading client.
func TestNonReadingClientDoesNotStallOthers(t *testing.T) {
	c := startCluster(t, Config{Nodes: 2, Model: ServiceModel{ZeroService: true}, WriteQueueBytes: 1 << 20})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':1}", 1)
	ip0 := c.Hosts()[0]

	hog, _ := dialNode(t, c, ip0)
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 1, &message.Register{EventTypes: []primitive.EventType{
		primitive.EventTypeSchemaChange, primitive.EventTypeStatusChange, primitive.EventTypeTopologyChange}}), hog))
	// flood: system.local answers are ~1 KiB each; the hog never reads them
	hogDone := make(chan error, 1)
	go func() {
		bw := bufio.NewWriter(hog)
		q := &message.Query{Query: "SELECT * FROM system.local", Options: &message.QueryOptions{}}
		for i := 0; ; i++ {
			if err := codec.EncodeFrame(frame.NewFrame(v4, int16(i%30000+2), q), bw); err != nil {
				hogDone <- err
				return
			}
		}
	}()

	s := newSession(t, c, "ycsb", false)
	for i := 0; i < 20; i++ {
		start := time.Now()
		require.NoError(t, s.Query(fmt.Sprintf("CREATE TABLE t%d (k text PRIMARY KEY, v text)", i)).Exec())
		require.Less(t, time.Since(start), 5*time.Second, "DDL %d stalled", i)
		require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", fmt.Sprint(i), "v").Exec())
	}
	select {
	case err := <-hogDone:
		t.Logf("non-reading client dropped by the server: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the server never dropped the client that does not read")
	}
	assert.Positive(t, c.Nodes()[0].Stats().Dropped, "the drop is counted")
	stopped := make(chan error, 1)
	go func() { stopped <- c.Nodes()[0].Stop() }()
	select {
	case err := <-stopped:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Node.Stop stalled")
	}
}

// rawFrame writes a frame header declaring bodyLen bytes, then body.
func rawFrame(t testing.TB, w io.Writer, stream int16, op primitive.OpCode, bodyLen int32, body []byte) {
	t.Helper()
	hdr := []byte{4, 0, byte(uint16(stream) >> 8), byte(stream), byte(op),
		byte(uint32(bodyLen) >> 24), byte(uint32(bodyLen) >> 16), byte(uint32(bodyLen) >> 8), byte(bodyLen)}
	_, err := w.Write(append(hdr, body...))
	require.NoError(t, err)
}

// heapInUse returns the live heap after a GC.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestOversizedFrameIsRefused sends headers declaring 2 GiB bodies and a
// small QUERY whose query string declares 2 GiB: each is answered with a
// ProtocolError on its stream without the node allocating the declared
// size, and the connection keeps working.
func TestOversizedFrameIsRefused(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}, MaxFrameSize: 1 << 20})
	before := heapInUse()
	nc, br := dialNode(t, c, c.Hosts()[0])
	rawFrame(t, nc, 5, primitive.OpCodeQuery, math.MaxInt32, nil)
	f := readUntil(t, br, nc, 5)
	require.IsType(t, &message.ProtocolError{}, f.Body.Message)
	assert.Contains(t, f.Body.Message.(*message.ProtocolError).ErrorMessage, "exceeds maximum allowed length 1048576")
	nc.Close()

	// a frame just over the limit whose body does arrive: skipped, the
	// stream stays in sync and the next request is answered
	nc, br = dialNode(t, c, c.Hosts()[0])
	big := make([]byte, 1<<20)
	go rawFrame(t, nc, 6, primitive.OpCodeQuery, int32(len(big)), big)
	f = readUntil(t, br, nc, 6)
	require.IsType(t, &message.ProtocolError{}, f.Body.Message)
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 7, &message.Options{}), nc))
	assert.IsType(t, &message.Supported{}, readUntil(t, br, nc, 7).Body.Message)

	// lengths inside a small body: [long string] query of 2 GiB, a bound
	// [value] of 2 GiB, an EXECUTE id longer than the body
	for i, body := range [][]byte{
		{0x7f, 0xff, 0xff, 0xff, 'x'},
		{0, 0, 0, 1, 'x', 0, 1, 1, 0, 1, 0x7f, 0xff, 0xff, 0xff},
	} {
		stream := int16(10 + i)
		rawFrame(t, nc, stream, primitive.OpCodeQuery, int32(len(body)), body)
		f = readUntil(t, br, nc, stream)
		require.IsType(t, &message.ProtocolError{}, f.Body.Message, "body %d", i)
		assert.Contains(t, f.Body.Message.(*message.ProtocolError).ErrorMessage, "remain in the frame")
	}
	rawFrame(t, nc, 12, primitive.OpCodeExecute, 4, []byte{0x10, 0, 1, 2})
	assert.IsType(t, &message.ProtocolError{}, readUntil(t, br, nc, 12).Body.Message)
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 13, &message.Options{}), nc))
	assert.IsType(t, &message.Supported{}, readUntil(t, br, nc, 13).Body.Message)

	// six connections each declaring 2 GiB (the 12 GiB heap)
	for i := 0; i < 6; i++ {
		nc, br := dialNode(t, c, c.Hosts()[0])
		rawFrame(t, nc, 1, primitive.OpCodeQuery, math.MaxInt32, []byte{0, 0, 0, 1})
		require.IsType(t, &message.ProtocolError{}, readUntil(t, br, nc, 1).Body.Message)
	}
	after := heapInUse()
	assert.Less(t, int64(after)-int64(before), int64(64<<20), "heap grew from %d to %d bytes", before, after)

	_, err := Start(context.Background(), Config{MaxFrameSize: 100})
	assert.ErrorContains(t, err, "Config.MaxFrameSize = 100, allowed 4096..")
	_, err = Start(context.Background(), Config{WriteQueueBytes: -5})
	assert.ErrorContains(t, err, "Config.WriteQueueBytes = -5")
	_, err = Start(context.Background(), Config{DownDelay: time.Hour})
	assert.ErrorContains(t, err, "Config.DownDelay = 1h0m0s, allowed 0..1m")
}

// readUntil reads frames until one on stream arrives (events are skipped).
func readUntil(t testing.TB, br *bufio.Reader, nc net.Conn, stream int16) *frame.Frame {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		f, err := codec.DecodeFrame(br)
		require.NoError(t, err)
		if f.Header.StreamId == stream {
			return f
		}
	}
}
