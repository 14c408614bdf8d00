package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testVersion = "v9.9.9-test"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// lakegate builds this package once per test run, naming the release
// testVersion as the README's build line does.
func lakegate(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lakegate-main-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "lakegate")
		out, err := exec.Command("go", "build", "-o", binPath,
			"-ldflags", "-X github.com/lakegate/lakegate/modules/gateway.version="+testVersion, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(lakegate(t), args...).Output()
	require.NoError(t, err, "lakegate %s", strings.Join(args, " "))
	return string(out)
}

// lakegateModules are the modules of lakegate's packages in this build.
func lakegateModules(t *testing.T) []string {
	var ids []string
	for _, id := range caddy.Modules() {
		m, err := caddy.GetModule(id)
		require.NoError(t, err)
		if strings.HasPrefix(reflect.Indirect(reflect.ValueOf(m.New())).Type().PkgPath(), "github.com/lakegate/lakegate/") {
			ids = append(ids, id)
		}
	}
	require.Contains(t, ids, "http.handlers.lakegate_iceberg")
	return ids
}

func TestVersion(t *testing.T) {
	assert.Regexp(t, `^lakegate v9\.9\.9-test \(Caddy v2\.11\.9 \S+\)\n$`, run(t, "version"))
}

// Caddy's commands that would replace the binary with a stock Caddy from
// the internet are refused, with how lakegate is built instead.
func TestRefusesSelfReplacingCommands(t *testing.T) {
	for _, name := range []string{"upgrade", "add-package", "remove-package"} {
		cmd := exec.Command(lakegate(t), name, "github.com/example/module")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s: %s", name, out)
		assert.Equal(t, 1, exit.ExitCode(), name)
		assert.Contains(t, string(out), "lakegate "+name+": not available: it would replace lakegate with a stock Caddy", name)
	}
}

// The root help names lakegate and its commands: none that this build
// lacks or refuses.
func TestHelpIsLakegates(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}} {
		out := run(t, args...)
		assert.Contains(t, out, "lakegate run --config Caddyfile", args)
		assert.Regexp(t, `(?m)^  sharing-profile `, out, "lakegate's own command is listed")
		assert.Regexp(t, `(?m)^  reload `, out)
		for _, gone := range []string{"file-server", "upgrade", "add-package", "remove-package", "caddy run"} {
			assert.NotContains(t, out, gone, args)
		}
	}
	assert.Contains(t, run(t, "help", "run"), "lakegate run", "a command's help is Caddy's, under lakegate's name")
}

// list-modules names lakegate's version beside lakegate's modules, in
// Caddy's format, and Caddy's beside Caddy's.
func TestListModules(t *testing.T) {
	lines := func(out string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if id, rest, _ := strings.Cut(l, " "); id != "" {
				m[id] = rest
			}
		}
		return m
	}
	own := lakegateModules(t)
	out := run(t, "list-modules", "--versions")
	assert.Regexp(t, fmt.Sprintf(`\n  Standard modules: \d+\n\n(\S+ \S+\n){%d}\n  Non-standard modules: %[1]d\n$`, len(own)), out)
	versions := lines(out)
	for id, v := range versions {
		if slices.Contains(own, id) {
			assert.Equal(t, testVersion, v, id)
		} else {
			assert.Equal(t, "v2.11.9", v, id)
		}
	}
	assert.Len(t, versions, len(caddy.Modules()))

	both := lines(run(t, "list-modules", "--packages", "--versions", "--skip-standard"))
	assert.Equal(t, testVersion+" github.com/lakegate/lakegate", both["lakegate"])
	assert.Equal(t, testVersion+" github.com/lakegate/lakegate", both["http.handlers.lakegate_iceberg"])
	assert.Len(t, both, len(own))

	bare := lines(run(t, "list-modules", "-s"))
	assert.Equal(t, "", bare["http.handlers.lakegate_iceberg"])
	assert.Contains(t, bare, "http.handlers.lakegate_iceberg")

	var mods []map[string]string
	require.NoError(t, json.Unmarshal([]byte(run(t, "list-modules", "--json")), &mods))
	byID := map[string]map[string]string{}
	for _, m := range mods {
		byID[m["module_name"]] = m
	}
	assert.Equal(t, map[string]string{"module_name": "lakegate", "module_type": "non-standard",
		"version": testVersion, "package_url": "github.com/lakegate/lakegate"}, byID["lakegate"])
	assert.Equal(t, "v2.11.9", byID["http.handlers.reverse_proxy"]["version"])
}

