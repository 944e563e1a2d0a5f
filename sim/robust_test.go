package sim

import (
	"bufio"
	"bytes"
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
	"github.com/gocql/gocql"
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
	c := startCluster(t, Config{Nodes: 2, Model: ServiceModel{ZeroService: true}, WriteQueueBytes: 1 << 20, DownDelay: -1})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':1}", 1)
	// hog registers for every event and floods requests (system.local
	// answers, ~1 KiB each) without ever reading
	hog := func(ip string) <-chan error {
		nc, _ := dialNode(t, c, ip)
		require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 1, &message.Register{EventTypes: []primitive.EventType{
			primitive.EventTypeSchemaChange, primitive.EventTypeStatusChange, primitive.EventTypeTopologyChange}}), nc))
		done := make(chan error, 1)
		go func() {
			bw := bufio.NewWriter(nc)
			q := &message.Query{Query: "SELECT * FROM system.local", Options: &message.QueryOptions{}}
			for i := 0; ; i++ {
				if err := codec.EncodeFrame(frame.NewFrame(v4, int16(i%30000+2), q), bw); err != nil {
					done <- err
					return
				}
			}
		}()
		return done
	}
	hog0 := hog(c.Hosts()[0])

	s := newSession(t, c, "ycsb", false)
	for i := 0; i < 20; i++ {
		start := time.Now()
		require.NoError(t, s.Query(fmt.Sprintf("CREATE TABLE t%d (k text PRIMARY KEY, v text)", i)).Exec())
		require.Less(t, time.Since(start), 5*time.Second, "DDL %d stalled", i)
		require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", fmt.Sprint(i), "v").Exec())
	}
	select {
	case err := <-hog0:
		t.Logf("non-reading client dropped by the server: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the server never dropped the client that does not read")
	}
	assert.Positive(t, c.Nodes()[0].Stats().Dropped, "the drop is counted")

	// node 0 stops while a fresh hog on node 1 is filling its socket: the
	// DOWN broadcast to it (DownDelay -1: inside Stop) must not wait on it
	hog(c.Hosts()[1])
	time.Sleep(200 * time.Millisecond)
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

	// headers declaring bodies just under the default limit (16 MiB), then
	// silence: the node holds what arrived, not what was declared
	c16 := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}})
	before = heapInUse()
	for i := 0; i < 8; i++ {
		nc, _ := dialNode(t, c16, c16.Hosts()[0])
		rawFrame(t, nc, 1, primitive.OpCodeQuery, DefaultMaxFrameSize-frameHeaderLen, []byte{0, 0, 0, 1})
	}
	time.Sleep(200 * time.Millisecond)
	after = heapInUse()
	assert.Less(t, int64(after)-int64(before), int64(32<<20), "8 pending 16 MiB frames: heap grew from %d to %d bytes", before, after)

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

// scanAll pages through q with gocql's manual paging and returns the keys
// in order and the number of pages.
func scanAll(t *testing.T, s *gocql.Session, q string, pageSize int, args ...any) ([]string, int) {
	t.Helper()
	var keys []string
	var state []byte
	pages := 0
	for {
		iter := s.Query(q, args...).PageSize(pageSize).PageState(state).Iter()
		var k string
		n := 0
		for iter.Scan(&k) {
			keys = append(keys, k)
			n++
		}
		require.NoError(t, iter.Close())
		require.LessOrEqual(t, n, pageSize, "page %d larger than the page size", pages)
		pages++
		state = iter.PageState()
		if len(state) == 0 {
			return keys, pages
		}
		require.Less(t, pages, 1000, "paging does not end")
	}
}

