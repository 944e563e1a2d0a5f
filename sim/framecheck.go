package sim

import (
	"encoding/binary"
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/frame"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// frameHeaderLen is the size of a v3/v4 frame header.
const frameHeaderLen = 9

// DefaultMaxFrameSize is Cassandra's native_transport_max_frame_size
// default (16 MiB since 4.0): a request frame longer than this, header
// included, is answered with a ProtocolError and its body is skipped.
const DefaultMaxFrameSize = 16 << 20

// checkBodyLengths walks a v3/v4 request body and checks that every
// length-prefixed field fits in the bytes that remain. The codec allocates
// a field's declared length before reading it, so without this check a
// 20-byte QUERY declaring a 2 GiB query string would allocate 2 GiB.
// Fields are only measured here; DecodeBody does the decoding.
func checkBodyLengths(hdr *frame.Header, body []byte) error {
	w := &lenWalker{b: body}
	if hdr.Flags.Contains(primitive.HeaderFlagCustomPayload) {
		n := w.short("custom payload size")
		for i := 0; i < n && w.err == nil; i++ {
			w.skip(w.short("custom payload key"), "custom payload key")
			w.bytesField("custom payload value")
		}
	}
	switch hdr.OpCode {
	case primitive.OpCodeQuery:
		w.skip(w.int32("query string"), "query string")
		w.queryParams()
	case primitive.OpCodePrepare:
		w.skip(w.int32("query string"), "query string")
	case primitive.OpCodeExecute:
		w.skip(w.short("prepared id"), "prepared id")
		w.queryParams()
	case primitive.OpCodeBatch:
		w.skip(1, "batch type")
		n := w.short("batch size")
		for i := 0; i < n && w.err == nil; i++ {
			kind := w.byte("batch child kind")
			if kind == 0 {
				w.skip(w.int32("batch query string"), "batch query string")
			} else {
				w.skip(w.short("batch prepared id"), "batch prepared id")
			}
			nv := w.short("batch values count")
			for j := 0; j < nv && w.err == nil; j++ {
				w.value()
			}
		}
	case primitive.OpCodeAuthResponse:
		w.bytesField("auth token")
	}
	return w.err
}

// lenWalker reads protocol lengths from a body; the first problem sticks
// in err and makes every later step a no-op.
type lenWalker struct {
	b   []byte
	err error
}

func (w *lenWalker) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *lenWalker) skip(n int, field string) {
	if w.err != nil {
		return
	}
	if n < 0 || n > len(w.b) {
		w.fail("%s declares %d bytes, %d remain in the frame", field, n, len(w.b))
		return
	}
	w.b = w.b[n:]
}

func (w *lenWalker) byte(field string) byte {
	if w.err != nil {
		return 0
	}
	if len(w.b) < 1 {
		w.fail("%s: frame body truncated", field)
		return 0
	}
	v := w.b[0]
	w.b = w.b[1:]
	return v
}

func (w *lenWalker) short(field string) int {
	if w.err != nil {
		return 0
	}
	if len(w.b) < 2 {
		w.fail("%s: frame body truncated", field)
		return 0
	}
	v := binary.BigEndian.Uint16(w.b)
	w.b = w.b[2:]
	return int(v)
}

func (w *lenWalker) int32(field string) int {
	if w.err != nil {
		return 0
	}
	if len(w.b) < 4 {
		w.fail("%s: frame body truncated", field)
		return 0
	}
	v := int32(binary.BigEndian.Uint32(w.b))
	w.b = w.b[4:]
	return int(v)
}

// bytesField is [bytes]: an int length (negative = null) and that many bytes.
func (w *lenWalker) bytesField(field string) {
	if n := w.int32(field); n > 0 {
		w.skip(n, field)
	}
}

// value is [value]: [bytes] where -1 is null and -2 unset.
func (w *lenWalker) value() {
	n := w.int32("bound value")
	switch {
	case n >= 0:
		w.skip(n, "bound value")
	case n == -1 || n == -2:
	default:
		w.fail("bound value length %d is invalid", n)
	}
}

// queryParams walks <consistency><flags>[values][page size][paging state]...
// far enough to measure the values and the paging state.
func (w *lenWalker) queryParams() {
	w.skip(2, "consistency")
	flags := w.byte("query flags")
	named := flags&0x40 != 0
	if flags&0x01 != 0 {
		n := w.short("values count")
		for i := 0; i < n && w.err == nil; i++ {
			if named {
				w.skip(w.short("value name"), "value name")
			}
			w.value()
		}
	}
	if flags&0x04 != 0 {
		w.skip(4, "page size")
	}
	if flags&0x08 != 0 {
		w.bytesField("paging state")
	}
}
