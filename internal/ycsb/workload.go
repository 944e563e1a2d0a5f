package ycsb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// OpType is a YCSB operation.
type OpType uint8

// Operation types, in YCSB's order.
const (
	OpRead OpType = iota
	OpUpdate
	OpInsert
	OpScan
	OpReadModifyWrite
	numOps
)

var opNames = [numOps]string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}

// String is YCSB's name for the operation ("READ", "READ-MODIFY-WRITE", …).
func (o OpType) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "OP(" + strconv.Itoa(int(o)) + ")"
}

// OpTypes returns every operation type, in YCSB's order.
func OpTypes() []OpType {
	out := make([]OpType, numOps)
	for i := range out {
		out[i] = OpType(i)
	}
	return out
}

// Field is one column value to write.
type Field struct{ Name, Value string }

// DB is what the workload drives. Implementations must be safe for
// concurrent use by all threads; slices passed in are reused after the call
// returns and must not be retained.
type DB interface {
	// Read reads one record; fields nil means all fields.
	Read(ctx context.Context, table, key string, fields []string) error
	// Update writes the given fields of one record.
	Update(ctx context.Context, table, key string, values []Field) error
	// Insert writes a new record.
	Insert(ctx context.Context, table, key string, values []Field) error
	// Scan reads count records starting at startKey (in the store's order).
	Scan(ctx context.Context, table, startKey string, count int, fields []string) error
}

// Workload is the shared, concurrency-safe state of one YCSB core workload
// (YCSB's CoreWorkload): key choosers, the insert sequence and the
// operation mix. Per-thread randomness lives in a Thread.
type Workload struct {
	cfg        Config
	fieldNames []string
	ops        Discrete[OpType]
	keyChooser Generator
	fieldLen   Generator
	scanLen    Generator
	fieldPick  Uniform
	inserts    *AcknowledgedCounter // transactioninsertkeysequence
}

// NewWorkload builds the generators for cfg exactly as YCSB's
// CoreWorkload.init does.
func NewWorkload(cfg Config) (*Workload, error) {
	w := &Workload{cfg: cfg, fieldPick: Uniform{0, int64(cfg.FieldCount - 1)}}
	for i := 0; i < cfg.FieldCount; i++ {
		w.fieldNames = append(w.fieldNames, cfg.FieldNamePrefix+strconv.Itoa(i))
	}
	w.ops.Add(cfg.ReadProportion, OpRead)
	w.ops.Add(cfg.UpdateProportion, OpUpdate)
	w.ops.Add(cfg.InsertProportion, OpInsert)
	w.ops.Add(cfg.ScanProportion, OpScan)
	w.ops.Add(cfg.ReadModifyWriteProportion, OpReadModifyWrite)
	if w.ops.Len() == 0 {
		return nil, fmt.Errorf("ycsb: every operation proportion is 0")
	}
	var err error
	switch cfg.FieldLengthDist {
	case DistConstant, "":
		w.fieldLen = Constant{int64(cfg.FieldLength)}
	case DistUniform:
		w.fieldLen = Uniform{int64(cfg.MinFieldLength), int64(cfg.FieldLength)}
	case DistZipfian:
		if w.fieldLen, err = NewZipfian(int64(cfg.MinFieldLength), int64(cfg.FieldLength), ZipfianConstant); err != nil {
			return nil, err
		}
	default:
		return nil, &PropertyError{Key: "fieldlengthdistribution", Value: cfg.FieldLengthDist, Allowed: "constant, uniform, zipfian", Reason: "unknown value"}
	}
	w.inserts = NewAcknowledgedCounter(cfg.RecordCount)
	lo, hi := cfg.InsertStart, cfg.InsertStart+cfg.InsertCount-1
	switch cfg.RequestDist {
	case DistUniform, "":
		w.keyChooser = Uniform{lo, hi}
	case DistZipfian:
		// YCSB sizes the key space for the inserts it expects (2x fudge) so
		// that the popular keys do not move as records are added.
		expected := int64(float64(cfg.OperationCount) * cfg.InsertProportion * 2)
		if w.keyChooser, err = NewScrambledZipfian(lo, cfg.InsertStart+cfg.InsertCount+expected); err != nil {
			return nil, err
		}
	case DistLatest:
		if w.keyChooser, err = NewSkewedLatest(w.inserts); err != nil {
			return nil, err
		}
	case DistHotspot:
		if w.keyChooser, err = NewHotspot(lo, hi, cfg.HotspotDataFrac, cfg.HotspotOpnFrac); err != nil {
			return nil, err
		}
	default:
		return nil, &PropertyError{Key: "requestdistribution", Value: cfg.RequestDist, Allowed: "uniform, zipfian, latest, hotspot", Reason: "unknown value"}
	}
	switch cfg.ScanLengthDist {
	case DistUniform, "":
		w.scanLen = Uniform{int64(cfg.MinScanLength), int64(cfg.MaxScanLength)}
	case DistZipfian:
		if w.scanLen, err = NewZipfian(int64(cfg.MinScanLength), int64(cfg.MaxScanLength), ZipfianConstant); err != nil {
			return nil, err
		}
	default:
		return nil, &PropertyError{Key: "scanlengthdistribution", Value: cfg.ScanLengthDist, Allowed: "uniform, zipfian", Reason: "unknown value"}
	}
	return w, nil
}

