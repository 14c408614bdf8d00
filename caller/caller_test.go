package caller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFrom(t *testing.T) {
	assert.Equal(t, Caller{Principal: "anonymous"}, From(context.Background()))
	ctx := With(context.Background(), Caller{Principal: "alice", Authorization: "Bearer x"})
	assert.Equal(t, Caller{Principal: "alice", Authorization: "Bearer x"}, From(ctx))
	assert.Equal(t, "anonymous", From(With(ctx, Caller{Authorization: "Bearer y"})).Principal, "the latest value wins whole")
}
