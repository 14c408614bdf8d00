// Package docs_test checks the documentation: README.md and docs/*.md.
//
// What is checked, and how:
//
//   - Caddyfile snippets. Every fenced block whose info string is
//     `caddyfile` (any case) is adapted with Caddy's caddyfile adapter, with
//     the modules the lakegate binary has (the import list of caddy/main.go).
//     A block that is a fragment is wrapped first. The kind is given by an
//     HTML comment on the line above the fence, `<!-- fragment: KIND -->`,
//     or else inferred from the block's first directive:
//   - global:   the block holds global options (`lakegate {...}`,
//     `admin ...`): wrapped in `{ ... }`;
//   - lakegate: the block holds what goes inside the `lakegate` global
//     option (`catalog ...`, `redis ...`): wrapped in `{ lakegate { ... } }`;
//   - site:     the block holds a site's directives (`lakegate_iceberg`,
//     `tracing {...}`): wrapped in `http://:8181 { ... }`;
//   - none:     a whole Caddyfile (a global block `{`, or a site
//     address first): adapted as it is.
//     Inference: a first directive `lakegate` or `admin` is global, `catalog`,
//     `redis` or `cache` lakegate; one starting with `{` or containing `:`
//     or `/` (an address) none; anything else site. Adapt-time variables
//     `{$NAME}` without a default are set for the adaptation (to a URL for
//     names ending in URL, to a Redis URL for names naming Redis, else to a
//     word); run-time placeholders (`{env.NAME}`, `{file./path}`) pass
//     through adapt unresolved, as they do for a real config.
//   - Links. Every relative link `[text](path)` or `[text](path#anchor)` in
//     the prose names a file or folder of the repository, and an anchor into
//     a markdown file names one of its headings by GitHub's slug rules
//     (lowercase; punctuation other than `-` and `_` dropped; spaces become
//     `-`; repeated headings get `-1`, `-2`, ...).
//   - Repository paths. A backticked path in prose or a path in a shell
//     block whose first segment is a top-level folder of the repository
//     (`examples/policy/Caddyfile`, `modules/gateway/delta*_test.go`,
//     `examples/{nessie,unity}/`) exists; globs and brace lists are expanded.
//   - Test names. Every backticked `TestX`, `FuzzX` or `BenchmarkX` names a
//     Go test function of the repository, so the tests a page cites (the
//     reliability table) exist.
//   - Shell snippets. In every `sh` block, a command run as
//     `go run [-v] ./caddy <cmd>`, `./lakegate <cmd>` or `lakegate <cmd>` names a
//     command this build has (caddycmd.Commands(), less the ones lakegate
//     refuses, plus `version`), `--config <file>` names a file of the
//     repository, and `go test -run <Name> <pkg>` names an existing package
//     and test. README's "First walk-through" is run for real
//     (TestFirstWalkThrough). The other shell blocks are checked, not run:
//     the operator's curl lines of docs/operating.md, the build and xcaddy
//     lines of README and docs/install.md, `go run ./caddy sharing-profile`,
//     `examples/bench/run.sh` and the `apt-get`/`npm` lines need a long-lived
//     gateway on fixed ports, a network or minutes of build.
//   - README.md is at most 300 lines: the reference lives in docs/.
package docs_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	// The modules of the lakegate binary, so a snippet that uses a module
	// the build leaves out fails here.
	_ "github.com/lakegate/lakegate/caddy/modules"
)

// refused are Caddy's commands the lakegate binary refuses (caddy/main.go,
// notLakegate); extra are the ones it answers itself.
var (
	refused = []string{"upgrade", "add-package", "remove-package"}
	extra   = []string{"version", "help", "list-modules"}
)

// block is one fenced code block of a markdown file.
type block struct {
	file     string // relative to the repository root
	line     int    // of the opening fence, 1-based
	info     string // the info string, lower case
	fragment string // the <!-- fragment: KIND --> above it, if any
	body     string
}

// doc is one markdown file: its blocks and its prose lines (code blocks
// left out), each with its line number.
type doc struct {
	file   string
	blocks []block
	prose  map[int]string
}

var fragmentComment = regexp.MustCompile(`^<!--\s*fragment:\s*(\w+)\s*-->$`)

// root is the repository root: the tests run in docs/.
const root = ".."

func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return append([]string{filepath.Join(root, "README.md")}, files...)
}