// The standard modules this binary keeps for a gateway (docs/install.md),
// and their directives.
func TestKeptStandardModules(t *testing.T) {
	for _, id := range []string{
		"http", "http.handlers.reverse_proxy", "http.handlers.headers", "http.handlers.rewrite",
		"http.handlers.encode", "http.encoders.gzip", "http.encoders.zstd", "http.handlers.request_body",
		"http.handlers.metrics", "admin.api.metrics", "http.handlers.tracing", "http.handlers.log_append",
		"caddy.listeners.proxy_protocol", "caddy.logging.encoders.json", "caddy.logging.encoders.filter",
		"caddy.logging.writers.file", "caddy.logging.writers.net", "caddy.storage.file_system",
		"tls", "tls.stek.standard", "tls.issuance.acme", "tls.issuance.internal", "tls.issuance.zerossl", "pki",
	} {
		_, err := caddy.GetModule(id)
		assert.NoError(t, err, id)
	}
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(`{
	metrics {
		otlp
	}
	servers {
		listener_wrappers {
			proxy_protocol {
				allow 10.0.0.0/8
			}
			tls
		}
	}
	storage file_system /var/lib/lakegate
	log {
		output file /var/log/lakegate.log {
			roll_size 10MiB
		}
		format filter {
			wrap json
			fields {
				request>headers>Cookie delete
			}
		}
	}
}
https://gw.example.test {
	tls {
		issuer acme
		issuer zerossl KEY
	}
	encode zstd gzip
	header Strict-Transport-Security max-age=31536000
	request_body {
		max_size 10MB
	}
	log {
		output net localhost:9999
		format json
	}
	log_append site gw
	tracing {
		span lakegate
	}
	metrics /metrics
	handle_path /iceberg/* {
		lakegate_iceberg
	}
	uri strip_prefix /x
	rewrite /old /new
	reverse_proxy 127.0.0.1:9 {
		header_up Host {upstream_hostport}
		header_down -ETag
	}
}
`), nil)
	assert.NoError(t, err)
}

// Every Caddyfile in the repository adapts with this binary's modules
// (examples/ and modules/gateway test with all of Caddy's standard
// modules, so they would not notice a directive this build lacks).
func TestRepositoryCaddyfilesAdapt(t *testing.T) {
	for k, v := range map[string]string{"UPSTREAM_URL": "http://127.0.0.1:9", "GLUE_WAREHOUSE": "123456789012",
		"S3TABLES_BUCKET_ARN": "arn:aws:s3tables:us-east-1:123456789012:bucket/b", "LAKEGATE_REDIS": "redis://127.0.0.1:6379/0",
		"LAKEKEEPER_CLIENT_ID": "id", "POLARIS_CLIENT_ID": "id", "LAKEGATE_CATALOG_DSN": "postgres://lakegate@127.0.0.1:5432/lakegate",
		"LAKEGATE_WAREHOUSE": "s3://bucket/warehouse", "LAKEGATE_S3_ENDPOINT": "http://127.0.0.1:9",
		"LAKEGATE_ROLE_ARN":     "arn:aws:iam::123456789012:role/lakegate",
		"LAKEGATE_STS_ENDPOINT": "http://127.0.0.1:9"} {
		t.Setenv(k, v)
	}
	t.Chdir("..") // the files name paths from the repository root
	var files []string
	require.NoError(t, filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "data") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (d.Name() == "Caddyfile" || strings.HasSuffix(d.Name(), ".Caddyfile")) {
			files = append(files, path)
		}
		return nil
	}))
	assert.Contains(t, files, "Caddyfile")
	assert.Contains(t, files, filepath.Join("examples", "bench", "strip-etag.Caddyfile"))
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		_, _, err = caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": f})
		assert.NoError(t, err, f)
	}
}

