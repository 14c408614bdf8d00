package examples_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/lakegate/lakegate/modules/gateway"
)

// wantCatalog is what one catalog of an example must adapt to.
type wantCatalog struct {
	name string
	// embedded backend: its dsn; remote backend: url (and the rest).
	embeddedDSN string
	remoteURL   string
	warehouse   string // checked when non-empty
	prefix      string // checked when non-empty
	auth        string // remote auth mode ("none" also matches no auth)
	service     string // sigv4 service, checked when non-empty
	// unified backend: its default member and its routes' member catalogs.
	unifiedDefault string
	unifiedRoutes  []string
}

// exampleCase is one adaptation of an example: the environment it runs
// with (every other placeholder the file uses is unset) and what comes
// out.
type exampleCase struct {
	env            map[string]string
	defaultCatalog string
	catalogs       []wantCatalog
	adminListen    string // checked when non-empty
}

// examples lists, per examples/<dir>/Caddyfile, a run on the file's
// defaults (only required variables set) and a run with everything set.
var examples = map[string]map[string]exampleCase{
	"unified": {
		"defaults": {
			defaultCatalog: "all",
			adminListen:    "localhost:2019",
			catalogs: []wantCatalog{
				{name: "first", embeddedDSN: dataDSN("", "first")},
				{name: "second", embeddedDSN: dataDSN("", "second")},
				{name: "third", embeddedDSN: dataDSN("", "third")},
				{name: "all", unifiedDefault: "third", unifiedRoutes: []string{"first", "second"}},
			},
		},
		"env": {
			env:            map[string]string{"LAKEGATE_DATA": "/srv/lakegate", "LAKEGATE_ADDR": ":8282"},
			defaultCatalog: "all",
			catalogs: []wantCatalog{
				{name: "first", embeddedDSN: dataDSN("/srv/lakegate", "first")},
				{name: "second", embeddedDSN: dataDSN("/srv/lakegate", "second")},
				{name: "third", embeddedDSN: dataDSN("/srv/lakegate", "third")},
				{name: "all", unifiedDefault: "third", unifiedRoutes: []string{"first", "second"}},
			},
		},
	},
	"storage": {
		"defaults": {
			env: map[string]string{"LAKEGATE_WAREHOUSE": "s3://lake/warehouse", "LAKEGATE_S3_ENDPOINT": "http://127.0.0.1:9000",
				"LAKEGATE_STS_ENDPOINT": "http://127.0.0.1:9000"},
			defaultCatalog: "lake",
			adminListen:    "localhost:2019",
			catalogs:       []wantCatalog{{name: "lake", embeddedDSN: dataDSN("", "storage")}},
		},
	},
	"storage-remote": {
		"defaults": {
			env: map[string]string{"UPSTREAM_URL": "http://127.0.0.1:8282", "LAKEGATE_WAREHOUSE": "s3://lake/ref",
				"LAKEGATE_S3_ENDPOINT": "http://127.0.0.1:9000", "LAKEGATE_ROLE_ARN": "arn:aws:iam::123456789012:role/lakegate"},
			defaultCatalog: "lake",
			adminListen:    "localhost:2019",
			catalogs:       []wantCatalog{{name: "lake", remoteURL: "http://127.0.0.1:8282", auth: "none"}},
		},
	},
	"sharing": {
		"defaults": {
			defaultCatalog: "local",
			adminListen:    "localhost:2019",
			catalogs:       []wantCatalog{{name: "local", embeddedDSN: repoDataDSN}},
		},
	},
	"remote": {
		"defaults": {
			env:            map[string]string{"UPSTREAM_URL": "http://127.0.0.1:8282"},
			defaultCatalog: "local",
			adminListen:    "localhost:2019",
			catalogs: []wantCatalog{
				{name: "local", embeddedDSN: repoDataDSN},
				{name: "remote", remoteURL: "http://127.0.0.1:8282", auth: "none"},
				{name: "both", unifiedDefault: "local", unifiedRoutes: []string{"remote"}},
			},
		},
		"env": {
			env: map[string]string{
				"UPSTREAM_URL":        "https://catalog.example.test/api/catalog",
				"UPSTREAM_WAREHOUSE":  "sales",
				"LAKEGATE_DATA":       "/srv/lakegate",
				"LAKEGATE_ADMIN_PORT": "2020",
				"LAKEGATE_ADDR":       ":8181",
				"LAKEGATE_BIND":       "0.0.0.0",
			},
			defaultCatalog: "local",
			adminListen:    "localhost:2020",
			catalogs: []wantCatalog{
				{name: "local", embeddedDSN: "/srv/lakegate/local/catalog.db"},
				{name: "remote", remoteURL: "https://catalog.example.test/api/catalog", warehouse: "sales", auth: "none"},
				{name: "both", unifiedDefault: "local", unifiedRoutes: []string{"remote"}},
			},
		},
	},
	"policy": {
		"defaults": {
			env:            map[string]string{"UPSTREAM_URL": "http://127.0.0.1:8282"},
			defaultCatalog: "local",
			adminListen:    "localhost:2019",
			catalogs: []wantCatalog{
				{name: "local", embeddedDSN: repoDataDSN},
				{name: "remote", remoteURL: "http://127.0.0.1:8282", auth: "none"},
			},
		},
	},
	"polaris": {
		"defaults": {
			env:            map[string]string{"POLARIS_CLIENT_ID": "id"},
			defaultCatalog: "polaris",
			catalogs: []wantCatalog{{name: "polaris", remoteURL: "http://127.0.0.1:8181/api/catalog",
				warehouse: "quickstart_catalog", auth: "oauth2"}},
		},
		"env": {
			env: map[string]string{
				"POLARIS_URL":           "https://polaris.example.test/api/catalog",
				"POLARIS_CATALOG":       "prod",
				"POLARIS_CLIENT_ID":     "id",
				"POLARIS_CLIENT_SECRET": "from-env",
			},
			defaultCatalog: "polaris",
			catalogs: []wantCatalog{{name: "polaris", remoteURL: "https://polaris.example.test/api/catalog",
				warehouse: "prod", auth: "oauth2"}},
		},
	},
	"nessie": {
		"defaults": {
			defaultCatalog: "nessie",
			// no prefix: the one Nessie advertises for the warehouse
			catalogs: []wantCatalog{{name: "nessie", remoteURL: "http://127.0.0.1:19120/iceberg",
				auth: "none"}},
		},
		"env": {
			env: map[string]string{
				"NESSIE_URL":       "http://nessie.example.test:19120/iceberg",
				"NESSIE_WAREHOUSE": "sales",
				"NESSIE_PREFIX":    "main%7Csales",
			},
			defaultCatalog: "nessie",
			catalogs: []wantCatalog{{name: "nessie", remoteURL: "http://nessie.example.test:19120/iceberg",
				warehouse: "sales", prefix: "main%7Csales", auth: "none"}},
		},
	},
	"glue": {
		"defaults": {
			env:            map[string]string{"GLUE_WAREHOUSE": "123456789012"},
			defaultCatalog: "glue",
			catalogs: []wantCatalog{{name: "glue", remoteURL: "https://glue.us-east-1.amazonaws.com/iceberg",
				warehouse: "123456789012", auth: "sigv4", service: "glue"}},
		},
		"env": {
			env: map[string]string{
				"GLUE_WAREHOUSE": "123456789012:s3tablescatalog/bucket",
				"AWS_REGION":     "eu-central-1",
			},
			defaultCatalog: "glue",
			catalogs: []wantCatalog{{name: "glue", remoteURL: "https://glue.eu-central-1.amazonaws.com/iceberg",
				warehouse: "123456789012:s3tablescatalog/bucket", auth: "sigv4", service: "glue"}},
		},
	},
	"s3tables": {
		"defaults": {
			env:            map[string]string{"S3TABLES_BUCKET_ARN": "arn:aws:s3tables:us-east-1:123456789012:bucket/b"},
			defaultCatalog: "s3tables",
			catalogs: []wantCatalog{{name: "s3tables", remoteURL: "https://s3tables.us-east-1.amazonaws.com/iceberg",
				warehouse: "arn:aws:s3tables:us-east-1:123456789012:bucket/b", auth: "sigv4", service: "s3tables"}},
		},
		"env": {
			env: map[string]string{
				"S3TABLES_BUCKET_ARN": "arn:aws:s3tables:eu-west-1:123456789012:bucket/b",
				"AWS_REGION":          "eu-west-1",
			},
			defaultCatalog: "s3tables",
			catalogs: []wantCatalog{{name: "s3tables", remoteURL: "https://s3tables.eu-west-1.amazonaws.com/iceberg",
				warehouse: "arn:aws:s3tables:eu-west-1:123456789012:bucket/b", auth: "sigv4", service: "s3tables"}},
		},
	},
	"lakekeeper": {
		"defaults": {
			env:            map[string]string{"LAKEKEEPER_CLIENT_ID": "id"},
			defaultCatalog: "lakekeeper",
			catalogs: []wantCatalog{{name: "lakekeeper", remoteURL: "http://127.0.0.1:8181/catalog",
				warehouse: "demo", auth: "oauth2"}},
		},
		"env": {
			env: map[string]string{
				"LAKEKEEPER_URL":           "https://lakekeeper.example.test/catalog",
				"LAKEKEEPER_WAREHOUSE":     "prod",
				"LAKEKEEPER_TOKEN_URL":     "https://idp.example.test/realms/iceberg/protocol/openid-connect/token",
				"LAKEKEEPER_CLIENT_ID":     "id",
				"LAKEKEEPER_CLIENT_SECRET": "from-env",
			},
			defaultCatalog: "lakekeeper",
			catalogs: []wantCatalog{{name: "lakekeeper", remoteURL: "https://lakekeeper.example.test/catalog",
				warehouse: "prod", auth: "oauth2"}},
		},
	},
	"gravitino": {
		"defaults": {
			defaultCatalog: "gravitino",
			catalogs:       []wantCatalog{{name: "gravitino", remoteURL: "http://127.0.0.1:9001/iceberg", auth: "none"}},
		},
		"env": {
			env: map[string]string{
				"GRAVITINO_URL":     "http://gravitino.example.test:9001/iceberg",
				"GRAVITINO_CATALOG": "hive_backend",
			},
			defaultCatalog: "gravitino",
			catalogs: []wantCatalog{{name: "gravitino", remoteURL: "http://gravitino.example.test:9001/iceberg",
				warehouse: "hive_backend", prefix: "hive_backend", auth: "none"}},
		},
	},
	"unity": {
		"defaults": {
			defaultCatalog: "unity",
			catalogs: []wantCatalog{{name: "unity", remoteURL: "http://127.0.0.1:8080/api/2.1/unity-catalog/iceberg",
				warehouse: "unity", auth: "bearer"}},
		},
		"env": {
			env: map[string]string{
				"UC_URL":     "https://uc.example.test/api/2.1/unity-catalog/iceberg",
				"UC_CATALOG": "main",
				"UC_TOKEN":   "from-env",
			},
			defaultCatalog: "unity",
			catalogs: []wantCatalog{{name: "unity", remoteURL: "https://uc.example.test/api/2.1/unity-catalog/iceberg",
				warehouse: "main", auth: "bearer"}},
		},
	},
}