// TestResultPaging checks that scans honour the requested page size, return
// a paging state while rows remain, and together return every row once:
// with gocql's manual paging, its automatic paging, LIMIT, token bounds and
// system tables.
func TestResultPaging(t *testing.T) {
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':2}", 1)
	s := newSession(t, c, "ycsb", true)
	const rows = 103
	want := map[string]bool{}
	for i := 0; i < rows; i++ {
		k := fmt.Sprintf("user%03d", i)
		want[k] = true
		require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", k, "v"+k).Exec())
	}
	keys, pages := scanAll(t, s, "SELECT y_id FROM usertable", 10)
	assert.Equal(t, 11, pages, "103 rows in pages of 10")
	got := map[string]int{}
	for _, k := range keys {
		got[k]++
	}
	assert.Len(t, got, rows)
	for k, n := range got {
		assert.True(t, want[k], "unknown key %q", k)
		assert.Equal(t, 1, n, "key %q returned %d times", k, n)
	}

	// automatic paging (gocql fetches the next pages itself), prepared
	iter := s.Query("SELECT y_id, field0 FROM usertable").PageSize(7).Iter()
	var k, f string
	n := 0
	for iter.Scan(&k, &f) {
		assert.Equal(t, "v"+k, f)
		n++
	}
	require.NoError(t, iter.Close())
	assert.Equal(t, rows, n)

	// LIMIT spans pages; exactly LIMIT rows, in the unpaged order
	all, pages := scanAll(t, s, "SELECT y_id FROM usertable", 1000)
	require.Equal(t, 1, pages)
	lim, pages := scanAll(t, s, "SELECT y_id FROM usertable LIMIT 23", 5)
	assert.Equal(t, all[:23], lim)
	assert.Equal(t, 5, pages)
	lim, _ = scanAll(t, s, "SELECT y_id FROM usertable LIMIT 20", 5)
	assert.Equal(t, all[:20], lim, "LIMIT a multiple of the page size")

	// token bounds hold across pages
	mid := Murmur3Token([]byte(all[50]))
	part, _ := scanAll(t, s, "SELECT y_id FROM usertable WHERE token(y_id) > ? AND token(y_id) <= ?", 4, int64(math.MinInt64), mid)
	assert.Equal(t, all[:51], part)

	// system tables page too
	sys, pages := scanAll(t, s, "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'ycsb'", 1)
	unpaged, _ := scanAll(t, s, "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'ycsb'", 5000)
	assert.Equal(t, unpaged, sys)
	assert.Len(t, sys, 2, "y_id and field0")
	assert.Equal(t, 2, pages)

	// a paging state that is not one of ours
	nc, br := dialNode(t, c, c.Hosts()[0])
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 3, &message.Query{Query: "SELECT * FROM ycsb.usertable",
		Options: &message.QueryOptions{PageSize: 5, PagingState: []byte("garbage")}}), nc))
	assert.IsType(t, &message.ProtocolError{}, readUntil(t, br, nc, 3).Body.Message)
}

// recordingTracer is a gocql.Tracer that records the trace ids it gets.
type recordingTracer struct {
	mu  sync.Mutex
	ids [][]byte
}

func (r *recordingTracer) Trace(id []byte) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

// TestTracingRequestIsAnsweredWithAWarning checks the documented answer to
// the tracing flag: the request is served normally, no tracing session id
// comes back (drivers then report "no trace") and, in protocol v4, a server
// warning says that tracing is not supported. The flag applies to its own
// request only.
func TestTracingRequestIsAnsweredWithAWarning(t *testing.T) {
	c, s := oneNode(t, ServiceModel{ZeroService: true}, false)
	tr := &recordingTracer{}
	iter := s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Trace(tr).Iter()
	var f string
	require.True(t, iter.Scan(&f))
	assert.Equal(t, "v", f)
	assert.Equal(t, []string{tracingWarning}, iter.Warnings())
	require.NoError(t, iter.Close())
	assert.Empty(t, tr.ids, "no tracing session id")
	iter = s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k").Iter()
	assert.Empty(t, iter.Warnings(), "untraced request")
	require.NoError(t, iter.Close())

	nc, br := dialNode(t, c, c.Hosts()[0])
	sendTraced(t, nc, frame.NewFrame(v4, 5, &message.Query{Query: "SELECT * FROM system.local", Options: &message.QueryOptions{}}))
	got := readUntil(t, br, nc, 5)
	assert.IsType(t, &message.RowsResult{}, got.Body.Message)
	assert.Equal(t, []string{tracingWarning}, got.Body.Warnings)
	assert.Nil(t, got.Body.TracingId)
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 5, &message.Options{}), nc))
	assert.Empty(t, readUntil(t, br, nc, 5).Body.Warnings, "the same stream id, not traced")

	sendTraced(t, nc, frame.NewFrame(primitive.ProtocolVersion3, 6, &message.Options{}))
	got = readUntil(t, br, nc, 6)
	assert.IsType(t, &message.Supported{}, got.Body.Message, "v3 has no warnings: served, nothing added")
	assert.Empty(t, got.Body.Warnings)
}

