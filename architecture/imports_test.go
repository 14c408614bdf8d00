package architecture

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/lakegate/lakegate/"

// imports lists every lakegate package with the imports of its non-test
// files, from `go list`.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"...").Output()
	require.NoError(t, err)
	pkgs := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p.Imports
	}
	return pkgs
}

func under(pkg, folder string) bool { return pkg == folder || strings.HasPrefix(pkg, folder+"/") }

// The rules of ARCHITECTURE.md, each as: which packages, which imports
// they must not have.
func TestImportRules(t *testing.T) {
	pkgs := imports(t)
	require.Contains(t, pkgs, "modules/gateway", "go list saw the module")
	leaves := []string{"upstream/icerest", "upstream/locations", "cache", "cache/replay", "translate/schema",
		"translate/sharing/hints", "translate/sharing/fileurl", "duration", "caller", "apierror", "internal/jsonenc", "internal/jsonscan", "internal/redisurl",
		"internal/parquetcheck", "internal/parquetcheck/parquetchecktest", "internal/strictjson", "telemetry"}
	for pkg, imps := range pkgs {
		for _, imp := range imps {
			lg := strings.TrimPrefix(imp, module)
			own := strings.HasPrefix(imp, module)
			switch {
			case lg == "modules/gateway" && !inCaddy(pkg):
				t.Errorf("%s imports modules/gateway: only caddy/ may", pkg)
			case strings.HasPrefix(imp, "github.com/caddyserver/caddy") && pkg != "modules/gateway" && !inCaddy(pkg):
				t.Errorf("%s imports Caddy (%s): only modules/gateway and caddy/ may", pkg, imp)
			case under(pkg, "translate") && own && (lg == "upstream" || under(lg, "upstream/embedded")):
				t.Errorf("%s imports %s: translators reach catalogs only through translate.Pipelines", pkg, lg)
			case (under(pkg, "upstream") || under(pkg, "cache") || pkg == "identity" || pkg == "policies") &&
				own && under(lg, "translate"):
				t.Errorf("%s imports %s: the pipeline and its parts never depend on the translators", pkg, lg)
			case under(pkg, "upstream/embedded") && lg == "upstream":
				t.Errorf("%s imports upstream: the embedded catalog is a backend like any other", pkg)
			case slices.Contains(leaves, pkg) && own && lg != "duration" && lg != "apierror" && !under(lg, "internal"):
				t.Errorf("%s imports %s: it is a leaf (ARCHITECTURE.md)", pkg, lg)
			}
		}
	}
}

// inCaddy reports the binary's packages: caddy/ and its module list.
func inCaddy(pkg string) bool { return pkg == "caddy" || strings.HasPrefix(pkg, "caddy/") }
