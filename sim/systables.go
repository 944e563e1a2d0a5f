package sim

import (
	"bytes"
	"math"
	"net"
	"sort"
	"strconv"

	"github.com/datastax/go-cassandra-native-protocol/datacodec"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// releaseVersion is what nodes report; 3.11 makes gocql read system.peers
// (not peers_v2) and system_schema.* tables.
const releaseVersion = "3.11.4"

// sysTable is a virtual system table answered from topology and schema.
type sysTable struct {
	ks, name string
	cols     []colDef
	colIdx   map[string]int
	rows     func(n *Node) [][]any // Go values in column order (nil = null)
	// pkCols and ckCols: the leading columns that are partition key and
	// clustering columns (virtual tables describe themselves with them).
	pkCols, ckCols int
}

var (
	tText      = datatype.Varchar
	tSetText   = datatype.NewSet(datatype.Varchar)
	tListText  = datatype.NewList(datatype.Varchar)
	tMapText   = datatype.NewMap(datatype.Varchar, datatype.Varchar)
	tMapBlob   = datatype.NewMap(datatype.Varchar, datatype.Blob)
	sysTables  = map[string]*sysTable{}
	codecCache = map[string]datacodec.Codec{}
)

func defSys(ks, name string, rows func(n *Node) [][]any, cols ...any) {
	t := &sysTable{ks: ks, name: name, colIdx: map[string]int{}, rows: rows}
	for i := 0; i < len(cols); i += 2 {
		dt := cols[i+1].(datatype.DataType)
		t.colIdx[cols[i].(string)] = len(t.cols)
		t.cols = append(t.cols, colDef{name: cols[i].(string), typ: dt, typName: dt.AsCql()})
		if _, ok := codecCache[dt.AsCql()]; !ok {
			c, err := datacodec.NewCodec(dt)
			if err != nil {
				panic(err)
			}
			codecCache[dt.AsCql()] = c
		}
	}
	sysTables[ks+"."+name] = t
}

func none(*Node) [][]any { return nil }

func tokenStrings(ts []int64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = strconv.FormatInt(t, 10)
	}
	return out
}

func init() {
	defSys("system", "local", localRows,
		"key", tText, "bootstrapped", tText, "broadcast_address", datatype.Inet, "cluster_name", tText,
		"cql_version", tText, "data_center", tText, "host_id", datatype.Uuid, "listen_address", datatype.Inet,
		"native_protocol_version", tText, "partitioner", tText, "rack", tText, "release_version", tText,
		"rpc_address", datatype.Inet, "schema_version", datatype.Uuid, "tokens", tSetText)
	defSys("system", "peers", peerRows,
		"peer", datatype.Inet, "data_center", tText, "host_id", datatype.Uuid, "preferred_ip", datatype.Inet,
		"rack", tText, "release_version", tText, "rpc_address", datatype.Inet, "schema_version", datatype.Uuid,
		"tokens", tSetText)
	defSys("system_schema", "keyspaces", keyspaceRows,
		"keyspace_name", tText, "durable_writes", datatype.Boolean, "replication", tMapText)
	defSys("system_schema", "tables", tableRows,
		"keyspace_name", tText, "table_name", tText, "bloom_filter_fp_chance", datatype.Double,
		"caching", tMapText, "comment", tText, "compaction", tMapText, "compression", tMapText,
		"crc_check_chance", datatype.Double, "dclocal_read_repair_chance", datatype.Double,
		"default_time_to_live", datatype.Int, "extensions", tMapBlob, "flags", tSetText,
		"gc_grace_seconds", datatype.Int, "id", datatype.Uuid, "max_index_interval", datatype.Int,
		"memtable_flush_period_in_ms", datatype.Int, "min_index_interval", datatype.Int,
		"read_repair_chance", datatype.Double, "speculative_retry", tText)
	defSys("system_schema", "columns", columnRows,
		"keyspace_name", tText, "table_name", tText, "column_name", tText, "clustering_order", tText,
		"column_name_bytes", datatype.Blob, "kind", tText, "position", datatype.Int, "type", tText)
	defSys("system_schema", "views", none,
		"keyspace_name", tText, "view_name", tText, "base_table_id", datatype.Uuid, "base_table_name", tText,
		"bloom_filter_fp_chance", datatype.Double, "caching", tMapText, "comment", tText,
		"compaction", tMapText, "compression", tMapText, "crc_check_chance", datatype.Double,
		"dclocal_read_repair_chance", datatype.Double, "default_time_to_live", datatype.Int,
		"extensions", tMapBlob, "gc_grace_seconds", datatype.Int, "id", datatype.Uuid,
		"include_all_columns", datatype.Boolean, "max_index_interval", datatype.Int,
		"memtable_flush_period_in_ms", datatype.Int, "min_index_interval", datatype.Int,
		"read_repair_chance", datatype.Double, "speculative_retry", tText, "where_clause", tText)
	defSys("system_schema", "types", none,
		"keyspace_name", tText, "type_name", tText, "field_names", tListText, "field_types", tListText)
	defSys("system_schema", "functions", none,
		"keyspace_name", tText, "function_name", tText, "argument_types", tListText,
		"argument_names", tListText, "body", tText, "called_on_null_input", datatype.Boolean,
		"language", tText, "return_type", tText)
	defSys("system_schema", "aggregates", none,
		"keyspace_name", tText, "aggregate_name", tText, "argument_types", tListText, "final_func", tText,
		"initcond", tText, "return_type", tText, "state_func", tText, "state_type", tText)
	defSys("system_schema", "indexes", none,
		"keyspace_name", tText, "table_name", tText, "index_name", tText, "kind", tText, "options", tMapText)
	defSys("system_schema", "triggers", none,
		"keyspace_name", tText, "table_name", tText, "trigger_name", tText, "options", tMapText)
}