func parse(t *testing.T, path string) doc {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	rel, err := filepath.Rel(root, path)
	require.NoError(t, err)
	d := doc{file: filepath.ToSlash(rel), prose: map[int]string{}}
	var (
		cur      *block
		fence    string
		indent   int
		lastText string // the last non-blank prose line
	)
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil {
			if strings.HasPrefix(trimmed, "```") {
				fence = "```"
				indent = len(line) - len(trimmed)
				cur = &block{file: d.file, line: n, info: strings.ToLower(strings.TrimSpace(strings.TrimPrefix(trimmed, fence)))}
				if m := fragmentComment.FindStringSubmatch(strings.TrimSpace(lastText)); m != nil {
					cur.fragment = m[1]
				}
				continue
			}
			d.prose[n] = line
			if strings.TrimSpace(line) != "" {
				lastText = line
			}
			continue
		}
		if strings.TrimSpace(line) == fence {
			d.blocks = append(d.blocks, *cur)
			cur = nil
			lastText = ""
			continue
		}
		// A fence indented in a list item indents its body the same.
		for k := 0; k < indent && strings.HasPrefix(line, " "); k++ {
			line = line[1:]
		}
		cur.body += line + "\n"
	}
	require.Nil(t, cur, "%s: a code fence opened at line %d is never closed", d.file, lineOf(cur))
	return d
}

func lineOf(b *block) int {
	if b == nil {
		return 0
	}
	return b.line
}

func docs(t *testing.T) []doc {
	t.Helper()
	var ds []doc
	for _, f := range docFiles(t) {
		ds = append(ds, parse(t, f))
	}
	return ds
}

// firstDirective is the first word of a Caddyfile block, comments and
// blank lines skipped.
func firstDirective(body string) string {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		return strings.Fields(line)[0]
	}
	return ""
}

func fragmentKind(b block) string {
	if b.fragment != "" {
		return b.fragment
	}
	switch first := firstDirective(b.body); {
	case first == "lakegate" || first == "admin":
		return "global"
	case first == "catalog" || first == "redis" || first == "cache":
		return "lakegate"
	case strings.HasPrefix(first, "{") || strings.Contains(first, ":") || strings.Contains(first, "/"):
		return "none"
	default:
		return "site"
	}
}

func wrap(kind, body string) (string, error) {
	switch kind {
	case "none":
		return body, nil
	case "global":
		return "{\n" + body + "}\n", nil
	case "lakegate":
		return "{\n\tlakegate {\n" + body + "\t}\n}\n", nil
	case "site":
		return "http://:8181 {\n" + body + "}\n", nil
	}
	return "", fmt.Errorf("unknown fragment kind %q (global, lakegate, site, none)", kind)
}

var adaptVar = regexp.MustCompile(`\{\$([A-Za-z_][A-Za-z0-9_]*)\}`)

// setAdaptVars gives every {$NAME} without a default a value, unless the
// environment has one.
func setAdaptVars(t *testing.T, body string) {
	t.Helper()
	for _, m := range adaptVar.FindAllStringSubmatch(body, -1) {
		name := m[1]
		if _, ok := os.LookupEnv(name); ok {
			continue
		}
		value := "docs-test-" + strings.ToLower(name)
		switch {
		case strings.Contains(name, "REDIS"):
			value = "redis://127.0.0.1:6379/0"
		case strings.HasSuffix(name, "URL"):
			value = "http://127.0.0.1:9"
		}
		t.Setenv(name, value)
	}
}

// TestCaddyfileSnippetsAdapt adapts every caddyfile block of the docs.
func TestCaddyfileSnippetsAdapt(t *testing.T) {
	count := 0
	for _, d := range docs(t) {
		for _, b := range d.blocks {
			if b.info != "caddyfile" {
				continue
			}
			count++
			name := fmt.Sprintf("%s:%d", d.file, b.line)
			t.Run(name, func(t *testing.T) {
				kind := fragmentKind(b)
				body, err := wrap(kind, b.body)
				require.NoError(t, err)
				setAdaptVars(t, body)
				// Relative paths in a Caddyfile are relative to its
				// folder: the snippets are written for the repository root.
				_, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(body),
					map[string]any{"filename": filepath.Join(root, "Caddyfile")})
				assert.NoError(t, err, "%s (as %s):\n%s", name, kind, body)
				for _, w := range warnings {
					t.Logf("%s: warning: %s", name, w.String())
				}
			})
		}
	}
	assert.Greater(t, count, 5, "caddyfile blocks found")
}

