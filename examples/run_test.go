package examples_test

// These tests start the lakegate binary on the examples, as a user would
// (`lakegate run --config examples/<dir>/Caddyfile`), in a clean
// environment: no example variable, no AWS variable, HOME and the XDG
// directories in a temporary directory.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/translate/sharing"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds the lakegate binary and examples/bench/loadgen once per
// test run and returns the directory holding them.
func binaries(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "lakegate-examples-"); binErr != nil {
			return
		}
		for pkg, name := range map[string]string{"./caddy": "lakegate", "./examples/bench/loadgen": "loadgen"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, name), pkg)
			cmd.Dir = ".."
			if out, err := cmd.CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	require.NoError(t, binErr)
	return binDir
}

func lakegateBin(t *testing.T) string { return filepath.Join(binaries(t), "lakegate") }

var envRef = regexp.MustCompile(`\{(?:\$|env\.)([A-Za-z0-9_]+)`)

// cleanEnv is the environment of a lakegate process: this one's without
// any variable an example reads, any AWS_ or LAKEGATE_ variable, with HOME
// and the XDG directories (Caddy's autosave, data and the sharing change
// files) in a temporary directory, a free admin port and a free address
// for the site, plus set ("NAME=value"). It returns the site's address too.
func cleanEnv(t *testing.T, set ...string) (env []string, addr string) {
	t.Helper()
	drop := map[string]bool{}
	for _, path := range exampleFiles(t) {
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, m := range envRef.FindAllStringSubmatch(string(body), -1) {
			drop[m[1]] = true
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if drop[k] || strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "LAKEGATE_") ||
			slices.Contains([]string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}, k) {
			continue
		}
		env = append(env, kv)
	}
	home := t.TempDir()
	addr = freeAddr(t)
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"LAKEGATE_ADDR="+addr, "LAKEGATE_ADMIN_PORT="+strings.Split(freeAddr(t), ":")[1],
		// the AWS SDK's shared files, should anything look: none
		"AWS_CONFIG_FILE="+filepath.Join(home, "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "no-aws-credentials"))
	return append(env, set...), addr
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// runToExit runs lakegate with args in env, in dir (the test's working
// directory when ""), and returns its combined output and exit error.
func runToExit(t *testing.T, env []string, dir string, args ...string) (string, error) {
	t.Helper()
	stdout, stderr, err := runOutputs(t, env, dir, args...)
	return stdout + stderr, err
}

// runOutputs is runToExit with stdout and stderr apart. A process still
// running after two minutes is killed and fails the test (a run that
// should have stopped at load time served instead).
func runOutputs(t *testing.T, env []string, dir string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lakegateBin(t), args...)
	cmd.Env, cmd.Dir = env, dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("lakegate %v did not exit: %s%s", args, o.String(), e.String())
	}
	return o.String(), e.String(), err
}

// server is a lakegate process left running for the test.
type server struct {
	base string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	mu   *sync.Mutex
}

// startServer starts `lakegate run --config config` and waits until
// GET /v1/config answers.
func startServer(t *testing.T, env []string, addr, dir, config string) *server {
	t.Helper()
	return startServerUntil(t, env, addr, dir, config, http.StatusOK)
}

// startServerUntil is startServer for a gateway whose GET /v1/config
// answers ready (401 where authentication is required).
func startServerUntil(t *testing.T, env []string, addr, dir, config string, ready int) *server {
	t.Helper()
	s := &server{base: "http://" + addr, out: new(bytes.Buffer), mu: new(sync.Mutex)}
	s.cmd = exec.Command(lakegateBin(t), "run", "--config", config)
	s.cmd.Env, s.cmd.Dir = env, dir
	s.cmd.Stdout, s.cmd.Stderr = lockedWriter{s.mu, s.out}, lockedWriter{s.mu, s.out}
	require.NoError(t, s.cmd.Start())
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-exited
	})
	require.Eventually(t, func() bool {
		select {
		case <-exited:
			return true // reported below
		default:
		}
		resp, err := http.Get(s.base + "/v1/config")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == ready
	}, time.Minute, 50*time.Millisecond)
	select {
	case <-exited:
		t.Fatalf("lakegate exited: %s", s.output())
	default:
	}
	return s
}

