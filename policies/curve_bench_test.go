package policies

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/lakegate/lakegate/duration"
)

// curveSizes are the rule, principal or group counts of BenchmarkDecideCurve.
var curveSizes = []int{10, 100, 1_000, 10_000}

// curvePolicy is one way a policy grows with the organisation it serves:
// src is the policy for n principals (or rules, or groups), in is the
// request of one of them that the policy allows.
type curvePolicy struct {
	name, pkg string
	src       func(n int) string
	in        func(n int) Input
}

// rulePerEntry builds a policy of n rules, rule i being format with i
// in both of its verbs, and the shared tail.
func rulePerEntry(format string) func(n int) string {
	return func(n int) string {
		var s strings.Builder
		s.WriteString("package lakegate.curve\n")
		for i := range n {
			fmt.Fprintf(&s, format, i, i)
		}
		s.WriteString(curveTail)
		return s.String()
	}
}

// curveTail is the shared tail of the generated policies: a decision from
// the role the principal holds on the request's first-level namespace.
const curveTail = `
read_ops := {"getConfig", "listNamespaces", "loadNamespaceMetadata", "listTables", "loadTable", "tableExists"}

allowed if role == "writer"

allowed if {
	role == "reader"
	input.operation in read_ops
}

decision := {"allow": true, "reason": sprintf("%s may %s", [role, input.operation])} if {
	allowed
} else := {"allow": false, "reason": "no grant"}
`

var curvePolicies = []curvePolicy{
	{
		// A data document: principal -> namespace -> role, one object
		// (lakegate loads .rego files only, so the document is a rule's
		// value, as a generated policy would hold it), three grants each.
		name: "principals", pkg: "lakegate.curve",
		src: func(n int) string {
			var s strings.Builder
			s.WriteString("package lakegate.curve\n\ngrants := {\n")
			for i := range n {
				fmt.Fprintf(&s, "\t\"p%d\": {\"ns%d\": \"reader\", \"ns%d\": \"writer\", \"shared\": \"reader\"},\n", i, i%50, (i+1)%50)
			}
			s.WriteString("}\n\nrole := grants[input.principal.id][input.resource.namespace[0]]\n")
			s.WriteString(curveTail)
			return s.String()
		},
		in: func(n int) Input {
			return request(fmt.Sprintf("p%d", n/2), nil, "loadTable", fmt.Sprintf("ns%d", (n/2)%50))
		},
	},
	{
		// One rule per principal, on equalities with the input: what OPA's
		// rule index can look up instead of trying each rule.
		name: "rules", pkg: "lakegate.curve",
		src: rulePerEntry("\nrole := \"reader\" if {\n\tinput.principal.id == \"p%d\"\n\tinput.resource.namespace[0] == \"ns%d\"\n}\n"),
		in: func(n int) Input {
			return request(fmt.Sprintf("p%d", n/2), nil, "loadTable", fmt.Sprintf("ns%d", n/2))
		},
	},
	{
		// One rule per group, on a membership test and a namespace prefix
		// (a grant on a subtree).
		name: "group-rules", pkg: "lakegate.curve",
		src: rulePerEntry("\nrole := \"reader\" if {\n\t\"team-%d\" in input.principal.groups\n\tstartswith(concat(\".\", input.resource.namespace), \"ns%d.\")\n}\n"),
		in: func(n int) Input {
			return request("u", []string{"staff", fmt.Sprintf("team-%d", n/2)}, "loadTable", fmt.Sprintf("ns%d", n/2), "eu")
		},
	},
	{
		// One rule per service account pattern, by regular expression: a
		// condition OPA's rule index cannot look into (it can equalities,
		// `in`, startswith, endswith and glob.match), so the rules are
		// tried in turn until one matches, half of them here.
		name: "regex-rules", pkg: "lakegate.curve",
		src: rulePerEntry("\nrole := \"reader\" if {\n\tregex.match(`^svc-%d-[a-z]+$`, input.principal.id)\n\tregex.match(`^ns%d(\\.|$)`, concat(\".\", input.resource.namespace))\n}\n"),
		in: func(n int) Input {
			return request(fmt.Sprintf("svc-%d-etl", n/2), nil, "loadTable", fmt.Sprintf("ns%d", n/2), "eu")
		},
	},
	{
		// The shipped roles policy, for a principal holding n groups (the
		// one that grants is the last): the policy stays, the input grows.
		name: "roles-groups", pkg: "lakegate.roles",
		in: func(n int) Input {
			groups := make([]string, n)
			for i := range groups[:n-1] {
				groups[i] = fmt.Sprintf("reader:ns%d", i)
			}
			groups[n-1] = "reader:sales"
			return request("u", groups, "loadTable", "sales", "eu")
		},
	},
}

