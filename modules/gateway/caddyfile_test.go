package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/lakegate/lakegate/identity"
	_ "github.com/lakegate/lakegate/modules/gateway"
)

// freeAddr returns a loopback address with a free port.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// adapt turns a Caddyfile into Caddy JSON, with {$ENV} expanded.
func adapt(t *testing.T, caddyfile []byte) []byte {
	t.Helper()
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(caddyfile, map[string]any{"filename": "Caddyfile"})
	require.NoError(t, err)
	for _, w := range warnings {
		require.Contains(t, w.Message, "not formatted", "unexpected adapter warning")
	}
	return out
}

// startCaddy runs Caddy in-process on cfg and stops it when the test ends.
func startCaddy(t testing.TB, cfg []byte) {
	t.Helper()
	require.NoError(t, caddy.Load(cfg, true))
	t.Cleanup(func() { _ = caddy.Stop() })
}

func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	var resp *http.Response
	var err error
	for i := 0; i < 50; i++ { // the listener may take a moment after Load
		if resp, err = http.Get(url); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		require.NoError(t, json.Unmarshal(b, &body), string(b))
	}
	return resp.StatusCode, body
}

// rootCaddyfile is the repository's Caddyfile adapted for a test: its own
// address, data directory and admin port, and the repository's policies.
func rootCaddyfile(t *testing.T) (addr, data string, cfg []byte) {
	addr, data = freeAddr(t), t.TempDir()
	t.Setenv("LAKEGATE_ADDR", addr)
	t.Setenv("LAKEGATE_DATA", data)
	t.Setenv("LAKEGATE_POLICIES", "../../policies")
	t.Setenv("LAKEGATE_ADMIN_PORT", strings.Split(freeAddr(t), ":")[1])
	caddyfile, err := os.ReadFile("../../Caddyfile")
	require.NoError(t, err)
	return addr, data, adapt(t, caddyfile)
}

// The repository's root Caddyfile runs the gateway on its embedded
// default, serves /v1/config, and keeps its data across a restart.
func TestRootCaddyfileServesAndSurvivesRestart(t *testing.T) {
	addr, data, cfg := rootCaddyfile(t)
	base := "http://" + addr

	startCaddy(t, cfg)
	status, body := get(t, base+"/v1/config")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "local", body["overrides"].(map[string]any)["prefix"])
	assert.NotEmpty(t, body["endpoints"])

	resp, err := http.Post(base+"/v1/namespaces", "application/json", strings.NewReader(`{"namespace":["kept"]}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, caddy.Stop())

	startCaddy(t, cfg)
	status, body = get(t, base+"/v1/local/namespaces")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, []any{[]any{"kept"}}, body["namespaces"])
	assert.FileExists(t, data+"/local/catalog.db")

	// the demo policy: anonymous may do anything but drop "protected"
	resp, err = http.Post(base+"/v1/namespaces", "application/json", strings.NewReader(`{"namespace":["protected"]}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodDelete, base+"/v1/namespaces/protected", nil)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestUnknownCatalogAndMissingWarehouse(t *testing.T) {
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`{
	admin off
	lakegate {
		catalog one {
			embedded {
				dsn %[1]s/one.db
				warehouse %[1]s/wh
			}
		}
	}
}
http://%[2]s {
	lakegate_iceberg
}`, t.TempDir(), addr)
	startCaddy(t, adapt(t, []byte(cfg)))
	base := "http://" + addr
	status, body := get(t, base+"/v1/config")
	assert.Equal(t, http.StatusBadRequest, status, "no warehouse and no default catalog")
	assert.Equal(t, "BadRequestException", body["error"].(map[string]any)["type"])
	status, body = get(t, base+"/v1/config?warehouse=two")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "NoSuchWarehouseException", body["error"].(map[string]any)["type"])
	status, _ = get(t, base+"/v1/config?warehouse=one")
	assert.Equal(t, http.StatusOK, status)
	status, body = get(t, base+"/v1/namespaces")
	assert.Equal(t, http.StatusBadRequest, status, "prefix-less form without a default catalog")
	status, _ = get(t, base+"/v1/one/namespaces")
	assert.Equal(t, http.StatusOK, status)
}

