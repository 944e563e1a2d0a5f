package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// frameSeeds are request byte streams for FuzzFrameDecoder: well-formed
// sessions (the frames gocql and the Python driver send) and the hostile
// or broken inputs the server must answer without a panic, a hang, a huge
// allocation or a frame on a stream nobody asked on.
func frameSeeds(tb testing.TB) [][]byte {
	enc := func(frames ...*frame.Frame) []byte {
		var b bytes.Buffer
		for _, f := range frames {
			if err := codec.EncodeFrame(f, &b); err != nil {
				tb.Fatal(err)
			}
		}
		return b.Bytes()
	}
	hdr := func(version, flags byte, stream int16, op primitive.OpCode, bodyLen int32, body ...byte) []byte {
		h := []byte{version, flags, 0, 0, byte(op), 0, 0, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(stream))
		binary.BigEndian.PutUint32(h[5:], uint32(bodyLen))
		return append(h, body...)
	}
	startup := frame.NewFrame(v4, 1, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	q := func(stream int16, cql string, opts *message.QueryOptions) *frame.Frame {
		if opts == nil {
			opts = &message.QueryOptions{}
		}
		return frame.NewFrame(v4, stream, &message.Query{Query: cql, Options: opts})
	}
	withPayload := q(9, "SELECT * FROM system.local", nil)
	withPayload.SetCustomPayload(map[string][]byte{"k": []byte("v")})
	traced := enc(startup, q(2, "SELECT * FROM system.local", nil))
	traced[len(enc(startup))+1] |= byte(primitive.HeaderFlagTracing)
	return [][]byte{
		enc(frame.NewFrame(v4, 0, &message.Options{})),
		enc(startup, q(2, "SELECT * FROM system.local", nil), q(3, "SELECT * FROM system.peers", nil)),
		enc(startup, frame.NewFrame(v4, 2, &message.Register{EventTypes: []primitive.EventType{
			primitive.EventTypeStatusChange, primitive.EventTypeSchemaChange}})),
		enc(startup, q(2, "SELECT * FROM ycsb.usertable WHERE y_id = 'k'", nil),
			q(3, "INSERT INTO ycsb.usertable (y_id, field0) VALUES (?, ?)", &message.QueryOptions{
				PositionalValues: []*primitive.Value{primitive.NewValue([]byte("k")), primitive.NewValue([]byte("v"))}}),
			q(4, "SELECT y_id FROM ycsb.usertable", &message.QueryOptions{PageSize: 2}),
			q(5, "SELECT y_id FROM ycsb.usertable", &message.QueryOptions{PageSize: 2, PagingState: []byte("T")})),
		enc(startup, frame.NewFrame(v4, 2, &message.Prepare{Query: "SELECT field0 FROM ycsb.usertable WHERE y_id = ?"}),
			frame.NewFrame(v4, 3, &message.Execute{QueryId: []byte("0123456789abcdef"), Options: &message.QueryOptions{}})),
		enc(startup, frame.NewFrame(v4, 2, &message.Batch{Children: []*message.BatchChild{{Query: "INSERT INTO ycsb.usertable (y_id) VALUES ('a')"}}})),
		enc(frame.NewFrame(primitive.ProtocolVersion3, 4, &message.Options{}), q(5, "USE ycsb", nil)),
		enc(startup, withPayload),
		traced,
		hdr(4, 0, 7, primitive.OpCodeQuery, 0x7fffffff),                             // declares 2 GiB
		hdr(4, 0, 7, primitive.OpCodeQuery, -1),                                     // negative length
		hdr(4, 0, 8, primitive.OpCodeQuery, 5, 0x7f, 0xff, 0xff, 0xff, 'x'),         // 2 GiB query string
		hdr(4, 0, 8, primitive.OpCodeAuthResponse, 4, 0x7f, 0xff, 0xff, 0xff),       // 2 GiB token
		hdr(4, byte(primitive.HeaderFlagCompressed), 3, primitive.OpCodeOptions, 0), // compressed
		hdr(4, 0, 3, primitive.OpCode(0x55), 0),                                     // unknown opcode
		hdr(4, 0, 3, primitive.OpCodeResult, 0),                                     // response opcode
		hdr(0x84, 0, 3, primitive.OpCodeOptions, 0),                                 // response direction
		hdr(5, 0, 3, primitive.OpCodeOptions, 0),                                    // v5
		hdr(2, 0, 3, primitive.OpCodeOptions, 0),                                    // v2
		hdr(1, 0, 3, primitive.OpCodeOptions, 0),                                    // v1
		hdr(5, byte(primitive.HeaderFlagUseBeta), 3, primitive.OpCodeOptions, 0),    // v5-beta
		hdr(0x42, 0, 3, primitive.OpCodeOptions, 0),                                 // DSE v2
		{0x7f}, // garbage
		hdr(4, 0, 3, primitive.OpCodeQuery, 20, 0, 0, 0, 2), // truncated body
		{4, 0, 0}, // truncated header
	}
}

// FuzzFrameDecoder writes arbitrary bytes to a node as a client would and
// checks what comes back: every frame decodes as a v3/v4 response, is on
// a stream the input used (or 0 for a fatal header error, -1 for events),
// or is a version rejection (a v1, v2 or v5 ProtocolError on stream 0),
// and the server finishes the connection once the client has sent
// everything. The seed corpus runs with every `go test`; fuzz longer with
//
//	go test -run '^$' -fuzz FuzzFrameDecoder -fuzztime 5m ./sim/
func FuzzFrameDecoder(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c, err := Start(ctx, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}, MaxFrameSize: 4096, DownDelay: -1})
	cancel()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Close() })
	for _, q := range []string{
		"CREATE KEYSPACE ycsb WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
		"CREATE TABLE ycsb.usertable (y_id text PRIMARY KEY, field0 text)",
	} {
		st, err := parseStatement(q)
		if err != nil {
			f.Fatal(err)
		}
		if msg := c.execDDL(st, q, "", false); isErrorMsg(msg) {
			f.Fatal(msg)
		}
	}
	addr := net.JoinHostPort(c.Hosts()[0], strconv.Itoa(c.Port()))
	f.Fuzz(func(t *testing.T, in []byte) {
		streams := requestStreams(in)
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		go func() {
			nc.Write(in)
			nc.(*net.TCPConn).CloseWrite()
		}()
		br := bufio.NewReader(nc)
		for {
			resp, err := readRespFrame(br)
			if err != nil {
				var ne net.Error
				switch {
				case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed), isReset(err):
					return // the server closed the connection: done
				case errors.As(err, &ne) && ne.Timeout():
					t.Fatalf("the server neither answered nor closed within 10s")
				default:
					t.Fatalf("unreadable response: %v", err)
				}
			}
			if resp.version < 3 || resp.version > 4 {
				// a version rejection: a ProtocolError on stream 0, in v1,
				// v2 or v5, and the connection ends
				if resp.version == 0 || resp.version > 5 || resp.stream != 0 {
					t.Fatalf("bad version rejection %+v", resp)
				}
				resp.protocolErrorMessage(t)
				continue
			}
			fr, err := codec.DecodeFrame(bytes.NewReader(resp.raw))
			if err != nil {
				t.Fatalf("undecodable response: %v", err)
			}
			h, msg := fr.Header, fr.Body.Message
			if !h.IsResponse {
				t.Fatalf("bad response header %v", h)
			}
			if h.StreamId != 0 && h.StreamId != -1 && !streams[h.StreamId] {
				t.Fatalf("response on stream %d, which no request used: %v", h.StreamId, msg)
			}
		}
	})
}

// requestStreams returns the stream ids of the frame headers in a request
// byte stream, as far as it parses (v1/v2 headers have a 1-byte stream id
// and end the connection).
func requestStreams(in []byte) map[int16]bool {
	out := map[int16]bool{}
	for len(in) >= 3 {
		if in[0]&0x7f < 3 {
			out[int16(int8(in[2]))] = true
			break
		}
		if len(in) < 9 {
			break
		}
		out[int16(binary.BigEndian.Uint16(in[2:]))] = true
		n := int64(int32(binary.BigEndian.Uint32(in[5:])))
		if n < 0 || n > int64(len(in)-9) {
			break
		}
		in = in[9+n:]
	}
	return out
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && !oe.Timeout()
}
