package sim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

var codec = frame.NewRawCodec()

// conn is one client connection to a node.
type conn struct {
	n          *Node
	nc         net.Conn
	out        outQueue
	closed     chan struct{}
	closeOnce  sync.Once
	keyspace   atomic.Pointer[string]
	registered atomic.Uint32 // bitmask of registered event types
	version    atomic.Uint32 // protocol version of the last request
	tracing    atomic.Pointer[streamSet]
	wg         sync.WaitGroup
	zn         *connNet // the connection's zones and traffic (Config.Network); nil: none
}

const (
	evTopology = 1 << iota
	evStatus
	evSchema
)

// Response buffers are pooled; every buffer is reset before it goes back
// (putBuf), so a buffer never carries one connection's frames into
// another's. Buffers that grew past maxPooledBuf are left to the GC.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuf = 64 << 10

func putBuf(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuf {
		return
	}
	b.Reset()
	bufPool.Put(b)
}

// outQueue is a connection's write queue, bounded in bytes: a response that
// would take it past limit while older responses are still unwritten means
// the client is not reading, and the connection is dropped. Senders never
// block, so a client that stops reading never delays event broadcasts,
// node workers or other connections. A response is always accepted into
// an empty queue, whatever its size.
type outQueue struct {
	mu     sync.Mutex
	bufs   []*bytes.Buffer // nil entry: flush, half-close and stop (drainAndClose)
	bytes  int             // queued plus being written
	limit  int
	closed bool
	ready  chan struct{} // capacity 1: the writer has work
}

func newConn(n *Node, nc net.Conn) *conn {
	c := &conn{n: n, nc: nc, closed: make(chan struct{})}
	c.out.limit = n.c.limits.WriteQueueBytes
	c.out.ready = make(chan struct{}, 1)
	if nw := n.c.net; nw != nil {
		cz, nz := nw.clientZone(nc.RemoteAddr()), Zone{n.m.dc, n.m.rack}
		c.zn = &connNet{nw: nw, client: cz, node: nz, f: nw.flowOf(cz, nz)}
	}
	return c
}

func (c *conn) start() {
	c.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	go func() {
		c.wg.Wait()
		c.n.dropConn(c)
	}()
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.nc.Close()
		c.out.mu.Lock()
		c.out.closed = true
		bufs := c.out.bufs
		c.out.bufs = nil
		c.out.mu.Unlock()
		for _, b := range bufs {
			if b != nil {
				putBuf(b)
			}
		}
	})
}

func (c *conn) sessionKeyspace() string {
	if p := c.keyspace.Load(); p != nil {
		return *p
	}
	return ""
}

// enqueue hands b (nil: the drainAndClose marker) to the writer. It never
// blocks; it reports false when the connection is closed or was just
// dropped because the client does not read (b is then released).
func (c *conn) enqueue(b *bytes.Buffer) bool {
	q := &c.out
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		if b != nil {
			putBuf(b)
		}
		return false
	}
	if b != nil {
		if c.zn != nil {
			c.zn.f.out.Add(uint64(b.Len()))
		}
		if q.bytes > 0 && q.bytes+b.Len() > q.limit {
			q.mu.Unlock()
			putBuf(b)
			c.n.slowDrops.Add(1)
			c.close()
			return false
		}
		q.bytes += b.Len()
	}
	q.bufs = append(q.bufs, b)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

func (c *conn) writeLoop() {
	defer c.wg.Done()
	defer c.close()
	bw := bufio.NewWriterSize(c.nc, 32<<10)
	var batch []*bytes.Buffer
	for {
		select {
		case <-c.out.ready:
		case <-c.closed:
			return
		}
		c.out.mu.Lock()
		batch, c.out.bufs = c.out.bufs, batch[:0]
		c.out.mu.Unlock()
		written := 0
		for i, b := range batch {
			if b == nil { // drainAndClose marker
				bw.Flush()
				if tc, ok := c.nc.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				for _, rest := range batch[i+1:] {
					if rest != nil {
						putBuf(rest)
					}
				}
				return
			}
			_, err := bw.Write(b.Bytes())
			written += b.Len()
			putBuf(b)
			batch[i] = nil
			if err != nil {
				for _, rest := range batch[i+1:] {
					if rest != nil {
						putBuf(rest)
					}
				}
				return
			}
		}
		err := bw.Flush()
		c.out.mu.Lock()
		c.out.bytes -= written
		c.out.mu.Unlock()
		if err != nil {
			return
		}
		clear(batch)
	}
}

