package speculative

import "github.com/gocql/gocql"

// What the tests bind to gocql v1 beyond the shared contract_test.go.

// scan runs q and scans its one text column. With gocql v1 an execution
// needs nothing of h: the Hedger's Pick arms it.
func scan(q *gocql.Query, _ *Hedger) (f string, err error) {
	err = q.Scan(&f)
	return f, err
}

type quietLogger struct{}

func (quietLogger) Print(...any)          {}
func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}
