package sim

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	gocql2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// respFrame is a response frame read byte by byte, in any protocol version
// (the codec decodes neither v1 nor v6+).
type respFrame struct {
	version byte // without the direction bit
	stream  int16
	opcode  primitive.OpCode
	body    []byte
	raw     []byte // the whole frame
}

// readRespFrame reads one response frame: an 8-byte header with a one-byte
// stream id for v1/v2, 9 bytes otherwise.
func readRespFrame(br *bufio.Reader) (respFrame, error) {
	first, err := br.ReadByte()
	if err != nil {
		return respFrame{}, err
	}
	if first&0x80 == 0 {
		return respFrame{}, errors.New("frame without the response direction bit")
	}
	f := respFrame{version: first & 0x7f}
	hdr := make([]byte, 8)
	if f.version <= 2 {
		hdr = hdr[:7]
	}
	if _, err := io.ReadFull(br, hdr); err != nil {
		return respFrame{}, err
	}
	rest := hdr[2:] // after flags and a one-byte stream id
	f.stream = int16(int8(hdr[1]))
	if f.version > 2 {
		f.stream = int16(binary.BigEndian.Uint16(hdr[1:]))
		rest = hdr[3:]
	}
	f.opcode = primitive.OpCode(rest[0])
	n := binary.BigEndian.Uint32(rest[1:])
	if n > 1<<20 {
		return respFrame{}, errors.New("response body longer than 1 MiB")
	}
	f.body = make([]byte, n)
	if _, err := io.ReadFull(br, f.body); err != nil {
		return respFrame{}, err
	}
	f.raw = append(append([]byte{first}, hdr...), f.body...)
	return f, nil
}

// protocolErrorMessage returns the message of an ERROR frame with code
// ProtocolError, or fails the test.
func (f respFrame) protocolErrorMessage(t *testing.T) string {
	t.Helper()
	require.Equal(t, primitive.OpCodeError, f.opcode, "opcode")
	require.GreaterOrEqual(t, len(f.body), 6)
	require.Equal(t, uint32(primitive.ErrorCodeProtocolError), binary.BigEndian.Uint32(f.body), "error code")
	n := int(binary.BigEndian.Uint16(f.body[4:]))
	require.Equal(t, 6+n, len(f.body), "body length")
	return string(f.body[6:])
}

// TestVersionNegotiationFrames sends OPTIONS in every kind of protocol
// version and checks the answer against Cassandra 3.11's (the release the
// nodes report): v3/v4 are served; v1/v2 get a ProtocolError in their own
// version; v5 gets the USE_BETA error in v5; unknown versions get the
// invalid-version error in v5. Rejections are on stream 0 and end the
// connection.
func TestVersionNegotiationFrames(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}})
	const invalid = "; supported versions are (3/v3, 4/v4)"
	for _, tc := range []struct {
		name         string
		first, flags byte
		wantVersion  byte
		wantMsg      string // "" = served
	}{
		{"v3", 3, 0, 3, ""},
		{"v4", 4, 0, 4, ""},
		{"v1", 1, 0, 1, "Invalid or unsupported protocol version (1)" + invalid},
		{"v2", 2, 0, 2, "Invalid or unsupported protocol version (2)" + invalid},
		{"v5", 5, 0, 5, "Beta version of the protocol used (5/v5-beta), but USE_BETA flag is unset"},
		{"v5-beta", 5, byte(primitive.HeaderFlagUseBeta), 5,
			"sim: protocol version 5/v5-beta is not implemented by the simulator; supported versions are (3/v3, 4/v4)"},
		{"v6", 6, 0, 5, "Invalid or unsupported protocol version (6)" + invalid},
		{"v0", 0, 0, 5, "Invalid or unsupported protocol version (0)" + invalid},
		{"garbage", 0x7f, 0, 5, "Invalid or unsupported protocol version (127)" + invalid},
		{"DSE v2", 0x42, 0, 5, "Invalid or unsupported protocol version (66)" + invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, c)
			// OPTIONS on stream 5 with an empty body, in a 9-byte header
			// whatever the version (what drivers send when probing)
			_, err := r.nc.Write([]byte{tc.first, tc.flags, 0, 5, byte(primitive.OpCodeOptions), 0, 0, 0, 0})
			require.NoError(t, err)
			f, err := readRespFrame(r.br)
			require.NoError(t, err)
			assert.Equal(t, tc.wantVersion, f.version, "frame version")
			if tc.wantMsg == "" {
				assert.Equal(t, int16(5), f.stream)
				assert.Equal(t, primitive.OpCodeSupported, f.opcode)
				return
			}
			assert.Equal(t, int16(0), f.stream, "stream")
			assert.Equal(t, tc.wantMsg, f.protocolErrorMessage(t))
			_, err = r.br.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "the server closes the connection after the error")
		})
	}
}

