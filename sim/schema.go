package sim

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/datastax/go-cassandra-native-protocol/datatype"
)

// colDef is a column of a user table.
type colDef struct {
	name     string
	typName  string
	typ      datatype.DataType
	kind     string // "partition_key" | "clustering" | "regular"
	position int
}

// tableDef is a user table: one partition-key column plus regular columns.
type tableDef struct {
	keyspace string
	name     string
	cols     []colDef
	colIdx   map[string]int
	pk       int // index in cols of the partition key
	id       [16]byte
}

type keyspaceDef struct {
	name        string
	replication map[string]string
	durable     bool
	strat       strategy
	replicas    *replicaMap
	tables      map[string]*tableDef
}

// schema is the cluster's schema. In-process all nodes share one; across
// processes each node holds a copy kept equal by forwarding DDL to peers.
type schema struct {
	mu        sync.RWMutex
	keyspaces map[string]*keyspaceDef
	version   [16]byte
	ring      *ring
}

func newSchema(r *ring) *schema {
	s := &schema{keyspaces: map[string]*keyspaceDef{}, ring: r}
	s.recomputeVersion()
	return s
}

// recomputeVersion derives schema_version from the schema content so that
// independent processes with the same schema report the same version.
// Caller holds mu (or is the constructor).
func (s *schema) recomputeVersion() {
	var b strings.Builder
	names := make([]string, 0, len(s.keyspaces))
	for n := range s.keyspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ks := s.keyspaces[n]
		fmt.Fprintf(&b, "ks %s %v %v;", n, sortedMap(ks.replication), ks.durable)
		tn := make([]string, 0, len(ks.tables))
		for t := range ks.tables {
			tn = append(tn, t)
		}
		sort.Strings(tn)
		for _, t := range tn {
			fmt.Fprintf(&b, "t %s", t)
			for _, c := range ks.tables[t].cols {
				fmt.Fprintf(&b, " %s:%s:%s", c.name, c.typName, c.kind)
			}
			b.WriteString(";")
		}
	}
	s.version = nameUUID("schema:" + b.String())
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + ",")
	}
	return b.String()
}

// nameUUID returns a version-3 (name based, MD5) UUID.
func nameUUID(name string) [16]byte {
	u := md5.Sum([]byte(name))
	u[6] = (u[6] & 0x0f) | 0x30
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}

func uuidString(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (s *schema) keyspace(name string) *keyspaceDef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keyspaces[name]
}

func (s *schema) table(ks, name string) *tableDef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k := s.keyspaces[ks]
	if k == nil {
		return nil
	}
	return k.tables[name]
}

func (s *schema) schemaVersion() [16]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.version
}

// replicasOf returns the ring member indexes that replicate token in ks.
func (s *schema) replicasOf(ks string, token int64) []int {
	s.mu.RLock()
	k := s.keyspaces[ks]
	s.mu.RUnlock()
	if k == nil || k.replicas == nil {
		return nil
	}
	return k.replicas.lookup(token)
}

// errAlreadyExists reports a CREATE of an existing keyspace or table.
type errAlreadyExists struct{ ks, table string }

func (e *errAlreadyExists) Error() string {
	if e.table == "" {
		return fmt.Sprintf("Cannot add existing keyspace %q", e.ks)
	}
	return fmt.Sprintf("Object '%s.%s' already exists", e.ks, e.table)
}

// invalidErr is a semantic error answered as a CQL Invalid error.
type invalidErr struct{ msg string }

func (e *invalidErr) Error() string { return e.msg }

func invalidf(format string, args ...any) error { return &invalidErr{fmt.Sprintf(format, args...)} }

// applyDDL applies a CREATE/DROP statement. changed is false when nothing
// changed (IF [NOT] EXISTS).
func (s *schema) applyDDL(st *statement, sessionKS string) (changed bool, ks, table string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st.kind {
	case stCreateKeyspace:
		ks = st.keyspace
		if isSystemKeyspace(ks) {
			return false, ks, "", invalidf("cannot create system keyspace %q", ks)
		}
		if s.keyspaces[ks] != nil {
			if st.ifNotExists {
				return false, ks, "", nil
			}
			return false, ks, "", &errAlreadyExists{ks: ks}
		}
		strat, perr := parseStrategy(st.replication)
		if perr != nil {
			return false, ks, "", &configErr{perr.Error()}
		}
		repl := map[string]string{}
		for k, v := range st.replication {
			repl[k] = v
		}
		repl["class"] = "org.apache.cassandra.locator." + strat.class
		s.keyspaces[ks] = &keyspaceDef{name: ks, replication: repl, durable: st.durable, strat: strat,
			replicas: strat.replicaMap(s.ring), tables: map[string]*tableDef{}}
	case stCreateTable:
		ks = st.keyspace
		if ks == "" {
			ks = sessionKS
		}
		table = st.table
		if ks == "" {
			return false, ks, table, invalidf("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename")
		}
		k := s.keyspaces[ks]
		if k == nil {
			return false, ks, table, invalidf("Keyspace %s does not exist", ks)
		}
		if k.tables[table] != nil {
			if st.ifNotExists {
				return false, ks, table, nil
			}
			return false, ks, table, &errAlreadyExists{ks: ks, table: table}
		}
		td, terr := buildTable(ks, st)
		if terr != nil {
			return false, ks, table, terr
		}
		k.tables[table] = td
	case stDropKeyspace:
		ks = st.keyspace
		if s.keyspaces[ks] == nil {
			if st.ifExists {
				return false, ks, "", nil
			}
			return false, ks, "", &configErr{fmt.Sprintf("Cannot drop non existing keyspace '%s'.", ks)}
		}
		delete(s.keyspaces, ks)
	case stDropTable:
		ks = st.keyspace
		if ks == "" {
			ks = sessionKS
		}
		table = st.table
		k := s.keyspaces[ks]
		if k == nil || k.tables[table] == nil {
			if st.ifExists {
				return false, ks, table, nil
			}
			return false, ks, table, invalidf("Table '%s.%s' doesn't exist", ks, table)
		}
		delete(k.tables, table)
	default:
		return false, "", "", invalidf("not a schema statement")
	}
	s.recomputeVersion()
	return true, ks, table, nil
}