var (
	link       = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	slugDrop   = regexp.MustCompile(`[^\p{L}\p{N}\p{M}\- _]`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// slug is GitHub's anchor for a heading's text.
func slug(text string) string {
	text = strings.ToLower(strings.TrimSpace(text))
	text = slugDrop.ReplaceAllString(text, "")
	return strings.ReplaceAll(text, " ", "-")
}

// anchors lists a markdown file's heading anchors.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	d := parse(t, path)
	seen := map[string]int{}
	out := map[string]bool{}
	lines := make([]int, 0, len(d.prose))
	for n := range d.prose {
		lines = append(lines, n)
	}
	slices.Sort(lines)
	for _, n := range lines {
		for _, m := range htmlAnchor.FindAllStringSubmatch(d.prose[n], -1) {
			out[m[1]] = true
		}
		m := heading.FindStringSubmatch(d.prose[n])
		if m == nil {
			continue
		}
		s := slug(m[2])
		if k := seen[s]; k > 0 {
			out[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestRelativeLinks checks every relative link and its anchor.
func TestRelativeLinks(t *testing.T) {
	cache := map[string]map[string]bool{}
	count := 0
	for _, d := range docs(t) {
		dir := filepath.Dir(filepath.Join(root, d.file))
		for n, line := range d.prose {
			line = codeSpan.ReplaceAllString(line, "")
			if strings.Contains(link.ReplaceAllString(line, ""), "](") {
				// A target not closed on its line: markdown shows the
				// rest of the paragraph as the link's URL.
				t.Errorf("%s:%d: a link whose target is not closed on its line", d.file, n)
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				count++
				where := fmt.Sprintf("%s:%d: %s", d.file, n, target)
				path, anchor, _ := strings.Cut(target, "#")
				file := filepath.Join(root, d.file)
				if path != "" {
					file = filepath.Join(dir, filepath.FromSlash(path))
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s: no such file", where)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(file, ".md") {
					t.Errorf("%s: an anchor into a file that is not markdown", where)
					continue
				}
				if cache[file] == nil {
					cache[file] = anchors(t, file)
				}
				if !cache[file][anchor] {
					t.Errorf("%s: %s has no heading with anchor #%s", where, path, anchor)
				}
			}
		}
	}
	assert.Greater(t, count, 10, "relative links found")
}

var (
	backticked = regexp.MustCompile("`([^`\\s]+)`")
	braces     = regexp.MustCompile(`\{([^{}]*,[^{}]*)\}`)
	testName   = regexp.MustCompile(`^(Test|Fuzz|Benchmark)[A-Z0-9_]\w*$`)
	goTestFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w*)\(`)
)

// topLevel lists the repository's top-level folders.
func topLevel(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out[e.Name()] = true
		}
	}
	return out
}

// expandBraces expands `a/{b,c}/d` into `a/b/d`, `a/c/d`.
func expandBraces(p string) []string {
	m := braces.FindStringSubmatchIndex(p)
	if m == nil {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[m[2]:m[3]], ",") {
		out = append(out, expandBraces(p[:m[0]]+alt+p[m[1]:])...)
	}
	return out
}

// repoPath reports whether s reads as a path into the repository, and
// the path cleaned of trailing punctuation.
func repoPath(s string, top map[string]bool) (string, bool) {
	s = strings.TrimRight(s, ".,;:)")
	s = strings.TrimPrefix(s, "./")
	first, _, ok := strings.Cut(s, "/")
	if !ok || !top[first] {
		return "", false
	}
	// Placeholders, elisions, and what is not a path: skip.
	if strings.ContainsAny(s, "<>$=|' ") || strings.Contains(s, "...") || strings.Contains(s, "…") {
		return "", false
	}
	return s, true
}

func checkPath(t *testing.T, where, p string) {
	t.Helper()
	for _, alt := range expandBraces(p) {
		matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(alt)))
		if err != nil || len(matches) == 0 {
			t.Errorf("%s: %s does not exist in the repository", where, alt)
		}
	}
}

// TestRepositoryPathsExist checks the repository paths the docs name.
func TestRepositoryPathsExist(t *testing.T) {
	top := topLevel(t)
	count := 0
	for _, d := range docs(t) {
		for n, line := range d.prose {
			for _, m := range backticked.FindAllStringSubmatch(line, -1) {
				if p, ok := repoPath(m[1], top); ok {
					count++
					checkPath(t, fmt.Sprintf("%s:%d", d.file, n), p)
				}
			}
		}
		for _, b := range d.blocks {
			if !isShell(b.info) {
				continue
			}
			for i, line := range strings.Split(b.body, "\n") {
				code, _, _ := strings.Cut(line, "#")
				for _, word := range strings.Fields(code) {
					if p, ok := repoPath(strings.Trim(word, `"`), top); ok {
						count++
						checkPath(t, fmt.Sprintf("%s:%d", d.file, b.line+1+i), p)
					}
				}
			}
		}
	}
	assert.Greater(t, count, 20, "repository paths found")
}