// repoDataDSN is the SQLite file of the examples' embedded catalog by
// default: {$LAKEGATE_DATA:../../data}/local/catalog.db, relative to the
// example's Caddyfile, so the repository's data directory (the root
// Caddyfile's), made absolute by the adapter.
var repoDataDSN = func() string {
	p, err := filepath.Abs(filepath.Join("..", "data", "local", "catalog.db"))
	if err != nil {
		panic(err)
	}
	return p
}()

// dataDSN is the SQLite file of an example's embedded catalog name under
// the data directory dir ("": the repository's, as repoDataDSN).
func dataDSN(dir, name string) string {
	if dir == "" {
		dir = filepath.Dir(filepath.Dir(repoDataDSN))
	}
	return filepath.Join(dir, name, "catalog.db")
}

// adapted is the part of the adapted JSON config the test looks at.
type adapted struct {
	Admin struct {
		Listen string `json:"listen"`
	} `json:"admin"`
	Apps struct {
		Lakegate struct {
			DefaultCatalog string `json:"default_catalog"`
			Catalogs       []struct {
				Name     string `json:"name"`
				Embedded *struct {
					DSN string `json:"dsn"`
				} `json:"embedded"`
				Remote *struct {
					URL       string `json:"url"`
					Warehouse string `json:"warehouse"`
					Prefix    string `json:"prefix"`
					Auth      struct {
						Mode    string `json:"mode"`
						Service string `json:"service"`
					} `json:"auth"`
				} `json:"remote"`
				Unified *struct {
					Default string `json:"default"`
					Routes  []struct {
						Catalog string `json:"catalog"`
					} `json:"routes"`
				} `json:"unified"`
			} `json:"catalogs"`
		} `json:"lakegate"`
		HTTP json.RawMessage `json:"http"`
	} `json:"apps"`
}

