package speculative

import (
	"context"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// What the tests bind to the v2 driver beyond the shared contract_test.go
// (generated from the v1 adapter's).

// scan runs q and scans its one text column; with h, the execution is
// armed (Hedger.Arm).
func scan(q *gocql.Query, h *Hedger) (f string, err error) {
	ctx := context.Background()
	if h != nil {
		ctx = h.Arm(ctx, q)
	}
	err = q.ScanContext(ctx, &f)
	return f, err
}

type quietLogger struct{}

func (quietLogger) Error(string, ...gocql.LogField)   {}
func (quietLogger) Warning(string, ...gocql.LogField) {}
func (quietLogger) Info(string, ...gocql.LogField)    {}
func (quietLogger) Debug(string, ...gocql.LogField)   {}