// Config returns the workload's configuration.
func (w *Workload) Config() Config { return w.cfg }

// FieldNames returns the column names, field0..field{N-1} by default.
func (w *Workload) FieldNames() []string { return append([]string(nil), w.fieldNames...) }

// KeyName is YCSB's buildKeyName: "user" + the key number (FNV-hashed
// unless inserts are ordered), left-padded with zeros to zeropadding digits.
func (w *Workload) KeyName(keynum int64) string {
	return BuildKeyName(keynum, w.cfg.ZeroPadding, w.cfg.OrderedInserts)
}

// BuildKeyName is YCSB's CoreWorkload.buildKeyName.
func BuildKeyName(keynum int64, zeroPadding int, ordered bool) string {
	if !ordered {
		keynum = FNVHash64(keynum)
	}
	var buf [4 + 64 + 20]byte
	b := append(buf[:0], "user"...)
	var num [20]byte
	digits := strconv.AppendInt(num[:0], keynum, 10)
	for i := len(digits); i < zeroPadding; i++ {
		b = append(b, '0')
	}
	b = append(b, digits...)
	return string(b)
}

// NextKeynum is YCSB's nextKeynum: a key number from the request
// distribution, redrawn while it is beyond the last acknowledged insert.
func (w *Workload) NextKeynum(r *rand.Rand) int64 {
	for {
		k := w.keyChooser.Next(r)
		if k <= w.inserts.Last() {
			return k
		}
	}
}

// NextOp draws the next transaction type from the operation mix.
func (w *Workload) NextOp(r *rand.Rand) OpType { return w.ops.Next(r) }

// randomText is the alphabet values are drawn from (printable, like YCSB's
// RandomByteIterator).
const randomText = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// Thread is one worker's private state: its random stream and reusable
// buffers. Not safe for concurrent use.
type Thread struct {
	w      *Workload
	R      *rand.Rand
	text   string
	values []Field
	one    [1]string
}

// NewThread returns a worker whose random stream is derived from seed and id.
func (w *Workload) NewThread(seed int64, id int) *Thread {
	r := rand.New(rand.NewPCG(uint64(seed), uint64(id)*0x9E3779B97F4A7C15+1))
	n := w.cfg.FieldLength*2 + 4096
	b := make([]byte, n)
	for i := range b {
		b[i] = randomText[r.IntN(len(randomText))]
	}
	return &Thread{w: w, R: r, text: string(b), values: make([]Field, 0, w.cfg.FieldCount)}
}

func (t *Thread) value() string {
	n := int(t.w.fieldLen.Next(t.R))
	off := t.R.IntN(len(t.text) - n + 1)
	return t.text[off : off+n]
}

// AllValues returns random values for every field (the buffer is reused).
func (t *Thread) AllValues() []Field {
	t.values = t.values[:0]
	for _, f := range t.w.fieldNames {
		t.values = append(t.values, Field{f, t.value()})
	}
	return t.values
}

// UpdateValues returns the values an update writes: all fields with
// writeallfields, else one random field (YCSB's buildSingleValue).
func (t *Thread) UpdateValues() []Field {
	if t.w.cfg.WriteAllFields {
		return t.AllValues()
	}
	t.values = append(t.values[:0], Field{t.w.fieldNames[t.w.fieldPick.Next(t.R)], t.value()})
	return t.values
}

// ReadFields returns nil (all fields) with readallfields, else one random field.
func (t *Thread) ReadFields() []string {
	if t.w.cfg.ReadAllFields {
		return nil
	}
	t.one[0] = t.w.fieldNames[t.w.fieldPick.Next(t.R)]
	return t.one[:]
}

// ScanLength draws a scan length.
func (t *Thread) ScanLength() int { return int(t.w.scanLen.Next(t.R)) }
