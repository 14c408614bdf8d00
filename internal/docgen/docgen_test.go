package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const root = "../.."

// The committed reference is what the comments say today.
func TestReferenceIsCurrent(t *testing.T) {
	want, err := Generate(root)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(root, "docs", "reference.md"))
	require.NoError(t, err)
	if string(got) != string(want) {
		t.Fatal("docs/reference.md is stale: run go generate ./... and commit it")
	}
}

// Every field a user can set says what it does, in a sentence that, as
// Go's doc comments do, starts with the field's name (so a bare
// "required" or "default 1h" is not enough).
func TestEveryFieldDocumented(t *testing.T) {
	l, err := load(root)
	require.NoError(t, err)
	g, err := build(l)
	require.NoError(t, err)
	var missing []string
	fields := 0
	for _, s := range g.sections {
		for _, f := range s.fields {
			fields++
			if rest, ok := strings.CutPrefix(f.doc, f.goName); !ok || !strings.ContainsAny(rest[:min(1, len(rest))], " ,:") {
				missing = append(missing, f.owner.qualified()+"."+f.goName+" ("+f.json+"): "+f.doc)
			}
		}
	}
	require.Empty(t, missing, "config fields without a doc comment that starts with the field's name")
	require.Greater(t, len(g.sections), 20, "the walk reached the nested structs")
	t.Logf("%d structs, %d fields", len(g.sections), fields)
}

// The walk follows JSON's rules: tags name fields, "-" and unexported
// fields are left out, embedded structs are promoted, and types are
// resolved across packages.
func TestJSONRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("go.mod", "module example.com/m\n")
	write("duration/d.go", "package duration\n\ntype Duration int64\n")
	write("other/o.go", `package other

// Base is embedded.
type Base struct {
	Name string `+"`json:\"name\"`"+` // its name
}

// Kind is a string.
type Kind string
`)
	write("modules/gateway/h.go", `package gateway

import (
	"example.com/m/duration"
	o "example.com/m/other"
)

// H is a handler.
type H struct {
	o.Base
	// Kinds are kinds.
	Kinds []o.Kind `+"`json:\"kinds,omitempty\"`"+`
	// Wait waits.
	Wait duration.Duration `+"`json:\"wait\"`"+`
	Hidden string `+"`json:\"-\"`"+`
	// By maps.
	By map[string]*Sub `+"`json:\"by\"`"+`
	hidden string
}

// Sub is nested.
type Sub struct {
	// On is on.
	On bool
}

func (H) CaddyModule() ModuleInfo { return ModuleInfo{ID: "http.handlers.h"} }

type ModuleInfo struct{ ID string }
`)
	md, err := Generate(dir)
	require.NoError(t, err)
	out := string(md)
	for _, want := range []string{
		"## `\"handler\": \"h\"`",
		"| `name` | string | its name |",
		"| `kinds` | array of string | Kinds are kinds. |",
		"| `wait` | duration | Wait waits. |",
		"| `by` | map of string → object ([`gateway.Sub`](#modules-gateway-sub)) | By maps. |",
		"<a id=\"modules-gateway-sub\"></a>",
		"| `On` | boolean | On is on. |",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "Hidden")
	require.NotContains(t, out, "`hidden`")
	require.Equal(t, 1, strings.Count(out, "\n## `gateway.Sub`"))
}