// Every Caddyfile option has a JSON twin: the adapted JSON is exactly
// the app's JSON config.
func TestAdaptLakegateOption(t *testing.T) {
	out := adapt(t, []byte(`{
	lakegate {
		default_catalog a
		catalog a {
			embedded {
				database postgres
				dsn postgres://u@localhost/db
				warehouse s3://bucket/wh
				namespace_separator .
				property s3.endpoint http://127.0.0.1:9000
				auth_token t0k
				auth_client id s3cret
				token_ttl 90s
			}
		}
	}
}
:8080 {
	lakegate_iceberg
}`))
	assert.JSONEq(t, `{
		"default_catalog": "a",
		"catalogs": [{"name": "a", "embedded": {
			"database": "postgres", "dsn": "postgres://u@localhost/db", "warehouse": "s3://bucket/wh",
			"namespace_separator": ".", "properties": {"s3.endpoint": "http://127.0.0.1:9000"},
			"auth": {"tokens": ["t0k"], "clients": {"id": "s3cret"}, "token_ttl": "1m30s"}
		}}]
	}`, appJSON(t, out, "lakegate"))
	assert.Contains(t, appJSON(t, out, "http"), `"handler":"lakegate_iceberg"`)
}

func TestAdaptRejectsBadOptions(t *testing.T) {
	for name, cf := range map[string]string{
		"unknown app option":      `{ lakegate { bogus } }`,
		"catalog without a name":  `{ lakegate { catalog } }`,
		"unknown catalog option":  `{ lakegate { catalog a { remote x } } }`,
		"unknown embedded option": `{ lakegate { catalog a { embedded { colour blue } } } }`,
		"bad token_ttl":           `{ lakegate { catalog a { embedded { token_ttl soon } } } }`,
		"handler with arguments":  ":8080 {\n lakegate_iceberg extra\n}",
		"unified route of one":    "{\n lakegate {\n catalog a {\n unified {\n route a\n }\n }\n }\n}",
		"unified route to":        "{\n lakegate {\n catalog a {\n unified {\n route a m to b\n }\n }\n }\n}",
		"unified route as":        "{\n lakegate {\n catalog a {\n unified {\n route a m as\n }\n }\n }\n}",
		"unified default of two":  "{\n lakegate {\n catalog a {\n unified {\n default m n\n }\n }\n }\n}",
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
			assert.Error(t, err)
		})
	}
}