// configErr is answered as a CQL ConfigError.
type configErr struct{ msg string }

func (e *configErr) Error() string { return e.msg }

func isSystemKeyspace(ks string) bool {
	return ks == "system" || ks == "system_schema" || ks == "system_auth" || ks == "system_distributed" || ks == "system_traces" ||
		virtualKeyspaces[ks]
}

func buildTable(ks string, st *statement) (*tableDef, error) {
	if len(st.primaryKey) != 1 {
		return nil, invalidf("composite partition keys are not supported by the simulator (got %d columns, allowed 1)", len(st.primaryKey))
	}
	if len(st.clustering) > 0 {
		return nil, invalidf("clustering columns are not supported by the simulator (got %v)", st.clustering)
	}
	td := &tableDef{keyspace: ks, name: st.table, colIdx: map[string]int{}, pk: -1,
		id: nameUUID("table:" + ks + "." + st.table)}
	for _, c := range st.colSpecs {
		if _, dup := td.colIdx[c.name]; dup {
			return nil, invalidf("Multiple definition of identifier %s", c.name)
		}
		dt, err := parseType(c.typ)
		if err != nil {
			return nil, err
		}
		cd := colDef{name: c.name, typName: c.typ, typ: dt, kind: "regular", position: -1}
		if c.name == st.primaryKey[0] {
			cd.kind = "partition_key"
			cd.position = 0
			td.pk = len(td.cols)
		}
		td.colIdx[c.name] = len(td.cols)
		td.cols = append(td.cols, cd)
	}
	if td.pk < 0 {
		return nil, invalidf("Unknown definition %s referenced in PRIMARY KEY", st.primaryKey[0])
	}
	return td, nil
}

var simpleTypes = map[string]datatype.DataType{
	"text": datatype.Varchar, "varchar": datatype.Varchar, "ascii": datatype.Ascii,
	"int": datatype.Int, "bigint": datatype.Bigint, "boolean": datatype.Boolean,
	"double": datatype.Double, "float": datatype.Float, "blob": datatype.Blob,
	"uuid": datatype.Uuid, "timeuuid": datatype.Timeuuid, "timestamp": datatype.Timestamp,
	"counter": datatype.Counter, "smallint": datatype.Smallint, "tinyint": datatype.Tinyint,
}

func parseType(t string) (datatype.DataType, error) {
	if dt, ok := simpleTypes[t]; ok {
		return dt, nil
	}
	return nil, invalidf("unsupported column type %q (supported: text, varchar, ascii, int, bigint, boolean, double, float, blob, uuid, timeuuid, timestamp, smallint, tinyint)", t)
}

// encodeLiteral converts a literal term to the wire bytes of dt.
func encodeLiteral(t term, dt datatype.DataType, col string) ([]byte, error) {
	if t.null {
		return nil, nil
	}
	bad := func() error {
		return invalidf("Invalid literal %q for column %s of type %s", t.lit, col, dt.AsCql())
	}
	switch dt.Code() {
	case datatype.Varchar.Code(), datatype.Ascii.Code():
		if t.litKind != tkString {
			return nil, bad()
		}
		return []byte(t.lit), nil
	case datatype.Int.Code(), datatype.Bigint.Code(), datatype.Counter.Code(), datatype.Timestamp.Code(),
		datatype.Smallint.Code(), datatype.Tinyint.Code():
		if t.litKind != tkNumber {
			return nil, bad()
		}
		v, err := strconv.ParseInt(t.lit, 10, 64)
		if err != nil {
			return nil, bad()
		}
		switch dt.Code() {
		case datatype.Int.Code():
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, bad()
			}
			return binary.BigEndian.AppendUint32(nil, uint32(v)), nil
		case datatype.Smallint.Code():
			return binary.BigEndian.AppendUint16(nil, uint16(v)), nil
		case datatype.Tinyint.Code():
			return []byte{byte(v)}, nil
		}
		return binary.BigEndian.AppendUint64(nil, uint64(v)), nil
	case datatype.Boolean.Code():
		if t.litKind != tkIdent {
			return nil, bad()
		}
		if t.lit == "true" {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case datatype.Double.Code(), datatype.Float.Code():
		if t.litKind != tkNumber {
			return nil, bad()
		}
		f, err := strconv.ParseFloat(t.lit, 64)
		if err != nil {
			return nil, bad()
		}
		if dt.Code() == datatype.Float.Code() {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
	case datatype.Blob.Code():
		if t.litKind != tkHex {
			return nil, bad()
		}
		b, err := hex.DecodeString(t.lit)
		if err != nil {
			return nil, bad()
		}
		return b, nil
	}
	return nil, bad()
}