// sendMsg encodes and queues a response frame; it never blocks.
func (c *conn) sendMsg(version uint8, stream int16, msg message.Message, payload map[string][]byte) {
	f := frame.NewFrame(primitive.ProtocolVersion(version), stream, msg)
	if payload != nil {
		f.SetCustomPayload(payload)
	}
	if stream >= 0 {
		if ts := c.tracing.Load(); ts != nil && ts.take(stream) && version >= 4 {
			f.SetWarnings([]string{tracingWarning})
		}
	}
	b := bufPool.Get().(*bytes.Buffer)
	if err := codec.EncodeFrame(f, b); err != nil {
		b.Reset()
		f = frame.NewFrame(primitive.ProtocolVersion(version), stream,
			&message.ServerError{ErrorMessage: "sim: cannot encode response: " + err.Error()})
		if err2 := codec.EncodeFrame(f, b); err2 != nil {
			putBuf(b)
			c.close()
			return
		}
	}
	c.enqueue(b)
}

// sendRaw queues an already encoded frame; it never blocks.
func (c *conn) sendRaw(frame []byte) {
	b := bufPool.Get().(*bytes.Buffer)
	b.Write(frame)
	c.enqueue(b)
}

// tracingWarning is the server warning attached (protocol v4) to the answer
// of a request that asked for tracing: the simulator records no traces, so
// it returns no tracing session id, which drivers treat as "no trace".
const tracingWarning = "sim: tracing is not supported by the simulator; no trace was recorded for this request"

// streamSet is a set of stream ids (0..32767), lock-free.
type streamSet [512]atomic.Uint64

func (s *streamSet) add(id int16) { s[id>>6].Or(1 << (id & 63)) }

// take removes id and reports whether it was present.
func (s *streamSet) take(id int16) bool {
	bit := uint64(1) << (id & 63)
	return s[id>>6].And(^bit)&bit != 0
}

// markTracing records that the request on stream asked for tracing.
func (c *conn) markTracing(stream int16) {
	if stream < 0 {
		return
	}
	ts := c.tracing.Load()
	if ts == nil {
		c.tracing.CompareAndSwap(nil, new(streamSet))
		ts = c.tracing.Load()
	}
	ts.add(stream)
}

