package policies

import (
	"context"
	"slices"
	"testing"
	"time"
)

func BenchmarkDecideRoles(b *testing.B) {
	e := newEngine(b, "lakegate.roles")
	ctx := context.Background()
	in := request("bench", []string{"staff", "reader:finance", "writer:sales"}, "loadTable", "sales", "eu")
	lat := make([]time.Duration, b.N) // allocated before timing starts
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		d, err := e.Decide(ctx, in)
		lat[i] = time.Since(start)
		if err != nil || !d.Allow {
			b.Fatalf("decision %+v, %v", d, err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func BenchmarkFilterRoles(b *testing.B) {
	e := newEngine(b, "lakegate.roles")
	ctx := context.Background()
	in := request("bench", []string{"reader:sales", "reader:hr"}, "listTables", "sales")
	nss := []string{"sales", "finance", "sales.eu", "hr", "ops"}
	for i := range 100 {
		in.Items = append(in.Items, page(nss[i%len(nss)])...)
	}
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		vis, err := e.Filter(ctx, in)
		lat[i] = time.Since(start)
		if err != nil || len(vis) != 100 || !vis[0] || vis[1] {
			b.Fatalf("visible %v, %v", vis, err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// reportPercentiles adds latency percentiles to ns/op, which is a mean and
// hides the tail a request path cares about.
func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}

// BenchmarkDecideAllowAll is the engine's own cost: input conversion,
// evaluation setup and result reading around a policy that decides nothing.
func BenchmarkDecideAllowAll(b *testing.B) {
	e := newEngine(b, "lakegate.allow_all")
	ctx := context.Background()
	in := request("bench", []string{"staff"}, "loadTable", "sales", "eu")
	b.ReportAllocs()
	for b.Loop() {
		if d, err := e.Decide(ctx, in); err != nil || !d.Allow {
			b.Fatalf("decision %+v, %v", d, err)
		}
	}
}