// TestServedVersionsAfterRejection checks that a rejected v5 frame with a
// body is consumed before the connection closes, and that a new connection
// in v4 is then served.
func TestServedVersionsAfterRejection(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}})
	r := dialRaw(t, c)
	r.send(primitive.ProtocolVersion5, 3, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	f, err := readRespFrame(r.br)
	require.NoError(t, err)
	assert.Equal(t, byte(5), f.version)
	assert.Contains(t, f.protocolErrorMessage(t), "USE_BETA flag is unset")

	r = dialRaw(t, c)
	r.send(primitive.ProtocolVersion4, 3, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	got := r.recv()
	assert.IsType(t, &message.Ready{}, got.Body.Message)
	assert.Equal(t, frame.Header{IsResponse: true, Version: primitive.ProtocolVersion4, StreamId: 3, OpCode: primitive.OpCodeReady},
		*got.Header)
}

// TestDriversNegotiateVersion connects both Go drivers with no protocol
// version set: gocql v1.7.0 starts at v4, cassandra-gocql-driver v2.1.2
// starts at v5 and must step down to v4 on the node's answer; both then
// read a row.
func TestDriversNegotiateVersion(t *testing.T) {
	c := startCluster(t, Config{Nodes: 3, Model: ServiceModel{ZeroService: true}})
	createYCSB(t, c, "ycsb", "{'class':'SimpleStrategy','replication_factor':2}", 1)
	s := newSession(t, c, "ycsb", true)
	require.NoError(t, s.Query("INSERT INTO usertable (y_id, field0) VALUES (?, ?)", "k1", "v1").Exec())

	t.Run("gocql-v1", func(t *testing.T) {
		cl := gocql.NewCluster(c.Hosts()...)
		cl.Port = c.Port()
		cl.Keyspace = "ycsb"
		cl.ConnectTimeout = 10 * time.Second
		require.Zero(t, cl.ProtoVersion)
		s, err := cl.CreateSession()
		require.NoError(t, err)
		defer s.Close()
		var v string
		require.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k1").Scan(&v))
		assert.Equal(t, "v1", v)
	})
	t.Run("gocql-v2", func(t *testing.T) {
		cl := gocql2.NewCluster(c.Hosts()...)
		cl.Port = c.Port()
		cl.Keyspace = "ycsb"
		cl.ConnectTimeout = 10 * time.Second
		cl.Logger = quietV2Logger{}
		versions := &versionRecorder{}
		cl.FrameHeaderObserver = versions
		require.Zero(t, cl.ProtoVersion)
		s, err := cl.CreateSession()
		require.NoError(t, err)
		defer s.Close()
		var v string
		require.NoError(t, s.Query("SELECT field0 FROM usertable WHERE y_id = ?", "k1").Scan(&v))
		assert.Equal(t, "v1", v)
		first, last := versions.firstLast()
		assert.Equal(t, byte(5), first, "the driver's first frame came back in v5 (its first try)")
		assert.Equal(t, byte(4), last, "the session runs on v4")
	})
}

type quietV2Logger struct{}

func (quietV2Logger) Error(string, ...gocql2.LogField)   {}
func (quietV2Logger) Warning(string, ...gocql2.LogField) {}
func (quietV2Logger) Info(string, ...gocql2.LogField)    {}
func (quietV2Logger) Debug(string, ...gocql2.LogField)   {}

// versionRecorder records the protocol versions of the frames a v2 session
// receives.
type versionRecorder struct {
	mu          sync.Mutex
	first, last byte
}

func (r *versionRecorder) ObserveFrameHeader(_ context.Context, h gocql2.ObservedFrameHeader) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := byte(h.Version) & 0x7f
	if r.first == 0 {
		r.first = v
	}
	r.last = v
}

func (r *versionRecorder) firstLast() (byte, byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, r.last
}