// goTests lists the Test, Fuzz and Benchmark functions of the repository.
func goTests(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	require.NoError(t, filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && path != root && (strings.HasPrefix(e.Name(), ".") || e.Name() == "node_modules" || e.Name() == "data") {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(path, "_test.go") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range goTestFunc.FindAllStringSubmatch(string(data), -1) {
				out[m[1]] = true
			}
		}
		return nil
	}))
	return out
}

// TestCitedTestsExist checks that every test the docs cite exists.
func TestCitedTestsExist(t *testing.T) {
	tests := goTests(t)
	count := 0
	for _, d := range docs(t) {
		for n, line := range d.prose {
			for _, m := range backticked.FindAllStringSubmatch(line, -1) {
				name := strings.TrimRight(m[1], ".,;:)")
				if testName.MatchString(name) {
					count++
					assert.True(t, tests[name], "%s:%d: no Go test function %s", d.file, n, name)
				}
			}
		}
	}
	assert.Greater(t, count, 20, "cited tests found")
}

func isShell(info string) bool {
	return info == "sh" || info == "bash" || info == "shell" || info == "console"
}

// commands joins a shell block's continuation lines and splits them into
// simple commands (on ;, &&, || and |), comments dropped.
func commands(body string) []string {
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		for _, c := range regexp.MustCompile(`;|&&|\|\||\|`).Split(cur.String(), -1) {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
		cur.Reset()
	}
	return out
}

// lakegateCommand returns the lakegate command a shell command runs, and
// its arguments.
func lakegateCommand(words []string) (string, []string, bool) {
	switch {
	case len(words) >= 4 && words[0] == "go" && words[1] == "run":
		pkg := 2
		for pkg < len(words) && strings.HasPrefix(words[pkg], "-") { // go run's own flags (-v)
			pkg++
		}
		if pkg+1 < len(words) && (words[pkg] == "./caddy" || words[pkg] == "./caddy/") {
			return words[pkg+1], words[pkg+2:], true
		}
	case len(words) >= 2 && (words[0] == "./lakegate" || words[0] == "lakegate"):
		return words[1], words[2:], true
	}
	return "", nil, false
}

// TestShellSnippets checks the lakegate commands, config files and test
// runs of every shell block (they are not run: see the package comment).
func TestShellSnippets(t *testing.T) {
	known := map[string]bool{}
	for name := range caddycmd.Commands() {
		known[name] = true
	}
	for _, name := range refused {
		delete(known, name)
	}
	for _, name := range extra {
		known[name] = true
	}
	require.True(t, known["sharing-profile"], "lakegate's own commands are registered")
	tests := goTests(t)
	count := 0
	for _, d := range docs(t) {
		for _, b := range d.blocks {
			if !isShell(b.info) {
				continue
			}
			where := fmt.Sprintf("%s:%d", d.file, b.line)
			for _, c := range commands(b.body) {
				words := strings.Fields(c)
				if cmd, args, ok := lakegateCommand(words); ok {
					count++
					assert.True(t, known[cmd], "%s: %q: lakegate has no command %q", where, c, cmd)
					for i, a := range args {
						if a == "--config" && i+1 < len(args) {
							_, err := os.Stat(filepath.Join(root, args[i+1]))
							assert.NoError(t, err, "%s: %q: the config file", where, c)
						}
					}
				}
				if len(words) >= 2 && words[0] == "go" && words[1] == "test" {
					count++
					for i, w := range words {
						if w == "-run" && i+1 < len(words) {
							for _, name := range strings.Split(strings.Trim(words[i+1], `'"^$`), "|") {
								assert.True(t, tests[name], "%s: %q: no test %s", where, c, name)
							}
						}
						if strings.HasPrefix(w, "./") && w != "./..." {
							_, err := os.Stat(filepath.Join(root, strings.TrimSuffix(w, "/...")))
							assert.NoError(t, err, "%s: %q: the package", where, c)
						}
					}
				}
			}
		}
	}
	assert.Greater(t, count, 3, "lakegate commands found in shell blocks")
}

// TestTheTwoCommands keeps README's two commands verbatim, each in its
// own sh block: CI runs the README's test command.
func TestTheTwoCommands(t *testing.T) {
	readme := parse(t, filepath.Join(root, "README.md"))
	var bodies []string
	for _, b := range readme.blocks {
		if b.info == "sh" {
			bodies = append(bodies, b.body)
		}
	}
	// -v: the first run compiles for minutes, and shows it package by package.
	assert.Contains(t, bodies, "go run -v ./caddy run --config Caddyfile\n")
	assert.Contains(t, bodies, "go test ./...\n")
}