func TestAdaptRemoteAndReplayOptions(t *testing.T) {
	out := adapt(t, []byte(`{
	lakegate {
		redis redis://127.0.0.1:6379/0
		catalog r {
			max_request_body 1MiB
			allowed_locations s3://lake/prod file:///srv/x
			idempotency {
				lifetime 1d
				lease 20s
				wait 5s
				max_record_bytes 2MiB
				max_error_records 500
			}
			remote https://polaris.example/api/catalog {
				warehouse prod
				prefix p
				auth oauth2 {
					token_url https://idp.example/token
					client_id id
					client_secret sec
					scope PRINCIPAL_ROLE:ALL
				}
				tls {
					insecure_skip_verify
					ca_file /etc/ca.pem
				}
				connect_timeout 2s
				response_header_timeout 20s
				read_timeout 3s
				write_timeout 30s
				config_ttl 1m
				breaker {
					failures 3
					timeout 4s
					count_read_500
				}
			}
		}
		catalog g {
			remote https://glue.us-east-1.amazonaws.com/iceberg {
				auth sigv4 {
					region us-east-1
					service glue
					access_key_id AKID
					secret_access_key SECRET
					session_token TOKEN
				}
			}
		}
		catalog b {
			remote http://127.0.0.1:9 {
				auth bearer tok
			}
		}
		catalog p {
			remote http://127.0.0.1:9 {
				auth passthrough
			}
		}
	}
}
:8080 {
	lakegate_iceberg
}`))
	assert.JSONEq(t, `{
		"redis": "redis://127.0.0.1:6379/0",
		"catalogs": [
			{"name": "r", "max_request_body": 1048576, "allowed_locations": ["s3://lake/prod", "file:///srv/x"],
			 "idempotency": {"lifetime": "24h0m0s", "lease": "20s", "wait": "5s", "max_record_bytes": 2097152, "max_error_records": 500},
			 "remote": {"url": "https://polaris.example/api/catalog", "warehouse": "prod", "prefix": "p",
				"auth": {"mode": "oauth2", "token_url": "https://idp.example/token", "client_id": "id",
					"client_secret": "sec", "scope": "PRINCIPAL_ROLE:ALL"},
				"tls": {"insecure_skip_verify": true, "ca_file": "/etc/ca.pem"},
				"connect_timeout": "2s", "response_header_timeout": "20s", "config_ttl": "1m0s",
				"read_timeout": "3s", "write_timeout": "30s",
				"breaker": {"failures": 3, "timeout": "4s", "count_read_500": true}}},
			{"name": "g", "remote": {"url": "https://glue.us-east-1.amazonaws.com/iceberg",
				"auth": {"mode": "sigv4", "region": "us-east-1", "service": "glue", "access_key_id": "AKID",
					"secret_access_key": "SECRET", "session_token": "TOKEN"}}},
			{"name": "b", "remote": {"url": "http://127.0.0.1:9", "auth": {"mode": "bearer", "token": "tok"}}},
			{"name": "p", "remote": {"url": "http://127.0.0.1:9", "auth": {"mode": "passthrough"}}}
		]
	}`, appJSON(t, out, "lakegate"))
}

func TestAdaptRejectsBadRemoteOptions(t *testing.T) {
	for name, body := range map[string]string{
		"unknown remote option":  `remote http://x { colour blue }`,
		"remote without url":     `remote { auth none }`,
		"unknown auth mode":      `remote http://x { auth magic }`,
		"bearer without token":   `remote http://x { auth bearer }`,
		"unknown oauth2 option":  "remote http://x {\n auth oauth2 {\n colour blue\n }\n }",
		"bad timeout":            `remote http://x { connect_timeout soon }`,
		"zero breaker failures":  "remote http://x {\n breaker {\n failures 0\n }\n }",
		"bad max_request_body":   `max_request_body lots`,
		"allowed_locations bare": `allowed_locations`,
		"unknown idempotency":    "idempotency {\n colour blue\n }",
		"bad idempotency lease":  "idempotency {\n lease forever\n }",
		"bad max_record_bytes":   "idempotency {\n max_record_bytes lots\n }",
		"bad max_error_records":  "idempotency {\n max_error_records many\n }",
		"tls flag with argument": "remote http://x {\n tls {\n insecure_skip_verify yes\n }\n }",
	} {
		t.Run(name, func(t *testing.T) {
			cf := "{\n lakegate {\n catalog a {\n " + body + "\n }\n }\n}"
			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
			assert.Error(t, err)
		})
	}
}

// appJSON is one app's config in adapted Caddy JSON.
func appJSON(t *testing.T, adapted []byte, app string) string {
	t.Helper()
	var cfg struct {
		Apps map[string]json.RawMessage `json:"apps"`
	}
	require.NoError(t, json.Unmarshal(adapted, &cfg))
	return string(cfg.Apps[app])
}

// handlersIn finds every handler object in adapted JSON, subroutes included.
func handlersIn(v any, out map[string]map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if name, ok := v["handler"].(string); ok {
			out[name] = v
		}
		for _, x := range v {
			handlersIn(x, out)
		}
	case []any:
		for _, x := range v {
			handlersIn(x, out)
		}
	}
}