var placeholder = regexp.MustCompile(`\{\$([A-Za-z0-9_]+)`)

func exampleFiles(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("*", "Caddyfile"))
	require.NoError(t, err)
	files := map[string]string{}
	for _, p := range paths {
		files[filepath.Dir(p)] = p
	}
	return files
}

// TestExamplesAreListed keeps the table above and examples/*/Caddyfile in
// step: a new example needs expectations, a removed one loses them.
func TestExamplesAreListed(t *testing.T) {
	files := exampleFiles(t)
	for dir := range files {
		assert.Contains(t, examples, dir, "examples/%s/Caddyfile has no expectations in examples_test.go", dir)
	}
	for dir := range examples {
		assert.Contains(t, files, dir, "examples/%s/Caddyfile is missing", dir)
	}
}

// TestExamplesAdapt adapts every example with Caddy's caddyfile adapter
// and checks the lakegate app it produces.
func TestExamplesAdapt(t *testing.T) {
	for dir, path := range exampleFiles(t) {
		cases, ok := examples[dir]
		if !ok {
			continue // reported by TestExamplesAreListed
		}
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		for name, tc := range cases {
			t.Run(dir+"/"+name, func(t *testing.T) {
				// Placeholders are expanded at adapt time: start from a
				// clean slate so only tc.env decides.
				for _, m := range placeholder.FindAllStringSubmatch(string(body), -1) {
					t.Setenv(m[1], "") // restores the old value afterwards
					require.NoError(t, os.Unsetenv(m[1]))
				}
				for k, v := range tc.env {
					t.Setenv(k, v)
				}

				out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt(body,
					map[string]any{"filename": path})
				require.NoError(t, err)
				assert.Empty(t, warnings)
				// Secrets stay run-time placeholders ({env.*}): the
				// adapted config never holds their values.
				assert.NotContains(t, string(out), "from-env")

				var cfg adapted
				require.NoError(t, json.Unmarshal(out, &cfg), "%s", out)
				if tc.adminListen != "" {
					assert.Equal(t, tc.adminListen, cfg.Admin.Listen)
				}
				assert.Contains(t, string(cfg.Apps.HTTP), `"handler":"lakegate_iceberg"`)

				app := cfg.Apps.Lakegate
				assert.Equal(t, tc.defaultCatalog, app.DefaultCatalog)
				var names []string
				for _, c := range app.Catalogs {
					names = append(names, c.Name)
				}
				var wantNames []string
				for _, w := range tc.catalogs {
					wantNames = append(wantNames, w.name)
				}
				require.Equal(t, wantNames, names, "catalog names")

				for i, w := range tc.catalogs {
					c := app.Catalogs[i]
					if w.unifiedDefault != "" {
						assert.Nil(t, c.Remote, "%s: remote backend", w.name)
						assert.Nil(t, c.Embedded, "%s: embedded backend", w.name)
						if assert.NotNil(t, c.Unified, "%s: unified backend", w.name) {
							assert.Equal(t, w.unifiedDefault, c.Unified.Default, "%s: default member", w.name)
							var members []string
							for _, r := range c.Unified.Routes {
								members = append(members, r.Catalog)
							}
							assert.Equal(t, w.unifiedRoutes, members, "%s: route members", w.name)
						}
						continue
					}
					if w.remoteURL == "" {
						assert.Nil(t, c.Remote, "%s: remote backend", w.name)
						if assert.NotNil(t, c.Embedded, "%s: embedded backend", w.name) {
							assert.Equal(t, w.embeddedDSN, c.Embedded.DSN, "%s: dsn", w.name)
						}
						continue
					}
					assert.Nil(t, c.Embedded, "%s: embedded backend", w.name)
					if !assert.NotNil(t, c.Remote, "%s: remote backend", w.name) {
						continue
					}
					r := c.Remote
					assert.Equal(t, w.remoteURL, r.URL, "%s: url", w.name)
					if w.warehouse != "" {
						assert.Equal(t, w.warehouse, r.Warehouse, "%s: warehouse", w.name)
					}
					if w.prefix != "" {
						assert.Equal(t, w.prefix, r.Prefix, "%s: prefix", w.name)
					}
					mode := r.Auth.Mode
					if mode == "" && w.auth == "none" {
						mode = "none"
					}
					assert.Equal(t, w.auth, mode, "%s: auth mode", w.name)
					if w.service != "" {
						assert.Equal(t, w.service, r.Auth.Service, "%s: sigv4 service", w.name)
					}
				}
			})
		}
	}
}