func (c *conn) readLoop() {
	defer c.wg.Done()
	draining := false
	defer func() {
		if !draining { // else the writer closes after flushing
			c.close()
		}
	}()
	br := bufio.NewReaderSize(c.nc, 32<<10)
	for {
		answer, skip, ok := versionRejection(br)
		if !ok {
			return
		}
		if answer != nil {
			if skip > 0 && skip <= int64(c.n.c.limits.MaxFrameSize) {
				_, _ = br.Discard(int(skip))
			}
			c.sendRaw(answer)
			c.drainAndClose()
			draining = true
			return
		}
		hdr, err := codec.DecodeHeader(br)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
				// a malformed header (e.g. unknown opcode): answer, then drop the connection
				c.sendMsg(4, 0, &message.ProtocolError{ErrorMessage: "sim: cannot decode frame header: " + err.Error()}, nil)
				c.drainAndClose()
				draining = true
			}
			return
		}
		if hdr.BodyLength < 0 {
			c.sendMsg(uint8(hdr.Version), hdr.StreamId, &message.ProtocolError{ErrorMessage: fmt.Sprintf(
				"sim: invalid frame body length %d", hdr.BodyLength)}, nil)
			c.drainAndClose()
			draining = true
			return
		}
		if limit := c.n.c.limits.MaxFrameSize; int64(hdr.BodyLength)+frameHeaderLen > int64(limit) {
			// answered at once, then the body is skipped as it arrives
			// (never buffered), so the stream stays in sync
			c.sendMsg(uint8(hdr.Version), hdr.StreamId, &message.ProtocolError{ErrorMessage: fmt.Sprintf(
				"Request is too big: length %d exceeds maximum allowed length %d (native_transport_max_frame_size)",
				int64(hdr.BodyLength)+frameHeaderLen, limit)}, nil)
			if err := codec.DiscardBody(hdr, br); err != nil {
				return
			}
			continue
		}
		raw, err := readBody(br, int(hdr.BodyLength))
		if err != nil {
			return
		}
		if c.zn != nil {
			c.zn.f.frames.Add(1)
			c.zn.f.in.Add(uint64(frameHeaderLen + len(raw)))
		}
		if err := checkBodyLengths(hdr, raw); err != nil {
			c.sendMsg(uint8(hdr.Version), hdr.StreamId, &message.ProtocolError{ErrorMessage: "cannot decode request: " + err.Error()}, nil)
			continue
		}
		if hdr.Flags.Contains(primitive.HeaderFlagTracing) {
			c.markTracing(hdr.StreamId)
		}
		body, err := codec.DecodeBody(hdr, bytes.NewReader(raw))
		if err != nil {
			// the stream stays in sync: answer and go on
			c.sendMsg(uint8(hdr.Version), hdr.StreamId, &message.ProtocolError{ErrorMessage: "cannot decode request: " + err.Error()}, nil)
			continue
		}
		c.version.Store(uint32(hdr.Version))
		c.handleSafe(uint8(hdr.Version), hdr.StreamId, body.Message)
	}
}

// readBody reads a frame body of n bytes (n <= MaxFrameSize). Bodies up
// to 64 KiB are read into a buffer of their size; a larger one grows with
// the bytes that actually arrive, so a header declaring 16 MiB followed by
// silence costs nothing.
func readBody(r io.Reader, n int) ([]byte, error) {
	const direct = 64 << 10
	if n <= direct {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	var buf bytes.Buffer
	buf.Grow(direct)
	got, err := io.Copy(&buf, io.LimitReader(r, int64(n)))
	if err == nil && got < int64(n) {
		err = io.ErrUnexpectedEOF
	}
	return buf.Bytes(), err
}

// handleSafe answers a request, turning a simulator bug into a ServerError
// instead of a crash or a silent drop.
func (c *conn) handleSafe(version uint8, stream int16, msg message.Message) {
	defer func() {
		if r := recover(); r != nil {
			c.sendMsg(version, stream, &message.ServerError{ErrorMessage: fmt.Sprintf("sim: internal error: %v", r)}, nil)
		}
	}()
	c.handle(version, stream, msg)
}

// drainAndClose makes the writer flush every queued response and then close
// the connection (used after a fatal protocol error).
func (c *conn) drainAndClose() { c.enqueue(nil) }

func feedbackPayload(q, stMicros uint64) map[string][]byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b[:8], q)
	binary.BigEndian.PutUint64(b[8:], stMicros)
	return map[string][]byte{PayloadQueueLen: b[:8:8], PayloadServiceTime: b[8:]}
}

func injectedError(kind string) message.Message {
	switch kind {
	case "unavailable":
		return &message.Unavailable{ErrorMessage: "Cannot achieve consistency level ONE (injected by sim)",
			Consistency: primitive.ConsistencyLevelOne, Required: 1, Alive: 0}
	case "read_timeout":
		return &message.ReadTimeout{ErrorMessage: "Operation timed out - received only 0 responses (injected by sim)",
			Consistency: primitive.ConsistencyLevelOne, Received: 0, BlockFor: 1, DataPresent: false}
	default:
		return &message.Overloaded{ErrorMessage: "Server is in overloaded state (injected by sim)"}
	}
}

func isErrorMsg(m message.Message) bool {
	_, ok := m.(message.Error)
	return ok
}

// pushEvent sends a server event to this connection if it registered for it.
func (c *conn) pushEvent(mask uint32, ev message.Message) {
	if c.registered.Load()&mask == 0 {
		return
	}
	c.sendMsg(uint8(c.version.Load()), -1, ev, nil)
}
