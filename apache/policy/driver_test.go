package policy

import (
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/tailroute/tailroute/internal/contract"
)

// What the tests bind to the v2 driver beyond the shared contract_test.go
// (generated from the v1 adapter's): its query and logger types.

type (
	statement    = gocql.ExecutableStatement
	driverLogger = gocql.StructuredLogger
)

type quietLogger struct{}

func (quietLogger) Error(string, ...gocql.LogField)   {}
func (quietLogger) Warning(string, ...gocql.LogField) {}
func (quietLogger) Info(string, ...gocql.LogField)    {}
func (quietLogger) Debug(string, ...gocql.LogField)   {}

// logTo is a driver logger writing every line to l.
func logTo(l *contract.Log) driverLogger { return structLog{l} }

type structLog struct{ l *contract.Log }

func (s structLog) Error(msg string, f ...gocql.LogField)   { s.l.Add(fmt.Sprint(msg, f)) }
func (s structLog) Warning(msg string, f ...gocql.LogField) { s.l.Add(fmt.Sprint(msg, f)) }
func (s structLog) Info(msg string, f ...gocql.LogField)    { s.l.Add(fmt.Sprint(msg, f)) }
func (s structLog) Debug(msg string, f ...gocql.LogField)   { s.l.Add(fmt.Sprint(msg, f)) }
