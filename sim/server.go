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
	out        chan *bytes.Buffer
	closed     chan struct{}
	closeOnce  sync.Once
	keyspace   atomic.Pointer[string]
	registered atomic.Uint32 // bitmask of registered event types
	version    atomic.Uint32 // protocol version of the last request
	wg         sync.WaitGroup
}

const (
	evTopology = 1 << iota
	evStatus
	evSchema
)

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newConn(n *Node, nc net.Conn) *conn {
	return &conn{n: n, nc: nc, out: make(chan *bytes.Buffer, 4096), closed: make(chan struct{})}
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
	})
}

func (c *conn) sessionKeyspace() string {
	if p := c.keyspace.Load(); p != nil {
		return *p
	}
	return ""
}

func (c *conn) writeLoop() {
	defer c.wg.Done()
	defer c.close()
	bw := bufio.NewWriterSize(c.nc, 32<<10)
	for {
		var b *bytes.Buffer
		select {
		case b = <-c.out:
		case <-c.closed:
			return
		}
		for {
			if b == nil { // drainAndClose sentinel
				bw.Flush()
				if tc, ok := c.nc.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				return
			}
			_, err := bw.Write(b.Bytes())
			b.Reset()
			bufPool.Put(b)
			if err != nil {
				return
			}
			select {
			case b = <-c.out:
				continue
			default:
			}
			break
		}
		if err := bw.Flush(); err != nil {
			return
		}
	}
}

// sendMsg encodes and queues a response frame.
func (c *conn) sendMsg(version uint8, stream int16, msg message.Message, payload map[string][]byte) {
	f := frame.NewFrame(primitive.ProtocolVersion(version), stream, msg)
	if payload != nil {
		f.SetCustomPayload(payload)
	}
	b := bufPool.Get().(*bytes.Buffer)
	if err := codec.EncodeFrame(f, b); err != nil {
		b.Reset()
		f = frame.NewFrame(primitive.ProtocolVersion(version), stream,
			&message.ServerError{ErrorMessage: "sim: cannot encode response: " + err.Error()})
		if err2 := codec.EncodeFrame(f, b); err2 != nil {
			bufPool.Put(b)
			c.close()
			return
		}
	}
	select {
	case c.out <- b:
	case <-c.closed:
		bufPool.Put(b)
	}
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
		hdr, err := codec.DecodeHeader(br)
		if err != nil {
			var pv *frame.ProtocolVersionErr
			if !errors.As(err, &pv) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, net.ErrClosed) {
				// a malformed header (e.g. unknown opcode): answer, then drop the connection
				c.sendMsg(4, 0, &message.ProtocolError{ErrorMessage: "sim: cannot decode frame header: " + err.Error()}, nil)
				c.drainAndClose()
				draining = true
				return
			}
			if pv != nil {
				c.sendMsg(uint8(min(max(pv.Version, 3), 4)), 0, &message.ProtocolError{ErrorMessage: fmt.Sprintf(
					"Invalid or unsupported protocol version (%d); supported versions are (3/v3, 4/v4)", pv.Version)}, nil)
				c.drainAndClose()
				draining = true
			}
			return
		}
		if hdr.Version < primitive.ProtocolVersion3 || hdr.Version > primitive.ProtocolVersion4 {
			_ = codec.DiscardBody(hdr, br)
			c.sendMsg(uint8(min(max(hdr.Version, 3), 4)), hdr.StreamId, &message.ProtocolError{ErrorMessage: fmt.Sprintf(
				"Invalid or unsupported protocol version (%d); supported versions are (3/v3, 4/v4)", hdr.Version)}, nil)
			c.drainAndClose()
			draining = true
			return
		}
		raw, err := codec.DecodeRawBody(hdr, br)
		if err != nil {
			return
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
func (c *conn) drainAndClose() {
	select {
	case c.out <- nil:
	case <-c.closed:
	}
}

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