// curveInputs numbers the inputs of every run, so the engines' memos,
// which outlive a run, never hold a decision asked for.
var curveInputs atomic.Int64

// curveEngines keeps each engine built once per process (Go runs a
// sub-benchmark more than once), with the time its load took.
var curveEngines = struct {
	sync.Mutex
	m map[string]curveEngine
}{m: map[string]curveEngine{}}

type curveEngine struct {
	e    *Engine
	load time.Duration
}

// BenchmarkDecideCurve: the cost of a first (memo-missing) decision as a
// policy grows from 10 to 10,000 principals, rules or groups (see
// curvePolicies). Names are <policy>/n=<count>; "load-ns" is what
// loading (parsing, compiling, preparing, checking) the policy took, once.
func BenchmarkDecideCurve(b *testing.B) {
	ctx := context.Background()
	b.Cleanup(func() {
		curveEngines.Lock()
		defer curveEngines.Unlock()
		for k, ce := range curveEngines.m {
			_ = ce.e.Close()
			delete(curveEngines.m, k)
		}
	})
	for _, p := range curvePolicies {
		for _, n := range curveSizes {
			b.Run(fmt.Sprintf("%s/n=%d", p.name, n), func(b *testing.B) {
				ce := curveEngineFor(b, p, n)
				in := p.in(n)
				tables := make([]string, b.N)
				for i := range tables {
					// never a name an earlier run of this engine saw
					tables[i] = fmt.Sprintf("t%d", curveInputs.Add(1))
				}
				lat := make([]time.Duration, b.N)
				memo := ce.e.set.Load().memo
				before := memo.Len()
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					in.Resource.Table = tables[i] // a new input: never a memo hit
					start := time.Now()
					d, err := ce.e.Decide(ctx, in)
					lat[i] = time.Since(start)
					if err != nil || !d.Allow {
						b.Fatalf("decision %+v, %v", d, err)
					}
				}
				b.StopTimer()
				if got, want := memo.Len(), min(before+b.N, memoSize); got != want {
					b.Fatalf("memo holds %d decisions, want %d: some were hits", got, want)
				}
				reportPercentiles(b, lat)
				b.ReportMetric(float64(ce.load.Nanoseconds()), "load-ns")
			})
		}
	}
}

func curveEngineFor(b *testing.B, p curvePolicy, n int) curveEngine {
	key := fmt.Sprintf("%s/%d", p.name, n)
	curveEngines.Lock()
	defer curveEngines.Unlock()
	if ce, ok := curveEngines.m[key]; ok {
		return ce
	}
	dir := "."
	if p.src != nil {
		dir = policyDir(b, p.src(n))
	}
	cfg := Config{Dir: dir, Package: p.pkg, Timeout: duration.Duration(slowMachine), ReloadInterval: -1}
	start := time.Now()
	e, err := New(context.Background(), cfg, zap.NewNop())
	load := time.Since(start)
	require.NoError(b, err)
	ce := curveEngine{e, load}
	curveEngines.m[key] = ce
	return ce
}