func ipv4(s string) net.IP { return net.ParseIP(s).To4() }

func localRows(n *Node) [][]any {
	m := n.m
	return [][]any{{"local", "COMPLETED", ipv4(m.ip), n.c.clusterName, "3.4.4", m.dc, m.hostID, ipv4(m.ip),
		"4", "org.apache.cassandra.dht.Murmur3Partitioner", m.rack, releaseVersion, ipv4(m.ip),
		n.c.schema.schemaVersion(), tokenStrings(m.tokens)}}
}

func peerRows(n *Node) [][]any {
	var out [][]any
	sv := n.c.schema.schemaVersion()
	for _, m := range n.c.members {
		if m == n.m {
			continue
		}
		out = append(out, []any{ipv4(m.ip), m.dc, m.hostID, ipv4(m.ip), m.rack, releaseVersion, ipv4(m.ip),
			sv, tokenStrings(m.tokens)})
	}
	return out
}

var systemKeyspaces = []string{"system", "system_schema"}

func keyspaceRows(n *Node) [][]any {
	s := n.c.schema
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out [][]any
	for _, ks := range systemKeyspaces {
		out = append(out, []any{ks, true, map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}})
	}
	for _, name := range sortedKeys(s.keyspaces) {
		k := s.keyspaces[name]
		out = append(out, []any{k.name, k.durable, k.replication})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func tableRows(n *Node) [][]any {
	s := n.c.schema
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out [][]any
	for _, ksn := range sortedKeys(s.keyspaces) {
		k := s.keyspaces[ksn]
		for _, tn := range sortedKeys(k.tables) {
			t := k.tables[tn]
			out = append(out, []any{ksn, tn, 0.01, map[string]string{"keys": "ALL", "rows_per_partition": "NONE"},
				"", map[string]string{"class": "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"},
				map[string]string{}, 1.0, 0.1, int32(0), map[string][]byte{}, []string{"compound"},
				int32(864000), t.id, int32(2048), int32(0), int32(128), 0.0, "99PERCENTILE"})
		}
	}
	return out
}

func columnRows(n *Node) [][]any {
	s := n.c.schema
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out [][]any
	for _, ksn := range sortedKeys(s.keyspaces) {
		k := s.keyspaces[ksn]
		for _, tn := range sortedKeys(k.tables) {
			for _, c := range k.tables[tn].cols {
				out = append(out, []any{ksn, tn, c.name, "none", []byte(c.name), c.kind, int32(c.position), c.typName})
			}
		}
	}
	return out
}

// encodeRow encodes Go values of a system row.
func (t *sysTable) encodeRow(vals []any) ([][]byte, error) {
	out := make([][]byte, len(t.cols))
	for i, v := range vals {
		if v == nil {
			continue
		}
		if u, ok := v.([16]byte); ok {
			v = primitive.UUID(u)
		}
		b, err := codecCache[t.cols[i].typ.AsCql()].Encode(v, primitive.ProtocolVersion4)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (n *Node) selectSystem(b *boundStmt) message.Message {
	p := b.p
	t := p.sys
	if err := n.checkVirtual(p); err != nil {
		return errorMessage(err)
	}
	var data message.RowSet
	limit := math.MaxInt
	if p.st.limit != nil {
		l, err := b.limit()
		if err != nil {
			return errorMessage(err)
		}
		limit = l
	}
	for _, vals := range t.rows(n) {
		enc, err := t.encodeRow(vals)
		if err != nil {
			return errorMessage(err)
		}
		match := true
		for _, r := range p.st.where {
			ci := t.colIdx[r.col]
			want, _, err := b.value(r.val, t.cols[ci].typ, r.col)
			if err != nil {
				return errorMessage(err)
			}
			if !bytes.Equal(enc[ci], want) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if len(data) >= limit {
			break
		}
		if p.st.countStar {
			data = append(data, nil)
			continue
		}
		row := make(message.Row, len(p.sel))
		for i, ci := range p.sel {
			row[i] = enc[ci]
		}
		data = append(data, row)
	}
	if p.st.countStar {
		return countResult(p, len(data))
	}
	page, state, err := pageOfRows(b, data)
	if err != nil {
		return errorMessage(err)
	}
	return rowsResult(p, b, page, state)
}
