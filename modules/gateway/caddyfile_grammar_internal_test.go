package gateway

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

var update = flag.Bool("update", false, "rewrite testdata/grammar.json from testdata/grammar.Caddyfile")

// grammarDirectives are the lakegate directives: the blocks the grammar
// starts from. Every other block is reached through an option of one.
var grammarDirectives = []string{"lakegate", "lakegate_iceberg", "lakegate_delta", "lakegate_sharing"}

// blockUse is what the adapt of a Caddyfile used of one block table.
type blockUse struct {
	what string
	opts []string
	used map[string]bool
}

// Every option of every block of the Caddyfile grammar has a JSON twin:
// testdata/grammar.Caddyfile uses each one (with a value other than its
// default), and its adapted JSON is testdata/grammar.json. The test fails
// when an option of any block table is not used there, so a new option
// comes with its line in the Caddyfile and its JSON in the golden file
// (go test ./modules/gateway -run TestEveryCaddyfileOptionAdapts -update).
func TestEveryCaddyfileOptionAdapts(t *testing.T) {
	uses := map[string]*blockUse{}
	traceOption = func(what string, b block, opt string) {
		opts := make([]string, 0, len(b))
		for name := range b {
			opts = append(opts, name)
		}
		slices.Sort(opts)
		id := what + " {" + strings.Join(opts, " ") + "}" // the app's and a catalog's cache differ
		u := uses[id]
		if u == nil {
			u = &blockUse{what: what, opts: opts, used: map[string]bool{}}
			uses[id] = u
		}
		if opt != "" {
			u.used[opt] = true
		}
	}
	defer func() { traceOption = nil }()

	file := filepath.Join("testdata", "grammar.Caddyfile")
	body, err := os.ReadFile(file)
	require.NoError(t, err)
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": file})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	traceOption = nil

	// Every option of every block the adapt met is used; the directives
	// are blocks it met, so by induction every block of the grammar is.
	seen := map[string]bool{}
	for _, u := range uses {
		seen[u.what] = true
		for _, opt := range u.opts {
			assert.True(t, u.used[opt], "option %q of block %s is not used in %s: add it with a value other than its default",
				opt, u.what, file)
		}
	}
	for _, dir := range grammarDirectives {
		assert.True(t, seen[dir], "%s does not use the %s directive", file, dir)
	}

	got := stableGrammarJSON(t, out)
	golden := filepath.Join("testdata", "grammar.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "go test -run TestEveryCaddyfileOptionAdapts -update writes it")
	assert.Equal(t, string(want), string(got), "%s adapts to other JSON than %s (-update rewrites it)", file, golden)

	// Durations read as Caddy's (days too) and adapt to Go's string form.
	for _, want := range []string{`"refresh_interval": "24h0m0s"`, `"lifetime": "36h0m0s"`, `"reload_interval": "30m0s"`} {
		assert.Contains(t, string(got), want)
	}
}

// stableGrammarJSON is the adapted JSON, indented, made the same on every
// machine and run: the absolute testdata directory (relative paths are
// the Caddyfile's neighbours) reads {testdata}, and client_secret's
// bcrypt hash (salted anew on each adapt) is verified and then replaced.
func stableGrammarJSON(t *testing.T, adapted []byte) []byte {
	t.Helper()
	var cfg struct {
		Apps struct {
			Lakegate struct {
				Identity struct {
					Issuer struct {
						Clients []struct {
							ID           string `json:"id"`
							SecretBcrypt string `json:"secret_bcrypt"`
						} `json:"clients"`
					} `json:"issuer"`
				} `json:"identity"`
			} `json:"lakegate"`
		} `json:"apps"`
	}
	require.NoError(t, json.Unmarshal(adapted, &cfg))
	var hashed int
	for _, c := range cfg.Apps.Lakegate.Identity.Issuer.Clients {
		if c.ID == "reader" {
			require.NoError(t, bcrypt.CompareHashAndPassword([]byte(c.SecretBcrypt), []byte("reader-secret")))
			adapted = bytes.ReplaceAll(adapted, []byte(c.SecretBcrypt), []byte("bcrypt(reader-secret)"))
			hashed++
		}
	}
	require.Equal(t, 1, hashed, "the issuer's client_secret reader")

	dir, err := filepath.Abs("testdata")
	require.NoError(t, err)
	quoted, err := json.Marshal(dir)
	require.NoError(t, err)
	adapted = bytes.ReplaceAll(adapted, quoted[1:len(quoted)-1], []byte("{testdata}"))

	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, adapted, "", "\t"))
	indented.WriteByte('\n')
	return indented.Bytes()
}
