// Data execution: SELECT, INSERT, UPDATE, DELETE and TRUNCATE on user tables,
// run by the workers of the node executing them (see forward.go).

package sim

import (
	"encoding/binary"
	"math"

	"github.com/datastax/go-cassandra-native-protocol/message"
)

// execData executes a data statement on this node: its coordinator or the
// replica a non-replica coordinator forwarded a read to.
func (n *Node) execData(b *boundStmt) message.Message {
	p := b.p
	st := p.st
	td := p.td
	c := n.c
	switch st.kind {
	case stSelect:
		limit := math.MaxInt
		if st.limit != nil {
			l, err := b.limit()
			if err != nil {
				return errorMessage(err)
			}
			limit = l
		}
		var rows [][][]byte
		if p.keyRel >= 0 {
			r := st.where[p.keyRel]
			key, ok, err := b.value(r.val, td.cols[td.pk].typ, r.col)
			if err != nil {
				return errorMessage(err)
			}
			if !ok || key == nil {
				return &message.Invalid{ErrorMessage: "Invalid null value in condition for column " + r.col}
			}
			vals, err := n.readRow(p.ks, td, key)
			if err != nil {
				return errorMessage(err)
			}
			if vals != nil && limit > 0 {
				rows = append(rows, vals)
			}
		} else {
			from, fromEx, to, toEx, err := b.tokenBounds()
			if err != nil {
				return errorMessage(err)
			}
			if b.pageSize > 0 && !st.countStar {
				return n.scanPage(b, from, fromEx, to, toEx, limit)
			}
			sr, err := n.scanRows(p.ks, td, from, fromEx, limit)
			if err != nil {
				return errorMessage(err)
			}
			for _, r := range sr {
				if r.token > to || (toEx && r.token == to) {
					break
				}
				rows = append(rows, r.vals)
			}
		}
		if st.countStar {
			return countResult(p, len(rows))
		}
		return rowsResult(p, b, project(p, rows), nil)
	case stInsert, stUpdate, stDelete:
		m := &mutation{Keyspace: p.ks, Table: td.name}
		var err error
		switch st.kind {
		case stInsert:
			for i, name := range st.columns {
				ci := td.colIdx[name]
				v, ok, verr := b.value(st.values[i], td.cols[ci].typ, name)
				if verr != nil {
					return errorMessage(verr)
				}
				if ci == td.pk {
					m.Key = v
					continue
				}
				if ok {
					m.Sets = append(m.Sets, colValue{Col: ci, Val: v})
				}
			}
		case stUpdate:
			r := st.where[p.keyRel]
			m.Key, _, err = b.value(r.val, td.cols[td.pk].typ, r.col)
			for _, a := range st.sets {
				ci := td.colIdx[a.col]
				v, ok, verr := b.value(a.val, td.cols[ci].typ, a.col)
				if verr != nil {
					return errorMessage(verr)
				}
				if ok {
					m.Sets = append(m.Sets, colValue{Col: ci, Val: v})
				}
			}
		case stDelete:
			r := st.where[p.keyRel]
			m.Key, _, err = b.value(r.val, td.cols[td.pk].typ, r.col)
			if len(st.columns) == 0 {
				m.DeleteRow = true
			}
			for _, name := range st.columns {
				m.Sets = append(m.Sets, colValue{Col: td.colIdx[name], Val: nil})
			}
		}
		if err != nil {
			return errorMessage(err)
		}
		if m.Key == nil {
			return &message.Invalid{ErrorMessage: "Invalid null value for partition key part " + td.cols[td.pk].name}
		}
		if err := n.write(m, len(td.cols)); err != nil {
			return errorMessage(err)
		}
		return &message.VoidResult{}
	case stTruncate:
		m := &mutation{Keyspace: p.ks, Table: td.name, Truncate: true}
		for _, mb := range c.members {
			if err := c.applyOn(mb, m, len(td.cols)); err != nil {
				return errorMessage(err)
			}
		}
		return &message.VoidResult{}
	}
	return &message.ServerError{ErrorMessage: "sim: unsupported data statement"}
}

func countResult(p *plan, n int) message.Message {
	v := binary.BigEndian.AppendUint64(nil, uint64(n))
	return &message.RowsResult{Metadata: &message.RowsMetadata{ColumnCount: 1, Columns: p.result}, Data: message.RowSet{{v}}}
}

// rowsResult answers rows; pagingState is non-nil when more pages follow.
func rowsResult(p *plan, b *boundStmt, data message.RowSet, pagingState []byte) message.Message {
	md := &message.RowsMetadata{ColumnCount: int32(len(p.result)), Columns: p.result, PagingState: pagingState}
	if b.skipMeta {
		md = &message.RowsMetadata{ColumnCount: int32(len(p.result)), PagingState: pagingState}
	}
	return &message.RowsResult{Metadata: md, Data: data}
}
