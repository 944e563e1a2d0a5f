package policy

import (
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/assert"
	"github.com/tailroute/tailroute/internal/cqlerr"
)

// TestErrorCodesMatchDriver pins the protocol's error codes that
// internal/cqlerr classifies by to this driver's.
func TestErrorCodesMatchDriver(t *testing.T) {
	assert.Equal(t,
		[]int{gocql.ErrCodeServer, gocql.ErrCodeUnavailable, gocql.ErrCodeOverloaded, gocql.ErrCodeBootstrapping,
			gocql.ErrCodeWriteTimeout, gocql.ErrCodeReadTimeout, gocql.ErrCodeReadFailure, gocql.ErrCodeWriteFailure,
			gocql.ErrCodeSyntax, gocql.ErrCodeUnauthorized, gocql.ErrCodeInvalid, gocql.ErrCodeUnprepared + 0x100},
		[]int{cqlerr.CodeServer, cqlerr.CodeUnavailable, cqlerr.CodeOverloaded, cqlerr.CodeBootstrapping,
			cqlerr.CodeWriteTimeout, cqlerr.CodeReadTimeout, cqlerr.CodeReadFailure, cqlerr.CodeWriteFailure,
			cqlerr.CodeSyntax, cqlerr.CodeUnauthorized, cqlerr.CodeInvalid, 0x2600})
}
