// Execution errors and the CQL error message each maps to.

package sim

import (
	"errors"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// errorMessage maps an execution error to a CQL error message.
func errorMessage(err error) message.Message {
	var se *syntaxErr
	var ie *invalidErr
	var ae *errAlreadyExists
	var ce *configErr
	var ue *unavailableErr
	var un *unauthorizedErr
	var pe *protocolErr
	switch {
	case errors.As(err, &pe):
		return &message.ProtocolError{ErrorMessage: pe.msg}
	case errors.As(err, &se):
		return &message.SyntaxError{ErrorMessage: se.msg}
	case errors.As(err, &ie):
		return &message.Invalid{ErrorMessage: ie.msg}
	case errors.As(err, &ae):
		return &message.AlreadyExists{ErrorMessage: ae.Error(), Keyspace: ae.ks, Table: ae.table}
	case errors.As(err, &ce):
		return &message.ConfigError{ErrorMessage: ce.msg}
	case errors.As(err, &un):
		return &message.Unauthorized{ErrorMessage: un.msg}
	case errors.As(err, &ue):
		return &message.Unavailable{ErrorMessage: ue.msg, Consistency: primitive.ConsistencyLevelOne, Required: 1}
	}
	return &message.ServerError{ErrorMessage: "sim: " + err.Error()}
}

type unavailableErr struct{ msg string }

func (e *unavailableErr) Error() string { return e.msg }

type unauthorizedErr struct{ msg string }

func (e *unauthorizedErr) Error() string { return e.msg }