func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// requiredVars are the variables each example cannot run without: its
// {$VAR} placeholders without a default (read when the Caddyfile is
// adapted) and its {env.VAR} ones (read when it loads). The test checks
// the files say the same.
var requiredVars = map[string][]string{
	"remote":     {"UPSTREAM_URL"},
	"policy":     {"UPSTREAM_URL"},
	"glue":       {"GLUE_WAREHOUSE"},
	"s3tables":   {"S3TABLES_BUCKET_ARN"},
	"polaris":    {"POLARIS_CLIENT_ID", "POLARIS_CLIENT_SECRET"},
	"lakekeeper": {"LAKEKEEPER_CLIENT_ID", "LAKEKEEPER_CLIENT_SECRET"},
	"unity":      {"UC_TOKEN"},
	"nessie":     nil,
	"gravitino":  nil,
	"sharing":    nil,
	"storage":    {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "LAKEGATE_S3_ENDPOINT", "LAKEGATE_STS_ENDPOINT", "LAKEGATE_WAREHOUSE"},
	"storage-remote": {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "LAKEGATE_ROLE_ARN", "LAKEGATE_S3_ENDPOINT",
		"LAKEGATE_WAREHOUSE", "UPSTREAM_URL"},
}

var requiredRef = regexp.MustCompile(`\{(?:\$([A-Za-z0-9_]+)\}|env\.([A-Za-z0-9_]+)\})`)

// requiredIn lists the required variables a Caddyfile names outside
// comments.
func requiredIn(t *testing.T, path string) []string {
	t.Helper()
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	var vars []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range requiredRef.FindAllStringSubmatch(line, -1) {
			if v := m[1] + m[2]; !slices.Contains(vars, v) {
				vars = append(vars, v)
			}
		}
	}
	sort.Strings(vars)
	return vars
}

// TestExamplesNameMissingVariables: every example started with one of its
// required variables unset stops, and says which variable it missed,
// not Caddy's "wrong argument count". The other required variables are
// set (to values that would do until a backend is asked).
func TestExamplesNameMissingVariables(t *testing.T) {
	files := exampleFiles(t)
	for dir, path := range files {
		want := slices.Clone(requiredVars[dir])
		sort.Strings(want)
		require.Equal(t, want, requiredIn(t, path), "examples/%s/Caddyfile: required variables (update requiredVars)", dir)
	}
	for dir, vars := range requiredVars {
		for _, missing := range vars {
			t.Run(dir+"/"+missing, func(t *testing.T) {
				t.Parallel()
				var set []string
				for _, v := range vars {
					if v != missing {
						set = append(set, v+"="+placeholderValue(v))
					}
				}
				env, _ := cleanEnv(t, set...)
				out, err := runToExit(t, env, "", "run", "--config", files[dir])
				require.Error(t, err, "lakegate ran without %s: %s", missing, out)
				assert.Contains(t, out, missing, "the error names the variable")
				assert.NotContains(t, out, "wrong argument count")
				t.Logf("%s without %s: %s", dir, missing, lastError(out))
			})
		}
	}
}

func placeholderValue(v string) string {
	switch {
	case strings.HasSuffix(v, "_URL"), strings.HasSuffix(v, "_ENDPOINT"):
		return "http://127.0.0.1:1"
	case v == "S3TABLES_BUCKET_ARN":
		return "arn:aws:s3tables:us-east-1:123456789012:bucket/b"
	case v == "LAKEGATE_WAREHOUSE":
		return "s3://test-bucket/warehouse"
	case v == "GLUE_WAREHOUSE":
		return "123456789012"
	}
	return "test-" + strings.ToLower(v)
}

