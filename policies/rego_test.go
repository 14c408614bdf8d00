package policies

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/tester"
)

// minRegoTests guards against the runner silently finding nothing (a
// renamed package, a filter that drops the *_test.rego files).
const minRegoTests = 40

// TestRegoUnitTests runs the *_test.rego files next to the policies, so
// `go test` covers them without the opa binary.
func TestRegoUnitTests(t *testing.T) {
	// Only this directory's .rego files: the loader would otherwise also
	// read JSON/YAML as data and descend into subdirectories.
	onlyRego := func(_ string, info fs.FileInfo, depth int) bool {
		if info.IsDir() {
			return depth > 0
		}
		return !strings.HasSuffix(info.Name(), ".rego")
	}
	modules, store, err := tester.Load([]string{"."}, onlyRego)
	if err != nil {
		t.Fatalf("loading rego: %v", err)
	}
	ctx := context.Background()
	// Builtin errors are raised, not turned into undefined, so a policy
	// bug shows up as an error rather than a quietly passing "not" test.
	ch, err := tester.NewRunner().SetStore(store).RaiseBuiltinErrors(true).Run(ctx, modules)
	if err != nil {
		t.Fatalf("running rego tests: %v", err)
	}
	ran := 0
	for r := range ch {
		ran++
		switch {
		case r.Error != nil:
			t.Errorf("%s.%s: error: %v", r.Package, r.Name, r.Error)
		case r.Fail:
			t.Errorf("%s.%s: FAIL (%s)", r.Package, r.Name, r.Location)
		case r.Skip:
			t.Logf("%s.%s: skipped", r.Package, r.Name)
		}
	}
	if ran < minRegoTests {
		t.Errorf("ran %d rego tests, want at least %d", ran, minRegoTests)
	}
	t.Logf("ran %d rego tests", ran)
}
