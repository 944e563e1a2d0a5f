// Bound statements: a plan with its values, and the values it derives
// (column values, LIMIT, token() bounds).

package sim

import (
	"encoding/binary"
	"math"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// boundStmt is a plan with its bound values.
type boundStmt struct {
	p        *plan
	values   []*primitive.Value
	skipMeta bool
	ksession string
	version  uint8
	// result paging (paging.go): rows per page (<= 0: one page) and the
	// state returned with the previous page
	pageSize    int32
	pagingState []byte
}

// value returns the bytes of t (bound or literal) for column type dt.
func (b *boundStmt) value(t term, dt datatype.DataType, name string) ([]byte, bool, error) {
	if t.bind >= 0 {
		v := b.values[t.bind]
		switch v.Type {
		case primitive.ValueTypeNull:
			return nil, true, nil
		case primitive.ValueTypeUnset:
			return nil, false, nil
		}
		return v.Contents, true, nil
	}
	v, err := encodeLiteral(t, dt, name)
	return v, true, err
}

func (b *boundStmt) limit() (int, error) {
	v, ok, err := b.value(*b.p.st.limit, datatype.Int, "[limit]")
	if err != nil {
		return 0, err
	}
	if !ok || v == nil {
		return math.MaxInt, nil
	}
	if len(v) != 4 {
		return 0, invalidf("Invalid LIMIT value: expected a 4-byte int, got %d bytes", len(v))
	}
	l := int32(binary.BigEndian.Uint32(v))
	if l <= 0 {
		return 0, invalidf("LIMIT must be strictly positive, got %d", l)
	}
	return int(l), nil
}

// tokenBounds returns the token range of a scan from its token() relations.
func (b *boundStmt) tokenBounds() (from int64, fromEx bool, to int64, toEx bool, err error) {
	from, to = math.MinInt64, math.MaxInt64
	for _, r := range b.p.st.where {
		if !r.token {
			continue
		}
		var t int64
		if r.tokenOf {
			v, ok, verr := b.value(r.val, b.p.td.cols[b.p.td.pk].typ, r.col)
			if verr != nil {
				return 0, false, 0, false, verr
			}
			if !ok || v == nil {
				return 0, false, 0, false, invalidf("Invalid null value for token(%s)", r.col)
			}
			t = Murmur3Token(v)
		} else {
			v, ok, verr := b.value(r.val, datatype.Bigint, "partition key token")
			if verr != nil {
				return 0, false, 0, false, verr
			}
			if !ok || len(v) != 8 {
				return 0, false, 0, false, invalidf("Invalid token value: expected an 8-byte bigint")
			}
			t = int64(binary.BigEndian.Uint64(v))
		}
		switch r.op {
		case ">":
			if t > from || (t == from && !fromEx) {
				from, fromEx = t, true
			}
		case ">=":
			if t > from {
				from, fromEx = t, false
			}
		case "<":
			if t < to || (t == to && !toEx) {
				to, toEx = t, true
			}
		case "<=":
			if t < to {
				to, toEx = t, false
			}
		}
	}
	return from, fromEx, to, toEx, nil
}