// TestReadmeShort keeps README.md a README: the reference is in docs/.
func TestReadmeShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	lines := strings.Count(string(data), "\n")
	assert.LessOrEqual(t, lines, 300, "README.md has %d lines; move reference text to docs/", lines)
}

// freePort is a TCP port free on loopback when it is asked for.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var etagLine = regexp.MustCompile(`(?mi)^etag:\s*(.+?)\s*$`)

// TestFirstWalkThrough runs the shell blocks of README's "First
// walk-through" with bash and curl against the root Caddyfile, served in
// process on free ports, its data in a temporary folder that is also where
// the blocks run (so `$PWD/data/local/warehouse` is the catalog's
// warehouse, as in a checkout). 127.0.0.1:8181 becomes the test's address,
// and `<the etag>` the ETag the block printed just before, as a reader
// would copy it. The Go snippet is not run: iceberg-go's REST client is
// driven by the gateway's own tests (TestPolicyRolesEndToEnd and others).
func TestFirstWalkThrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on the PATH", tool)
		}
	}
	readme := parse(t, filepath.Join(root, "README.md"))
	start, end := 0, 1<<30
	for n, line := range readme.prose {
		if line == "## First walk-through" {
			start = n
		}
	}
	require.NotZero(t, start, "README has a First walk-through")
	for n, line := range readme.prose {
		if n > start && n < end && strings.HasPrefix(line, "## ") {
			end = n
		}
	}
	var blocks []string
	for _, b := range readme.blocks {
		if b.info == "sh" && b.line > start && b.line < end {
			blocks = append(blocks, b.body)
		}
	}
	require.Len(t, blocks, 2, "the walk-through's Iceberg and Delta blocks")

	dir := t.TempDir()
	port, adminPort := freePort(t), freePort(t)
	t.Setenv("LAKEGATE_DATA", filepath.Join(dir, "data"))
	t.Setenv("LAKEGATE_ADDR", ":"+strconv.Itoa(port))
	t.Setenv("LAKEGATE_ADMIN_PORT", strconv.Itoa(adminPort))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg-data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg-config"))
	caddyfile, err := filepath.Abs(filepath.Join(root, "Caddyfile"))
	require.NoError(t, err)
	body, err := os.ReadFile(caddyfile)
	require.NoError(t, err)
	adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": caddyfile})
	require.NoError(t, err)
	// Run as the README does, less what would leave the test's folder:
	// no autosaved config, storage under the test's folder.
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(adapted, &cfg))
	admin, _ := cfg["admin"].(map[string]any)
	require.NotNil(t, admin, "the root Caddyfile configures the admin endpoint")
	admin["config"] = map[string]any{"persist": false}
	cfg["storage"] = map[string]any{"module": "file_system", "root": filepath.Join(dir, "caddy")}
	adapted, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, caddy.Load(adapted, true))
	t.Cleanup(func() { _ = caddy.Stop() })

	addr := "127.0.0.1:" + strconv.Itoa(port)
	sh := func(script string) string {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", strings.ReplaceAll(script, "127.0.0.1:8181", addr))
		cmd.Dir = dir
		out, err := cmd.Output()
		require.NoError(t, err, "%s\noutput:\n%s", script, out)
		t.Logf("%s", out)
		return string(out)
	}

	// The Iceberg block, up to the conditional load that needs the ETag.
	lines := strings.Split(blocks[0], "\n")
	cut := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "<the etag>") })
	require.Positive(t, cut, "the walk-through sends the ETag back")
	for cut > 0 && strings.HasSuffix(lines[cut-1], "\\") {
		cut--
	}
	out := sh(strings.Join(lines[:cut], "\n"))
	assert.Contains(t, out, `"endpoints"`, "/v1/config")
	assert.Contains(t, out, `"namespace":["demo"]`, "the namespace is created")
	assert.Contains(t, out, `"metadata-location"`, "the table is created")
	assert.NotContains(t, out, `"error"`)
	m := etagLine.FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, m, "the load prints its ETag:\n%s", out)
	etag := m[len(m)-1][1]
	out = sh(strings.ReplaceAll(strings.Join(lines[cut:], "\n"), "<the etag>", etag))
	assert.Regexp(t, `^HTTP/\S+ 304`, out, "If-None-Match with the ETag")

	// The Delta block: the same catalog through the UC Delta API.
	out = sh(blocks[1])
	assert.NotContains(t, out, `"error"`)
	assert.Contains(t, out, `"protocol-version"`, "the Delta API's config")
	assert.Contains(t, out, `"table-uuid"`, "the Delta table, loaded as Iceberg")
}