// The Delta doors' Caddyfile options adapt to their JSON twins.
func TestAdaptDeltaAndSharingHandlers(t *testing.T) {
	out := adapt(t, []byte(`{
	lakegate {
		catalog local {
			embedded {
				database sqlite
				dsn /tmp/x.db
				warehouse /tmp/wh
			}
		}
	}
}
http://127.0.0.1:8181 {
	lakegate_delta {
		path_credentials local staging eu
	}
	lakegate_sharing {
		url_lifetime 10m
		max_change_versions 50
		change_data_dir /var/lib/lakegate/changes
		max_change_rewrite_bytes 1MiB
		share s {
			recipient r token abc
			schema sc {
				namespace local ns
			}
		}
	}
}`))
	var cfg any
	require.NoError(t, json.Unmarshal(out, &cfg))
	hs := map[string]map[string]any{}
	handlersIn(cfg, hs)
	assert.Equal(t, []any{map[string]any{"catalog": "local", "namespace": []any{"staging", "eu"}}}, hs["lakegate_delta"]["path_credentials"])
	sh := hs["lakegate_sharing"]
	assert.Equal(t, "10m0s", sh["url_lifetime"], "a duration adapts to its string, as every other one")
	assert.Equal(t, float64(50), sh["max_change_versions"])
	assert.Equal(t, "/var/lib/lakegate/changes", sh["change_data_dir"])
	assert.Equal(t, float64(1048576), sh["max_change_rewrite_bytes"])

	for _, bad := range []string{"lakegate_delta {\n\t\tpath_credentials local\n\t}", "lakegate_delta {\n\t\tteleport\n\t}",
		"lakegate_sharing {\n\t\tmax_change_versions 0\n\t}", "lakegate_sharing {\n\t\tmax_change_rewrite_bytes x\n\t}"} {
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte("http://127.0.0.1:8181 {\n\t"+bad+"\n}\n"),
			map[string]any{"filename": "Caddyfile"})
		assert.Error(t, err, bad)
	}
}

// Every size option reads the same way (sizeArg) and says what it wants.
func TestAdaptRejectsBadSizes(t *testing.T) {
	wrap := map[string]string{
		"max_request_body":         "{\n lakegate {\n catalog a {\n max_request_body %s\n }\n }\n}",
		"max_record_bytes":         "{\n lakegate {\n catalog a {\n idempotency {\n max_record_bytes %s\n }\n }\n }\n}",
		"max_bytes":                "{\n lakegate {\n cache {\n max_bytes %s\n }\n }\n}",
		"max_change_rewrite_bytes": ":8080 {\n lakegate_sharing {\n max_change_rewrite_bytes %s\n }\n}",
	}
	for opt, cf := range wrap {
		for _, bad := range []string{"lots", "0", "-1", "3GiB", "1.5.5MB"} {
			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(fmt.Sprintf(cf, bad)), nil)
			require.Error(t, err, "%s %s", opt, bad)
			assert.Contains(t, err.Error(),
				fmt.Sprintf("%s: invalid size %q (a positive size up to 2GiB, such as 512KiB or 64MiB)", opt, bad))
		}
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(fmt.Sprintf(cf, "64MiB")), nil)
		assert.NoError(t, err, opt)
	}
}

// The root Caddyfile's default site address is a port, not a host: a
// client that names the gateway localhost, 127.0.0.1 or a DNS name gets
// the catalog, not Caddy's empty 200 for an unknown host.
func TestRootCaddyfileAnswersAnyHostName(t *testing.T) {
	addr, _, _ := rootCaddyfile(t)
	port := strings.Split(addr, ":")[1]
	t.Setenv("LAKEGATE_ADDR", "")
	require.NoError(t, os.Unsetenv("LAKEGATE_ADDR")) // the Caddyfile's default, with this port
	caddyfile, err := os.ReadFile("../../Caddyfile")
	require.NoError(t, err)
	cf := strings.Replace(string(caddyfile), "{$LAKEGATE_ADDR::8181}", "{$LAKEGATE_ADDR::"+port+"}", 1)
	require.NotEqual(t, string(caddyfile), cf, "the Caddyfile's site address changed: update this test")
	startCaddy(t, adapt(t, []byte(cf)))
	get(t, "http://"+addr+"/v1/config") // wait for the listener
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "lake.example.com"} {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/config", nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Overrides map[string]string `json:"overrides"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body), host)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, host)
		assert.Equal(t, "local", body.Overrides["prefix"], host)
	}
}