// sendTraced sends f with the tracing flag set. (The codec's encoder counts
// a tracing id into the body length of a request, which carries none, so
// the flag is set on the encoded header.)
func sendTraced(t testing.TB, w io.Writer, f *frame.Frame) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, codec.EncodeFrame(f, &b))
	raw := b.Bytes()
	raw[1] |= byte(primitive.HeaderFlagTracing)
	_, err := w.Write(raw)
	require.NoError(t, err)
}

// TestDownAnnouncedAfterConnectionsClose checks the order a real cluster
// shows drivers when a node stops: the node's client connections close
// first, and only DownDelay later do the other nodes push STATUS_CHANGE
// DOWN (drivers ignore a DOWN for a host they still have connections to).
// A Restart within the delay cancels the pending DOWN.
func TestDownAnnouncedAfterConnectionsClose(t *testing.T) {
	const delay = time.Second
	c := startCluster(t, Config{Nodes: 2, Model: ServiceModel{ZeroService: true}, DownDelay: delay})
	n0, n1 := c.Nodes()[0], c.Nodes()[1]
	ev, evbr := dialNode(t, c, n0.IP())
	require.NoError(t, codec.EncodeFrame(frame.NewFrame(v4, 1, &message.Register{EventTypes: []primitive.EventType{
		primitive.EventTypeStatusChange}}), ev))
	readUntil(t, evbr, ev, 1)
	events := make(chan time.Time, 8)
	go func() {
		for {
			f, err := codec.DecodeFrame(evbr)
			if err != nil {
				close(events)
				return
			}
			if e, ok := f.Body.Message.(*message.StatusChangeEvent); ok && e.ChangeType == primitive.StatusChangeTypeDown {
				events <- time.Now()
			}
		}
	}()
	ev.SetReadDeadline(time.Time{})
	_, vbr := dialNode(t, c, n1.IP())
	closed := make(chan time.Time, 1)
	go func() {
		_, err := vbr.ReadByte()
		assert.Error(t, err)
		closed <- time.Now()
	}()

	// The order is checked on the events themselves, not on how soon the
	// client's goroutines see them (late on a busy machine): Stop closes
	// the connection before it returns, it returns before DOWN is sent, and
	// DOWN is sent no earlier than DownDelay after Stop began.
	start := time.Now()
	require.NoError(t, n1.Stop())
	select {
	case at := <-events:
		t.Fatalf("DOWN announced %v after Stop began, before Stop returned", at.Sub(start))
	default:
	}
	var downAt time.Time
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the stopped node's client connection was not closed")
	}
	select {
	case downAt = <-events:
	case <-time.After(10 * time.Second):
		t.Fatal("no STATUS_CHANGE DOWN")
	}
	assert.GreaterOrEqual(t, downAt.Sub(start), delay,
		"DOWN %v after Stop began, want DownDelay %v after it closed the connection", downAt.Sub(start), delay)

	// a restart within the delay: UP, and the pending DOWN is dropped
	require.NoError(t, n1.Restart())
	require.NoError(t, n1.Stop())
	require.NoError(t, n1.Restart())
	select {
	case at := <-events:
		t.Fatalf("DOWN announced %v after the node was restarted", time.Since(at))
	case <-time.After(2 * delay):
	}
}
