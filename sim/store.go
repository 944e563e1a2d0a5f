package sim

import (
	"sort"
	"sync"
)

// mutation is one write to a partition, applied on every replica.
// It is JSON-encodable so that process-mode nodes can forward it to peers.
type mutation struct {
	Keyspace  string     `json:"ks"`
	Table     string     `json:"table"`
	Key       []byte     `json:"key"`
	Sets      []colValue `json:"sets,omitempty"`      // upserted columns (Val nil = null)
	DeleteRow bool       `json:"deleteRow,omitempty"` // delete the whole partition
	Truncate  bool       `json:"truncate,omitempty"`  // drop all rows of the table
}

type colValue struct {
	Col int    `json:"col"`
	Val []byte `json:"val"`
}

type storedRow struct {
	token int64
	vals  [][]byte // by column position in tableDef.cols
}

type tokKey struct {
	token int64
	key   string
}

func lessTK(a, b tokKey) bool {
	if a.token != b.token {
		return a.token < b.token
	}
	return a.key < b.key
}

// tableData holds the partitions of one table on one node.
type tableData struct {
	mu   sync.RWMutex
	rows map[string]*storedRow
	idx  []tokKey // sorted by (token, key) for token-range scans
}

// store is the in-memory storage of one node.
type store struct {
	mu     sync.RWMutex
	tables map[string]*tableData // "ks.table"
}

func newStore() *store { return &store{tables: map[string]*tableData{}} }

func (s *store) table(ks, table string, create bool) *tableData {
	name := ks + "." + table
	s.mu.RLock()
	td := s.tables[name]
	s.mu.RUnlock()
	if td != nil || !create {
		return td
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if td = s.tables[name]; td == nil {
		td = &tableData{rows: map[string]*storedRow{}}
		s.tables[name] = td
	}
	return td
}

func (s *store) dropKeyspace(ks string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.tables {
		if len(name) > len(ks) && name[:len(ks)] == ks && name[len(ks)] == '.' {
			delete(s.tables, name)
		}
	}
}

func (s *store) dropTable(ks, table string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tables, ks+"."+table)
}

// apply applies m; ncols is the table's column count.
func (s *store) apply(m *mutation, ncols int) {
	if m.Truncate {
		if td := s.table(m.Keyspace, m.Table, false); td != nil {
			td.mu.Lock()
			td.rows = map[string]*storedRow{}
			td.idx = nil
			td.mu.Unlock()
		}
		return
	}
	td := s.table(m.Keyspace, m.Table, !m.DeleteRow)
	if td == nil {
		return
	}
	key := string(m.Key)
	td.mu.Lock()
	defer td.mu.Unlock()
	r := td.rows[key]
	if m.DeleteRow {
		if r != nil {
			delete(td.rows, key)
			tk := tokKey{r.token, key}
			i := sort.Search(len(td.idx), func(i int) bool { return !lessTK(td.idx[i], tk) })
			if i < len(td.idx) && td.idx[i] == tk {
				td.idx = append(td.idx[:i], td.idx[i+1:]...)
			}
		}
		return
	}
	if r == nil {
		r = &storedRow{token: Murmur3Token(m.Key), vals: make([][]byte, ncols)}
		td.rows[key] = r
		tk := tokKey{r.token, key}
		i := sort.Search(len(td.idx), func(i int) bool { return !lessTK(td.idx[i], tk) })
		td.idx = append(td.idx, tokKey{})
		copy(td.idx[i+1:], td.idx[i:])
		td.idx[i] = tk
	}
	for _, cv := range m.Sets {
		if cv.Col >= 0 && cv.Col < len(r.vals) {
			if cv.Val == nil {
				r.vals[cv.Col] = nil
			} else {
				r.vals[cv.Col] = append([]byte(nil), cv.Val...)
			}
		}
	}
}

// get returns a snapshot of the row values of key, or nil.
func (s *store) get(ks, table string, key []byte) [][]byte {
	td := s.table(ks, table, false)
	if td == nil {
		return nil
	}
	td.mu.RLock()
	defer td.mu.RUnlock()
	r := td.rows[string(key)]
	if r == nil {
		return nil
	}
	// Values are never mutated in place (apply stores fresh copies), so a
	// copy of the outer slice is a consistent snapshot.
	return append([][]byte(nil), r.vals...)
}

// scan returns up to limit rows with token >= from (or > from when
// exclusive), in token order, without wrapping around the ring.
func (s *store) scan(ks, table string, from int64, exclusive bool, limit int) []*storedRow {
	td := s.table(ks, table, false)
	if td == nil || limit <= 0 {
		return nil
	}
	td.mu.RLock()
	defer td.mu.RUnlock()
	i := sort.Search(len(td.idx), func(i int) bool {
		if exclusive {
			return td.idx[i].token > from
		}
		return td.idx[i].token >= from
	})
	var out []*storedRow
	for ; i < len(td.idx) && len(out) < limit; i++ {
		r := td.rows[td.idx[i].key]
		out = append(out, &storedRow{token: r.token, vals: append([][]byte(nil), r.vals...)})
	}
	return out
}
