// Protocol version negotiation: what a node answers to a frame in a
// protocol version it does not serve.

package sim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// Versions the simulator serves, and the text its SUPPORTED answer and its
// version errors list them with.
const (
	minServedVersion = 3
	maxServedVersion = 4
	servedVersions   = "3/v3, 4/v4"
	// betaVersion is the protocol version Cassandra 3.11 (the
	// release_version the nodes report) serves only to clients that set
	// the USE_BETA header flag; the simulator does not implement it.
	betaVersion = 5
)

// servedVersionList is servedVersions as the SUPPORTED answer's
// PROTOCOL_VERSIONS option lists them.
var servedVersionList = strings.Split(servedVersions, ", ")

// versionRejection decides, from the start of the next frame in br, whether
// the node serves the frame's protocol version. If not, it returns the
// error frame to answer with, as Cassandra 3.11 builds it
// (org.apache.cassandra.transport Frame.Decoder and ProtocolVersion.decode),
// so drivers that negotiate by stepping down (gocql v2, the DataStax Python
// driver) find v4 by themselves:
//
//   - v1, v2 (versions Cassandra knows and no longer serves): a v1/v2
//     frame, read from the first byte alone;
//   - v5 without USE_BETA: a v5 frame with "Beta version of the protocol
//     used (5/v5-beta), but USE_BETA flag is unset", after the 9-byte
//     header; with USE_BETA, the same frame saying that the simulator does
//     not implement v5-beta;
//   - 0 and 6..127: a v5 frame (Cassandra's highest version), read from
//     the first byte alone.
//
// The answer is a ProtocolError on stream 0 (the stream id is not read, as
// in Cassandra), and the connection is closed once it is written. skip is
// the length of the rejected frame when its header could be read (v5), so
// the caller can consume it before closing. ok is false when the connection
// ended before the version could be read.
func versionRejection(br *bufio.Reader) (answer []byte, skip int64, ok bool) {
	first, err := br.Peek(1)
	if err != nil {
		return nil, 0, false
	}
	v := first[0] & 0x7f
	switch {
	case v >= minServedVersion && v <= maxServedVersion:
		return nil, 0, true
	case v == 1 || v == 2:
		return protocolErrorFrame(v, invalidVersionMessage(v)), 0, true
	case v == betaVersion:
		hdr, err := br.Peek(frameHeaderLen)
		if err != nil {
			return nil, 0, false
		}
		skip = frameHeaderLen + int64(int32(binary.BigEndian.Uint32(hdr[5:])))
		if primitive.HeaderFlag(hdr[1]).Contains(primitive.HeaderFlagUseBeta) {
			return protocolErrorFrame(v, fmt.Sprintf(
				"sim: protocol version 5/v5-beta is not implemented by the simulator; supported versions are (%s)", servedVersions)), skip, true
		}
		return protocolErrorFrame(v, "Beta version of the protocol used (5/v5-beta), but USE_BETA flag is unset"), skip, true
	default:
		return protocolErrorFrame(betaVersion, invalidVersionMessage(v)), 0, true
	}
}

func invalidVersionMessage(v byte) string {
	return fmt.Sprintf("Invalid or unsupported protocol version (%d); supported versions are (%s)", v, servedVersions)
}

// protocolErrorFrame encodes an ERROR response (code 0x000A, ProtocolError)
// on stream 0 in the given frame version: an 8-byte header with a one-byte
// stream id for v1/v2, the 9-byte header otherwise. It is written by hand
// because the frame codec does not encode v1.
func protocolErrorFrame(version byte, msg string) []byte {
	var b bytes.Buffer
	b.WriteByte(0x80 | version) // response direction
	b.WriteByte(0)              // flags
	if version <= 2 {
		b.WriteByte(0)
	} else {
		b.Write([]byte{0, 0})
	}
	b.WriteByte(byte(primitive.OpCodeError))
	body := binary.BigEndian.AppendUint32(nil, uint32(primitive.ErrorCodeProtocolError))
	body = binary.BigEndian.AppendUint16(body, uint16(len(msg)))
	body = append(body, msg...)
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
	b.Write(body)
	return b.Bytes()
}
