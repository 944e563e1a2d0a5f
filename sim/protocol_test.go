package sim

import (
	"bufio"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type rawClient struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, c *Cluster) *rawClient {
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(c.Hosts()[0], fmt.Sprint(c.Port())), time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawClient) send(v primitive.ProtocolVersion, stream int16, m message.Message) {
	require.NoError(r.t, codec.EncodeFrame(frame.NewFrame(v, stream, m), r.nc))
}

func (r *rawClient) recv() *frame.Frame {
	f, err := codec.DecodeFrame(r.br)
	require.NoError(r.t, err)
	return f
}

func TestEveryRequestGetsAnAnswer(t *testing.T) {
	c := startCluster(t, Config{Nodes: 1, Model: ServiceModel{ZeroService: true}})
	r := dialRaw(t, c)
	v4 := primitive.ProtocolVersion4
	r.send(v4, 1, &message.Options{})
	f := r.recv()
	require.IsType(t, &message.Supported{}, f.Body.Message)
	assert.EqualValues(t, 1, f.Header.StreamId)

	r.send(v4, 2, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4"}})
	assert.IsType(t, &message.ProtocolError{}, r.recv().Body.Message, "compression refused")
	r.send(v4, 3, &message.Startup{Options: map[string]string{"CQL_VERSION": "3.0.0"}})
	assert.IsType(t, &message.Ready{}, r.recv().Body.Message)

	cases := []struct {
		m    message.Message
		want message.Message
	}{
		{&message.AuthResponse{Token: []byte("x")}, &message.ProtocolError{}},
		{&message.Batch{Children: []*message.BatchChild{{Query: "INSERT INTO x (a) VALUES (1)"}}}, &message.Invalid{}},
		{&message.Execute{QueryId: []byte{1, 2, 3}, Options: &message.QueryOptions{}}, &message.Unprepared{}},
		{&message.Query{Query: "SELECT * FROM system.nosuch", Options: &message.QueryOptions{}}, &message.Invalid{}},
		{&message.Query{Query: "SELECT * FROM system.peers_v2", Options: &message.QueryOptions{}}, &message.Invalid{}},
		{&message.Query{Query: "DROP TABLE ks.t", Options: &message.QueryOptions{}}, &message.Invalid{}},
		{&message.Query{Query: "INSERT INTO system.local (key) VALUES ('x')", Options: &message.QueryOptions{}}, &message.Unauthorized{}},
		{&message.Query{Query: "USE nosuchks", Options: &message.QueryOptions{}}, &message.Invalid{}},
		{&message.Query{Query: "\x00\x01", Options: &message.QueryOptions{}}, &message.SyntaxError{}},
		{&message.Prepare{Query: "SELECT * FROM ks.t WHERE"}, &message.SyntaxError{}},
		{&message.Query{Query: "SELECT key FROM system.local WHERE key = ?", Options: &message.QueryOptions{}}, &message.Invalid{}}, // missing value
	}
	for i, tc := range cases {
		stream := int16(10 + i)
		r.send(v4, stream, tc.m)
		f := r.recv()
		assert.EqualValues(t, stream, f.Header.StreamId)
		assert.IsType(t, tc.want, f.Body.Message, "%v -> %v", tc.m, f.Body.Message)
	}

	// a body that does not decode: answered on its stream, connection kept
	hdr := &frame.Header{Version: v4, StreamId: 77, OpCode: primitive.OpCodeQuery}
	require.NoError(t, codec.EncodeRawFrame(&frame.RawFrame{Header: hdr, Body: []byte{0, 0, 0, 9, 'x'}}, r.nc))
	f = r.recv()
	assert.EqualValues(t, 77, f.Header.StreamId)
	assert.IsType(t, &message.ProtocolError{}, f.Body.Message)
	r.send(v4, 78, &message.Options{})
	assert.IsType(t, &message.Supported{}, r.recv().Body.Message)
}
