package sim

import (
	"encoding/binary"
	"math"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// Result paging (protocol v3/v4): a request's page size (QueryOptions
// PageSize > 0) caps the rows of one RESULT; when more rows follow, the
// result carries a paging state, and the same statement sent with that
// state continues after the last row returned. count(*) answers one row
// and is never paged; a partition-key lookup returns at most one row.
//
// Paging states are opaque to clients and made here as:
//
//	token scan:   'T' | token int64 | rows left under LIMIT int64 | partition key bytes
//	system table: 'O' | offset of the next row int64
//
// A token scan resumes after (token, key) of the last row sent, in the
// scan's (token, key) order, so rows written or deleted between pages
// neither repeat nor shift the others; a system-table page resumes at a
// row offset. A malformed state is answered with a ProtocolError, as
// Cassandra does.

type protocolErr struct{ msg string }

func (e *protocolErr) Error() string { return e.msg }

var errBadPagingState = &protocolErr{"Invalid value for the paging state"}

type scanCursor struct {
	token     int64
	remaining int64
	key       string
}

func (s scanCursor) encode() []byte {
	b := make([]byte, 17, 17+len(s.key))
	b[0] = 'T'
	binary.BigEndian.PutUint64(b[1:], uint64(s.token))
	binary.BigEndian.PutUint64(b[9:], uint64(s.remaining))
	return append(b, s.key...)
}

func decodeScanCursor(b []byte) (scanCursor, error) {
	if len(b) < 17 || b[0] != 'T' {
		return scanCursor{}, errBadPagingState
	}
	c := scanCursor{token: int64(binary.BigEndian.Uint64(b[1:])),
		remaining: int64(binary.BigEndian.Uint64(b[9:])), key: string(b[17:])}
	if c.remaining <= 0 {
		return scanCursor{}, errBadPagingState
	}
	return c, nil
}

func encodeOffset(off int) []byte {
	b := make([]byte, 9)
	b[0] = 'O'
	binary.BigEndian.PutUint64(b[1:], uint64(off))
	return b
}

func decodeOffset(b []byte) (int, error) {
	if len(b) != 9 || b[0] != 'O' {
		return 0, errBadPagingState
	}
	off := binary.BigEndian.Uint64(b[1:])
	if off > math.MaxInt32 {
		return 0, errBadPagingState
	}
	return int(off), nil
}

// pageOfRows pages an already computed system-table result.
func pageOfRows(b *boundStmt, data message.RowSet) (message.RowSet, []byte, error) {
	if b.pageSize <= 0 {
		return data, nil, nil
	}
	off := 0
	if len(b.pagingState) > 0 {
		var err error
		if off, err = decodeOffset(b.pagingState); err != nil {
			return nil, nil, err
		}
	}
	if off > len(data) {
		off = len(data)
	}
	end := off + int(b.pageSize)
	if end >= len(data) {
		return data[off:], nil, nil
	}
	return data[off:end], encodeOffset(end), nil
}

// project builds result rows from stored rows (values by table column).
func project(p *plan, rows [][][]byte) message.RowSet {
	data := make(message.RowSet, len(rows))
	for i, vals := range rows {
		row := make(message.Row, len(p.sel))
		for j, ci := range p.sel {
			if ci < len(vals) {
				row[j] = vals[ci]
			}
		}
		data[i] = row
	}
	return data
}

// scanPage answers one page of a token-range scan of [from, to] (bounds
// exclusive when fromEx/toEx) under LIMIT limit.
func (n *Node) scanPage(b *boundStmt, from int64, fromEx bool, to int64, toEx bool, limit int) message.Message {
	p := b.p
	pk := p.td.pk
	remaining := int64(limit)
	var after *scanCursor
	if len(b.pagingState) > 0 {
		cur, err := decodeScanCursor(b.pagingState)
		if err != nil {
			return errorMessage(err)
		}
		if cur.remaining < remaining {
			remaining = cur.remaining
		}
		if cur.token > from || (cur.token == from && !fromEx) {
			from, fromEx = cur.token, false
		}
		after = &cur
	}
	want := int(min(int64(b.pageSize), remaining))
	var rows []*storedRow
	// fetch past the cursor's own token: rows sharing it that were already
	// sent are skipped, so ask for more when they took the room
	for fetch := want + 1; ; fetch *= 2 {
		sr, err := n.scanRows(p.ks, p.td, from, fromEx, fetch)
		if err != nil {
			return errorMessage(err)
		}
		rows = rows[:0]
		bounded := false
		for _, r := range sr {
			if r.token > to || (toEx && r.token == to) {
				bounded = true
				break
			}
			if after != nil && r.token == after.token && string(r.vals[pk]) <= after.key {
				continue
			}
			rows = append(rows, r)
		}
		if len(sr) < fetch || bounded || len(rows) > want || fetch > math.MaxInt32 {
			break
		}
	}
	var state []byte
	if len(rows) > want {
		rows = rows[:want]
		if left := remaining - int64(want); left > 0 {
			last := rows[want-1]
			state = scanCursor{token: last.token, remaining: left, key: string(last.vals[pk])}.encode()
		}
	}
	vals := make([][][]byte, len(rows))
	for i, r := range rows {
		vals[i] = r.vals
	}
	return rowsResult(p, b, project(p, vals), state)
}
