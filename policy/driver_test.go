package policy

import (
	"fmt"

	"github.com/gocql/gocql"

	"github.com/tailroute/tailroute/internal/contract"
)

// What the tests bind to gocql v1 beyond the shared contract_test.go: its
// query and logger types.

type (
	statement    = gocql.ExecutableQuery
	driverLogger = gocql.StdLogger
)

type quietLogger struct{}

func (quietLogger) Print(...any)          {}
func (quietLogger) Printf(string, ...any) {}
func (quietLogger) Println(...any)        {}

// logTo is a driver logger writing every line to l.
func logTo(l *contract.Log) driverLogger { return stdLog{l} }

type stdLog struct{ l *contract.Log }

func (s stdLog) Print(v ...any)            { s.l.Add(fmt.Sprint(v...)) }
func (s stdLog) Printf(f string, v ...any) { s.l.Add(fmt.Sprintf(f, v...)) }
func (s stdLog) Println(v ...any)          { s.l.Add(fmt.Sprintln(v...)) }