// lastError is the line of lakegate's output that says why it stopped.
func lastError(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], "rror") {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}

// TestAWSExamplesNeverAskIMDS: the glue and s3tables examples without AWS
// credentials stop at load time, naming what to set, and never connect to
// the EC2 instance metadata service. The SDK is pointed at a listener of
// the test's (AWS_EC2_METADATA_SERVICE_ENDPOINT, and IMDS explicitly not
// disabled) that counts connections: none. With keys in the environment
// the same config loads (lakegate validate), still without a connection.
func TestAWSExamplesNeverAskIMDS(t *testing.T) {
	var conns atomic.Int32
	imds := httptest.NewUnstartedServer(http.NotFoundHandler())
	imds.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	imds.Start()
	defer imds.Close()
	aws := []string{"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL, "AWS_EC2_METADATA_DISABLED=false"}

	files := exampleFiles(t)
	for _, dir := range []string{"glue", "s3tables"} {
		required := requiredVars[dir][0] + "=" + placeholderValue(requiredVars[dir][0])
		t.Run(dir, func(t *testing.T) {
			env, _ := cleanEnv(t, append(aws, required)...)
			out, err := runToExit(t, env, "", "run", "--config", files[dir])
			require.Error(t, err, "lakegate ran without AWS credentials: %s", out)
			for _, want := range []string{"no AWS credentials are configured", "AWS_ACCESS_KEY_ID",
				"AWS_PROFILE", "credentials default_chain"} {
				assert.Contains(t, out, want)
			}
			t.Logf("%s without credentials: %s", dir, lastError(out))

			env, _ = cleanEnv(t, append(aws, required, "AWS_ACCESS_KEY_ID=AKIDEXAMPLE",
				"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")...)
			out, err = runToExit(t, env, "", "validate", "--config", files[dir])
			require.NoError(t, err, "with keys in the environment: %s", out)
		})
	}
	assert.Zero(t, conns.Load(), "connections to the instance metadata service")
}

// TestSharingExampleRunsAlone: examples/sharing is one process. Run as its
// header says, seeded with the load generator it names, it answers a
// Delta Sharing recipient whose profile comes from `lakegate
// sharing-profile`: list shares, list all tables, query the table, and
// every file URL downloads to Parquet holding the rows written.
func TestSharingExampleRunsAlone(t *testing.T) {
	data := t.TempDir()
	env, addr := cleanEnv(t, "LAKEGATE_DATA="+data)
	config := exampleFiles(t)["sharing"]
	srv := startServer(t, env, addr, "", config)

	seed := exec.Command(filepath.Join(binaries(t), "loadgen"), "-setup", "-url", srv.base, "-prefix", "local", "-snapshots", "3")
	seed.Env = env
	out, err := seed.CombinedOutput()
	require.NoError(t, err, "%s\nlakegate: %s", out, srv.output())

	profileOut, recipientLine, err := runOutputs(t, env, "", "sharing-profile", "--endpoint", srv.base+"/delta-sharing",
		"--token", "demo-recipient-token")
	require.NoError(t, err, recipientLine)
	var profile sharing.Profile
	require.NoError(t, json.Unmarshal([]byte(profileOut), &profile), profileOut)
	require.Equal(t, srv.base+"/delta-sharing", profile.Endpoint)

	do := func(method, path, body string) []byte {
		t.Helper()
		req, err := http.NewRequest(method, profile.Endpoint+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+profile.BearerToken)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, path, b)
		return b
	}

	var shares struct{ Items []struct{ Name string } }
	require.NoError(t, json.Unmarshal(do("GET", "/shares", ""), &shares))
	require.Len(t, shares.Items, 1)
	assert.Equal(t, "demo", shares.Items[0].Name)

	var tables struct {
		Items []struct{ Name, Schema, Share string }
	}
	require.NoError(t, json.Unmarshal(do("GET", "/shares/demo/all-tables", ""), &tables))
	require.Len(t, tables.Items, 1)
	assert.Equal(t, "events", tables.Items[0].Name)
	assert.Equal(t, "bench", tables.Items[0].Schema)

	var ids []int64
	sc := bufio.NewScanner(bytes.NewReader(do("POST", "/shares/demo/schemas/bench/tables/events/query", "{}")))
	sc.Buffer(nil, 1<<20)
	var lines int
	for sc.Scan() {
		lines++
		var l struct {
			File *struct{ URL string } `json:"file"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		if l.File == nil {
			continue
		}
		resp, err := http.Get(l.File.URL)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(body),
			parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		require.NoError(t, err)
		tr := array.NewTableReader(tbl, 1024)
		for tr.Next() {
			col := tr.RecordBatch().Column(0).(*array.Int64)
			for i := 0; i < col.Len(); i++ {
				ids = append(ids, col.Value(i))
			}
		}
		tr.Release()
		tbl.Release()
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, lines, 2, "protocol, metadata and files")
	slices.Sort(ids)
	want := make([]int64, 30)
	for i := range want {
		want[i] = int64(i)
	}
	assert.Equal(t, want, ids, "the rows loadgen wrote (3 snapshots of 10)")

	entries, err := os.ReadDir(data)
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "the catalog lives under LAKEGATE_DATA")
}

// TestRootCaddyfileFromAnotherDirectory: the repository's Caddyfile,
// started from an unrelated working directory, finds its policies and
// puts its data next to itself, not in the working directory.
func TestRootCaddyfileFromAnotherDirectory(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "Caddyfile"))
	require.NoError(t, err)
	repo := filepath.Dir(root)
	cwd := t.TempDir()

	// Adapted: every relative path is the Caddyfile's neighbour. (Adapt
	// only: running on the defaults would write to the repository's data
	// directory.)
	env, _ := cleanEnv(t)
	cfg, logs, err := runOutputs(t, env, cwd, "adapt", "--config", root)
	require.NoError(t, err, logs)
	var adapted struct {
		Apps struct {
			Lakegate struct {
				Policy   struct{ Dir string } `json:"policy"`
				Catalogs []struct {
					Embedded struct{ DSN, Warehouse string } `json:"embedded"`
				} `json:"catalogs"`
			} `json:"lakegate"`
		} `json:"apps"`
	}
	require.NoError(t, json.Unmarshal([]byte(cfg), &adapted), cfg)
	app := adapted.Apps.Lakegate
	assert.Equal(t, filepath.Join(repo, "policies"), app.Policy.Dir)
	require.Len(t, app.Catalogs, 1)
	assert.Equal(t, filepath.Join(repo, "data", "local", "catalog.db"), app.Catalogs[0].Embedded.DSN)
	assert.Equal(t, filepath.Join(repo, "data", "local", "warehouse"), app.Catalogs[0].Embedded.Warehouse)

	// Run, with the data elsewhere: the demo policy (from the repository's
	// policies/) is in force, and the working directory stays empty.
	data := t.TempDir()
	env, addr := cleanEnv(t, "LAKEGATE_DATA="+data)
	srv := startServer(t, env, addr, cwd, root)
	for _, step := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/namespaces", `{"namespace":["protected"]}`, http.StatusOK},
		{"DELETE", "/v1/namespaces/protected", "", http.StatusForbidden}, // lakegate.demo's deny
		{"POST", "/v1/namespaces", `{"namespace":["kept"]}`, http.StatusOK},
		{"DELETE", "/v1/namespaces/kept", "", http.StatusNoContent},
	} {
		req, err := http.NewRequest(step.method, srv.base+step.path, strings.NewReader(step.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, step.status, resp.StatusCode, "%s %s: %s", step.method, step.path, b)
	}
	assert.FileExists(t, filepath.Join(data, "local", "catalog.db"))
	entries, err := os.ReadDir(cwd)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Empty(t, names, "nothing is written to the working directory")
}