// The Caddyfile adapter's hint for an unformatted file names lakegate's
// own fmt command, in process and from the binary, and that command
// formats the file.
func TestFmtHintNamesLakegate(t *testing.T) {
	unformatted := []byte("http://127.0.0.1:9 {\nrespond ok\n}\n")
	_, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(unformatted, nil)
	require.NoError(t, err)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0].Message, "run 'lakegate fmt --overwrite'")
	assert.NotContains(t, warnings[0].Message, "caddy fmt")

	file := filepath.Join(t.TempDir(), "Caddyfile")
	require.NoError(t, os.WriteFile(file, unformatted, 0o600))
	var stderr strings.Builder
	cmd := exec.Command(lakegate(t), "adapt", "--config", file)
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run())
	assert.Contains(t, stderr.String(), "run 'lakegate fmt --overwrite'")
	assert.NotContains(t, stderr.String(), "caddy fmt")

	run(t, "fmt", "--overwrite", file)
	formatted, err := os.ReadFile(file)
	require.NoError(t, err)
	_, warnings, err = caddyconfig.GetAdapter("caddyfile").Adapt(formatted, nil)
	require.NoError(t, err)
	assert.Empty(t, warnings, "the hint's command fixes what it warned about")
}

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// tracedRun runs the binary with a `tracing` site in the environment env
// (no OTEL_* variable but those given), makes a traced request, and
// returns its log once it has stopped; until (may be nil) must hold of the
// log before it is stopped.
func tracedRun(t *testing.T, env []string, until func(log string) bool) string {
	t.Helper()
	admin, site := freePort(t), freePort(t)
	file := filepath.Join(t.TempDir(), "Caddyfile")
	require.NoError(t, os.WriteFile(file, []byte(fmt.Sprintf(`{
	admin 127.0.0.1:%s
}

http://127.0.0.1:%s {
	tracing {
		span traced
	}
	respond ok
}
`, admin, site)), 0o600))
	cmd := exec.Command(lakegate(t), "run", "--config", file)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// Caddy's autosave and storage go to the test's folder, not $HOME.
	home := t.TempDir()
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home)
	cmd.Env = append(cmd.Env, env...)
	var log syncBuffer
	cmd.Stderr = &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://127.0.0.1:" + site + "/")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK && resp.Header.Get("Server") != ""
	}, 30*time.Second, 50*time.Millisecond, "the site answers")
	if until != nil {
		require.Eventually(t, func() bool { return until(log.String()) }, 30*time.Second, 50*time.Millisecond, log.String())
	}
	// SIGINT: a graceful stop, which flushes the spans still batched.
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.NoError(t, cmd.Wait(), log.String())
	return log.String()
}

// syncBuffer is a bytes.Buffer the process writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// With `tracing` on and no collector configured, the binary exports no
// span: nothing is sent to OTLP's default endpoint, so no failed export is
// logged, at any level, while it runs or when it stops and flushes. With
// an endpoint that refuses, the failures are warnings of lakegate.otel,
// not info lines of the standard library's logger.
func TestTraceExportOffUnlessRequested(t *testing.T) {
	quiet := tracedRun(t, []string{"OTEL_BSP_SCHEDULE_DELAY=20"}, nil)
	assert.NotContains(t, quiet, "export")
	// OTLP's default endpoint as an address (a bare "4318" can be part of
	// a log line's timestamp).
	assert.NotContains(t, quiet, ":4318")
	assert.NotContains(t, quiet, "flush")

	refused := "http://127.0.0.1:" + freePort(t)
	loud := tracedRun(t, []string{"OTEL_BSP_SCHEDULE_DELAY=20", "OTEL_EXPORTER_OTLP_ENDPOINT=" + refused},
		func(log string) bool { return strings.Contains(log, "lakegate.otel") })
	var warned bool
	for _, line := range strings.Split(loud, "\n") {
		var entry struct{ Level, Logger, Msg string }
		if json.Unmarshal([]byte(line), &entry) != nil || !strings.Contains(entry.Msg, "export") {
			continue
		}
		assert.NotEqual(t, "info", entry.Level, line)
		warned = warned || (entry.Logger == "lakegate.otel" && entry.Level == "warn")
	}
	assert.True(t, warned, "a failed export is a warning of lakegate.otel:\n%s", loud)
}

func TestGCFloorSetting(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		name string
		env  []string
		want uint64
		err  string
	}{
		{"default", nil, defaultGCFloor, ""},
		{"a size", []string{"LAKEGATE_GC_FLOOR", "128MiB"}, 128 << 20, ""},
		{"off", []string{"LAKEGATE_GC_FLOOR", "off"}, 0, ""},
		{"zero", []string{"LAKEGATE_GC_FLOOR", "0"}, 0, ""},
		{"the operator's GOGC wins", []string{"GOGC", "150", "LAKEGATE_GC_FLOOR", "128MiB"}, 0, ""},
		{"not a size", []string{"LAKEGATE_GC_FLOOR", "lots"}, 0, `LAKEGATE_GC_FLOOR="lots": not a size`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := gcFloor(env(c.env...))
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}
