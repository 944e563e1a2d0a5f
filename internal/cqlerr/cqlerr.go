// Package cqlerr sorts the errors of a CQL attempt into what tailroute's
// rules need, for both driver adapters: the tracker outcome of an attempt
// (Classify), whether an error says something about the host (IsHostError,
// the hedger's error holdoff) and whether a server-load poll can never
// succeed on a host (PollPermanent). It imports no Cassandra driver: the
// drivers' error codes are the protocol's (native_protocol_v4.spec,
// section 9), and each function is generic over the driver's RequestError
// interface (an error with Code() int); the drivers' sentinel errors are
// passed in.
package cqlerr

import (
	"context"
	"errors"

	"github.com/tailroute/tailroute/internal/track"
)

// Error codes of the CQL native protocol (section 9 of the spec), as both
// drivers define them.
const (
	CodeServer        = 0x0000
	CodeUnavailable   = 0x1000
	CodeOverloaded    = 0x1001
	CodeBootstrapping = 0x1002
	CodeWriteTimeout  = 0x1100
	CodeReadTimeout   = 0x1200
	CodeReadFailure   = 0x1300
	CodeWriteFailure  = 0x1500
	CodeSyntax        = 0x2000
	CodeUnauthorized  = 0x2100
	CodeInvalid       = 0x2200
	// codeRequestEnd ends the request errors (syntax, unauthorized,
	// invalid, config, already exists, unprepared: 0x2000-0x25ff).
	codeRequestEnd = 0x2600
)

// RequestError is what the drivers' RequestError interfaces have in common.
type RequestError interface {
	error
	Code() int
}

// Sentinels are a driver's sentinel errors.
type Sentinels struct {
	NotFound   error // ErrNotFound: no row
	NoResponse error // ErrTimeoutNoResponse: the client-side timeout
}

// Classify maps an attempt's error to a tracker outcome (RE is the
// driver's RequestError interface):
//
//	nil, NotFound, request errors of the query itself
//	  (syntax, invalid, unauthorized, config, already exists,
//	  unprepared: codes 0x2000-0x25ff)                        Success
//	context cancelled or expired (caller gave up, speculative
//	  loser), or any error once ctx is done                   Cancelled
//	other server errors (overloaded, unavailable,
//	  bootstrapping, read/write timeout or failure, server)   Failure
//	NoResponse, connection errors, anything else              Lost
func Classify[RE RequestError](ctx context.Context, err error, s Sentinels) track.Outcome {
	if err == nil || err == s.NotFound {
		return track.Success
	}
	if err == context.Canceled || err == context.DeadlineExceeded ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		(ctx != nil && ctx.Err() != nil) {
		return track.Cancelled
	}
	if err == s.NoResponse {
		return track.Lost
	}
	var re RE
	if errors.As(err, &re) {
		if c := re.Code(); c >= CodeSyntax && c < codeRequestEnd {
			return track.Success
		}
		return track.Failure
	}
	return track.Lost
}

// IsHostError says whether err says something about the host (overload,
// timeout, connection trouble) rather than about the request: false for
// nil, a cancelled or expired context, notFound and request errors; true
// for the server errors Unavailable, Overloaded, Bootstrapping, read/write
// timeout or failure and Server, and for any error that is not a
// RequestError (connection errors, client timeouts).
func IsHostError[RE RequestError](err, notFound error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, notFound) {
		return false
	}
	var re RE
	if errors.As(err, &re) {
		switch re.Code() {
		case CodeServer, CodeUnavailable, CodeOverloaded,
			CodeBootstrapping, CodeWriteTimeout, CodeReadTimeout,
			CodeReadFailure, CodeWriteFailure:
			return true
		}
		return false
	}
	return true
}

// PollPermanent says whether a server-load poll that failed with err will
// never succeed on the host: the table does not exist (Invalid, Syntax:
// Cassandra before 4.0 has no system_views) or the role may not read it
// (Unauthorized).
func PollPermanent[RE RequestError](err error) bool {
	var re RE
	if errors.As(err, &re) {
		c := re.Code()
		return c == CodeInvalid || c == CodeUnauthorized || c == CodeSyntax
	}
	return false
}
