package policies

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/duration"
)

// A deterministic policy's decisions are memoized by input; a reloaded
// policy starts with an empty memo, so its own answers are used at once.
func TestMemoFollowsReloads(t *testing.T) {
	ctx := context.Background()
	dir := policyDir(t, "package t\n\ndecision := {\"allow\": true, \"reason\": \"v1\"}\n")
	e, err := New(ctx, Config{Dir: dir, Package: "t", Timeout: duration.Duration(slowMachine), ReloadInterval: -1}, zap.NewNop())
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close() })
	require.NotNil(t, e.set.Load().memo, "a deterministic policy is memoized")

	in := request("u", nil, "loadTable", "sales")
	for range 3 {
		d, err := e.Decide(ctx, in)
		require.NoError(t, err)
		assert.Equal(t, "v1", d.Reason)
	}
	assert.Equal(t, 1, e.set.Load().memo.Len(), "one input, one entry")

	writePolicy(t, dir, "policy.rego", "package t\n\ndecision := {\"allow\": false, \"reason\": \"v2\"}\n")
	require.NoError(t, e.reload(ctx))
	d, err := e.Decide(ctx, in)
	require.NoError(t, err)
	assert.False(t, d.Allow)
	assert.Equal(t, "v2", d.Reason, "no memoized v1 answer survives the reload")

	other := in
	other.Resource.Table = "other"
	_, err = e.Decide(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, 2, e.set.Load().memo.Len(), "another input is another entry")
}

// Policies that call non-deterministic builtins are never memoized.
func TestNoMemoForNondeterministicPolicies(t *testing.T) {
	for name, src := range map[string]string{
		"time.now_ns in a rule": "package t\n\nnow := time.now_ns()\n\ndecision := {\"allow\": now > 0}\n",
		"rand in a body":        "package t\n\ndecision := {\"allow\": true} if {\n\trand.intn(\"x\", 10) >= 0\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := policyDir(t, src)
			e, err := New(context.Background(), Config{Dir: dir, Package: "t", Timeout: duration.Duration(slowMachine), ReloadInterval: -1}, zap.NewNop())
			require.NoError(t, err)
			t.Cleanup(func() { _ = e.Close() })
			assert.Nil(t, e.set.Load().memo)
			d, err := e.Decide(context.Background(), request("u", nil, "loadTable", "sales"))
			require.NoError(t, err)
			assert.True(t, d.Allow)
		})
	}
}

// BenchmarkDecideRolesUncached evaluates a new input every time (the
// memo never hits): the cost of a first decision. Table names are made
// before timing starts, and the memo's size at the end proves that every
// decision was a miss: each one added an entry.
func BenchmarkDecideRolesUncached(b *testing.B) {
	e := newEngine(b, "lakegate.roles")
	ctx := context.Background()
	in := request("bench", []string{"staff", "reader:finance", "writer:sales"}, "loadTable", "sales", "eu")
	tables := make([]string, b.N)
	for i := range tables {
		tables[i] = fmt.Sprintf("t%d", i)
	}
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in.Resource.Table = tables[i]
		start := time.Now()
		d, err := e.Decide(ctx, in)
		lat[i] = time.Since(start)
		if err != nil || !d.Allow {
			b.Fatalf("decision %+v, %v", d, err)
		}
	}
	b.StopTimer()
	if got, want := e.set.Load().memo.Len(), min(b.N, memoSize); got != want {
		b.Fatalf("memo holds %d decisions after %d distinct inputs, want %d: some were hits", got, b.N, want)
	}
	reportPercentiles(b, lat)
}