// A request no handler answers is a 404 in the Iceberg error model, not
// Caddy's empty 200, which clients take for success; the other doors of
// the site still answer their own paths.
func TestRootCaddyfileUnknownPathIs404(t *testing.T) {
	addr, _, cfg := rootCaddyfile(t)
	startCaddy(t, cfg)
	base := "http://" + addr
	get(t, base+"/v1/config") // wait for the listener
	for _, path := range []string{"/", "/v2/config", "/api/2.0/unity-catalog/tables", "/favicon.ico"} {
		status, body := do(t, http.MethodGet, base+path, "", "", nil)
		assert.Equal(t, http.StatusNotFound, status, path)
		assert.Equal(t, "NotFoundException", errorType(body), "%s: %s", path, body)
		assert.Contains(t, string(body), "no such endpoint: GET "+path)
	}
	// Below /api/2.1/unity-catalog/ lakegate_delta answers, in UC's model.
	status, body := do(t, http.MethodGet, base+"/api/2.1/unity-catalog/volumes", "", "", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, string(body), `"error_code":"NOT_FOUND"`)
	status, body = do(t, http.MethodHead, base+"/nothing", "", "", nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Empty(t, body, "a HEAD answer has no body")

	status, body = do(t, http.MethodGet, base+"/api/2.1/unity-catalog/delta/v1/config?catalog=local&protocol-versions=1.0", "", "", nil)
	assert.Equal(t, http.StatusOK, status, "%s", body)
}

// The root Caddyfile writes an access log by default: JSON on stderr, the
// logger that carries lakegate's record (TestTelemetryCountsWhatHappened
// checks what a line holds).
func TestRootCaddyfileLogsEachRequest(t *testing.T) {
	_, _, cfg := rootCaddyfile(t)
	var doc struct {
		Logging struct {
			Logs map[string]struct {
				Writer  map[string]any `json:"writer"`
				Encoder map[string]any `json:"encoder"`
				Include []string       `json:"include"`
			} `json:"logs"`
		} `json:"logging"`
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Logs *struct {
						LoggerNames map[string]any `json:"logger_names"`
					} `json:"logs"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	require.NoError(t, json.Unmarshal(cfg, &doc))
	var servers int
	for name, srv := range doc.Apps.HTTP.Servers {
		require.NotNil(t, srv.Logs, "server %s logs its requests", name)
		servers++
	}
	require.Equal(t, 1, servers)
	var access int
	for _, l := range doc.Logging.Logs {
		for _, inc := range l.Include {
			if strings.HasPrefix(inc, "http.log.access") {
				access++
				assert.Equal(t, "json", l.Encoder["format"])
				assert.Equal(t, "stderr", l.Writer["output"])
			}
		}
	}
	assert.Equal(t, 1, access, "one access logger: %s", cfg)
}

// The issuer's clients: client_secret is hashed with bcrypt at adapt time
// (salted, so the test verifies the hash rather than comparing strings);
// client takes a bcrypt hash as it is, or the deprecated hex SHA-256.
func TestAdaptIssuerClients(t *testing.T) {
	given, err := bcrypt.GenerateFromPassword([]byte("spark-secret"), bcrypt.DefaultCost+1)
	require.NoError(t, err)
	legacy := identity.HashSecret("legacy-secret")
	caddyfile := []byte(fmt.Sprintf(`{
	lakegate {
		identity {
			issuer {
				client_secret reader reader-secret reader analysts
				client spark %s writer
				client old %s
			}
		}
	}
}
:8080 {
	lakegate_iceberg
}`, given, legacy))
	out := adapt(t, caddyfile)
	lg := appJSON(t, out, "lakegate")
	assert.NotContains(t, lg, "reader-secret")
	var app struct {
		Identity struct {
			Issuer struct {
				Clients []map[string]any `json:"clients"`
			} `json:"issuer"`
		} `json:"identity"`
	}
	require.NoError(t, json.Unmarshal([]byte(lg), &app))
	clients := app.Identity.Issuer.Clients
	require.Len(t, clients, 3)

	reader := clients[0]
	assert.Equal(t, []any{"reader", "analysts"}, reader["groups"])
	assert.NotContains(t, reader, "secret_sha256")
	hash, _ := reader["secret_bcrypt"].(string)
	require.NoError(t, bcrypt.CompareHashAndPassword([]byte(hash), []byte("reader-secret")))
	assert.Error(t, bcrypt.CompareHashAndPassword([]byte(hash), []byte("reader-secreT")))
	cost, err := bcrypt.Cost([]byte(hash))
	require.NoError(t, err)
	assert.Equal(t, bcrypt.DefaultCost, cost)
	again := appJSON(t, adapt(t, caddyfile), "lakegate")
	assert.NotContains(t, again, hash, "salted: every adapt hashes anew")

	assert.Equal(t, map[string]any{"id": "spark", "secret_bcrypt": string(given), "groups": []any{"writer"}}, clients[1])
	assert.Equal(t, map[string]any{"id": "old", "secret_sha256": legacy}, clients[2])

	// What adapt made, the issuer loads; the secret gets a token.
	var cfg struct {
		Identity struct {
			Issuer identity.IssuerConfig `json:"issuer"`
		} `json:"identity"`
	}
	require.NoError(t, json.Unmarshal([]byte(lg), &cfg))
	_, err = identity.NewIssuer(cfg.Identity.Issuer)
	require.NoError(t, err)
}

func TestAdaptRejectsBadIssuerClients(t *testing.T) {
	long := strings.Repeat("x", 73)
	for name, tc := range map[string]struct{ line, want string }{
		"client_secret without secret": {"client_secret reader", "wrong argument count"},
		"client without hash":          {"client reader", "wrong argument count"},
		"secret beyond bcrypt's 72":    {"client_secret reader " + long, "client_secret reader: the secret is 73 bytes; bcrypt uses at most 72"},
	} {
		t.Run(name, func(t *testing.T) {
			cf := "{\n lakegate {\n identity {\n issuer {\n " + tc.line + "\n }\n }\n }\n}"
			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), long)
		})
	}
}

// Every block of the grammar names itself when an option is unknown.
func TestCaddyfileUnknownOptionNamesItsBlock(t *testing.T) {
	app := func(body string) string { return "{\n lakegate {\n" + body + "\n }\n}\n" }
	catalog := func(body string) string { return app("catalog a {\n" + body + "\n}") }
	remote := func(body string) string { return catalog("remote http://x {\n" + body + "\n}") }
	site := func(body string) string { return "http://127.0.0.1:8181 {\n" + body + "\n}\n" }
	for want, cf := range map[string]string{
		`unknown lakegate option "colour"`:                                            app("colour blue"),
		`unknown cache option "colour"`:                                               app("cache {\ncolour blue\n}"),
		`unknown identity option "colour"`:                                            app("identity {\ncolour blue\n}"),
		`unknown jwt option "colour"`:                                                 app("identity {\njwt {\ncolour blue\n}\n}"),
		`unknown issuer option "colour"`:                                              app("identity {\nissuer {\ncolour blue\n}\n}"),
		`unknown policy option "colour"`:                                              app("policy {\ncolour blue\n}"),
		`unknown catalog option "colour"`:                                             catalog("colour blue"),
		`unknown embedded option "colour"`:                                            catalog("embedded {\ncolour blue\n}"),
		`unknown unified option "colour"`:                                             catalog("unified {\ncolour blue\n}"),
		`unknown idempotency option "colour"`:                                         catalog("idempotency {\ncolour blue\n}"),
		`unknown cache option "max_entries"`:                                          catalog("cache {\nmax_entries 1\n}"),
		`unknown remote option "colour"`:                                              remote("colour blue"),
		`unknown oauth2 option "colour"`:                                              remote("auth oauth2 {\ncolour blue\n}"),
		`unknown sigv4 option "colour"`:                                               remote("auth sigv4 {\ncolour blue\n}"),
		`unknown tls option "colour"`:                                                 remote("tls {\ncolour blue\n}"),
		`unknown breaker option "colour"`:                                             remote("breaker {\ncolour blue\n}"),
		`unknown auth mode "magic" (want none, bearer, passthrough, oauth2 or sigv4)`: remote("auth magic"),
		`unknown lakegate_delta option "colour"`:                                      site("lakegate_delta {\ncolour blue\n}"),
		`unknown lakegate_sharing option "colour"`:                                    site("lakegate_sharing {\ncolour blue\n}"),
		`unknown share option "colour"`:                                               site("lakegate_sharing {\nshare s {\ncolour blue\n}\n}"),
		`unknown schema option "colour"`:                                              site("lakegate_sharing {\nshare s {\nschema sc {\ncolour blue\n}\n}\n}"),
		`lakegate_iceberg takes no options, got "colour"`:                             site("lakegate_iceberg {\ncolour blue\n}"),
	} {
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), nil)
		if assert.Error(t, err, cf) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

// prefixless_paths (issue 38): ClickHouse sends DROP TABLE without the
// prefix /v1/config gave it, which reached the default catalog and
// dropped a same-named table there. "off" refuses the form, a catalog
// name confines it to that catalog; the default stays default_catalog.
func TestPrefixlessPaths(t *testing.T) {
	dir := t.TempDir()
	serve := func(option string) string {
		addr := freeAddr(t)
		cfg := fmt.Sprintf(`{
	admin off
	lakegate {
		default_catalog one
		%[3]s
		catalog one {
			embedded {
				dsn %[1]s/one.db
				warehouse %[1]s/wh1
			}
		}
		catalog two {
			embedded {
				dsn %[1]s/two.db
				warehouse %[1]s/wh2
			}
		}
	}
}
http://%[2]s {
	lakegate_iceberg
}`, dir, addr, option)
		startCaddy(t, adapt(t, []byte(cfg)))
		return "http://" + addr
	}
	for _, tc := range []struct {
		option string
		status int
		holds  string // the catalog /v1/namespaces lists
	}{{"", http.StatusOK, "one"}, {"prefixless_paths two", http.StatusOK, "two"}, {"prefixless_paths off", http.StatusBadRequest, ""}} {
		t.Run(tc.option, func(t *testing.T) {
			base := serve(tc.option)
			for _, cat := range []string{"one", "two"} {
				status, b, _ := post(t, base+"/v1/"+cat+"/namespaces", "",
					`{"namespace":["only_`+cat+`_`+strings.ReplaceAll(tc.option, " ", "_")+`"]}`)
				require.Equal(t, http.StatusOK, status, b)
			}
			status, body := get(t, base+"/v1/namespaces")
			require.Equal(t, tc.status, status, "%v", body)
			if tc.holds != "" {
				require.Contains(t, fmt.Sprint(body["namespaces"]), "only_"+tc.holds)
			} else {
				require.Contains(t, body["error"].(map[string]any)["message"], "prefixless_paths off")
			}
			// the prefixed form and /v1/config are untouched
			status, _ = get(t, base+"/v1/two/namespaces")
			require.Equal(t, http.StatusOK, status)
			status, _ = get(t, base+"/v1/config")
			require.Equal(t, http.StatusOK, status)
		})
	}
}