// secretOptions are the Caddyfile options whose value is a credential.
var secretOptions = []string{
	"token", "client_secret", "access_key_id", "secret_access_key", "session_token",
	"auth_token",                    // embedded
	"signing_secret", "signing_key", // issuer, sharing
}

// envOnly matches a value that is nothing but one environment placeholder
// without a default (a default would be a literal secret).
var envOnly = regexp.MustCompile(`^"?\{env\.[A-Za-z0-9_]+\}"?$`)

// TestExamplesTakeSecretsFromEnv: credentials in the examples come only
// from run-time {env.*} placeholders (lakegate refuses literals; {$VAR}
// would put the value in the adapted config), except what adapt hashes,
// and comments hold no {$VAR} (Caddy expands them in comments too).
func TestExamplesTakeSecretsFromEnv(t *testing.T) {
	for dir, path := range exampleFiles(t) {
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		for i, line := range strings.Split(string(body), "\n") {
			where := dir + "/Caddyfile:" + strconv.Itoa(i+1)
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "#") {
				assert.NotContains(t, trimmed, "{$", "%s: placeholder in a comment", where)
				continue
			}
			f := strings.Fields(trimmed)
			switch {
			case len(f) == 0:
			case f[0] == "client_secret" && len(f) >= 3:
				// lakegate's own issuer: client_secret <id> <secret> [groups]; a
				// local try-out default is allowed, the value still comes from env.
				assert.Regexp(t, `^\{\$[A-Z0-9_]+(:[^}]*)?\}$`, f[2], "%s: issuer client secret must come from the environment", where)
			case slices.Contains(secretOptions, f[0]):
				if assert.Len(t, f, 2, "%s: %s takes one value", where, f[0]) {
					assert.Regexp(t, envOnly, f[1], "%s: %s must be an {env.*} placeholder", where, f[0])
				}
			case f[0] == "auth" && len(f) > 1 && f[1] == "bearer":
				if assert.Len(t, f, 3, "%s: auth bearer takes one token", where) {
					assert.Regexp(t, envOnly, f[2], "%s: bearer token must be an {env.*} placeholder", where)
				}
			case f[0] == "recipient" && len(f) >= 4 && f[2] == "token":
				// Delta Sharing recipient: like the issuer's secret, a try-out
				// default is allowed; adapt stores only its hash.
				assert.Regexp(t, `^\{\$[A-Z0-9_]+(:[^}]*)?\}$`, f[3], "%s: recipient token must come from the environment", where)
			case f[0] == "auth_client":
				if assert.Len(t, f, 3, "%s: auth_client takes id and secret", where) {
					assert.Regexp(t, envOnly, f[2], "%s: client secret must be an {env.*} placeholder", where)
				}
			}
		}
	}
}

// TestSharingExample: the share the sharing example documents, with the
// recipient token stored only as its hash.
func TestSharingExample(t *testing.T) {
	body, err := os.ReadFile("sharing/Caddyfile")
	require.NoError(t, err)
	t.Setenv("SHARE_NAMESPACE", "sales")
	t.Setenv("SHARE_TOKEN", "s3cret-recipient")
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": "sharing/Caddyfile"})
	require.NoError(t, err)
	assert.NotContains(t, string(out), "s3cret-recipient", "the token itself never reaches the JSON config")
	sum := sha256.Sum256([]byte("s3cret-recipient"))
	for _, want := range []string{
		`"handler":"lakegate_sharing"`, `"prefix":"/delta-sharing"`, `"name":"demo"`,
		`"token_sha256":"` + hex.EncodeToString(sum[:]) + `"`,
		`"schemas":[{"name":"sales","namespaces":[{"catalog":"local","namespace":["sales"]}]}]`,
	} {
		assert.Contains(t, string(out), want)
	}
}
