package gateway_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relativePaths is a Caddyfile with a relative path in every option that
// takes a local one, and the non-paths next to them.
const relativePaths = `{
	lakegate {
		policy {
			dir rules
			package lakegate.demo
		}
		catalog local {
			allowed_locations extra s3://bucket/prefix /abs/other
			embedded {
				dsn ./db/catalog.db
				warehouse ./warehouse
			}
		}
		catalog pg {
			embedded {
				database postgres
				dsn postgres://u@127.0.0.1:5432/db
				warehouse s3://bucket/wh
			}
		}
		catalog mem {
			embedded {
				dsn :memory:
				warehouse file:///srv/wh
			}
		}
		catalog up {
			remote http://127.0.0.1:1 {
				tls {
					ca_file certs/ca.pem
				}
			}
		}
	}
}

http://127.0.0.1:8181 {
	lakegate_sharing {
		change_data_dir changes
	}
	lakegate_iceberg
}
`

type pathsConfig struct {
	Apps struct {
		Lakegate struct {
			Policy   struct{ Dir string } `json:"policy"`
			Catalogs []struct {
				AllowedLocations []string `json:"allowed_locations"`
				Embedded         *struct {
					DSN       string `json:"dsn"`
					Warehouse string `json:"warehouse"`
				} `json:"embedded"`
				Remote *struct {
					TLS struct {
						CAFile string `json:"ca_file"`
					} `json:"tls"`
				} `json:"remote"`
			} `json:"catalogs"`
		} `json:"lakegate"`
	} `json:"apps"`
}

func adaptPaths(t *testing.T, body []byte, filename string) (pathsConfig, string) {
	t.Helper()
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(body, map[string]any{"filename": filename})
	require.NoError(t, err)
	var cfg pathsConfig
	require.NoError(t, json.Unmarshal(out, &cfg), "%s", out)
	return cfg, string(out)
}

// Relative paths in a Caddyfile read from a file are that file's
// neighbours (made absolute); URLs, absolute paths, PostgreSQL DSNs and
// :memory: stay as written. From a string (no such file), they keep the
// working directory's meaning, as JSON config does.
func TestCaddyfileRelativePaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	require.NoError(t, os.WriteFile(file, []byte(relativePaths), 0o600))

	cfg, out := adaptPaths(t, []byte(relativePaths), file)
	app := cfg.Apps.Lakegate
	assert.Equal(t, filepath.Join(dir, "rules"), app.Policy.Dir)
	require.Len(t, app.Catalogs, 4)
	assert.Equal(t, []string{filepath.Join(dir, "extra"), "s3://bucket/prefix", "/abs/other"}, app.Catalogs[0].AllowedLocations)
	assert.Equal(t, filepath.Join(dir, "db", "catalog.db"), app.Catalogs[0].Embedded.DSN)
	assert.Equal(t, filepath.Join(dir, "warehouse"), app.Catalogs[0].Embedded.Warehouse)
	assert.Equal(t, "postgres://u@127.0.0.1:5432/db", app.Catalogs[1].Embedded.DSN)
	assert.Equal(t, "s3://bucket/wh", app.Catalogs[1].Embedded.Warehouse)
	assert.Equal(t, ":memory:", app.Catalogs[2].Embedded.DSN)
	assert.Equal(t, "file:///srv/wh", app.Catalogs[2].Embedded.Warehouse)
	assert.Equal(t, filepath.Join(dir, "certs", "ca.pem"), app.Catalogs[3].Remote.TLS.CAFile)
	assert.Contains(t, out, `"change_data_dir":`+jsonString(filepath.Join(dir, "changes")))

	// The same text with no file behind it: as written.
	cfg, out = adaptPaths(t, []byte(relativePaths), filepath.Join(dir, "not-there", "Caddyfile"))
	app = cfg.Apps.Lakegate
	assert.Equal(t, "rules", app.Policy.Dir)
	assert.Equal(t, []string{"extra", "s3://bucket/prefix", "/abs/other"}, app.Catalogs[0].AllowedLocations)
	assert.Equal(t, "./db/catalog.db", app.Catalogs[0].Embedded.DSN)
	assert.Equal(t, "./warehouse", app.Catalogs[0].Embedded.Warehouse)
	assert.Equal(t, "certs/ca.pem", app.Catalogs[3].Remote.TLS.CAFile)
	assert.Contains(t, out, `"change_data_dir":"changes"`)
}

// static_jwks_file, read at adapt time, is the Caddyfile's neighbour too,
// whatever the working directory.
func TestCaddyfileRelativeStaticJWKSFile(t *testing.T) {
	dir := t.TempDir()
	jwks := `{"keys":[]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jwks.json"), []byte(jwks), 0o600))
	cf := "{\n\tlakegate {\n\t\tidentity {\n\t\t\tjwt {\n\t\t\t\tissuer https://idp.example\n" +
		"\t\t\t\tstatic_jwks_file jwks.json\n\t\t\t}\n\t\t}\n\t}\n}\n\nhttp://127.0.0.1:8181 {\n\tlakegate_iceberg\n}\n"
	file := filepath.Join(dir, "Caddyfile")
	require.NoError(t, os.WriteFile(file, []byte(cf), 0o600))
	_, out := adaptPaths(t, []byte(cf), file)
	assert.Contains(t, out, `"static_jwks":`+jsonString(jwks))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An option whose argument is missing says what it expected; when the
// line (read back from the Caddyfile) has an unset {$VAR} without a
// default, the error names the variable. {$VAR:} is optional: its empty
// value is kept.
func TestCaddyfileNamesUnsetVariables(t *testing.T) {
	for _, v := range []string{"LG_TEST_URL", "LG_TEST_WAREHOUSE", "LG_TEST_NAME", "LG_TEST_TOKEN", "LG_TEST_OPTIONAL"} {
		t.Setenv(v, "")
		require.NoError(t, os.Unsetenv(v))
	}
	wrap := func(catalog string) string {
		return "{\n\tlakegate {\n" + catalog + "\n\t}\n}\n\nhttp://127.0.0.1:8181 {\n\tlakegate_iceberg\n}\n"
	}
	cases := []struct{ caddyfile, fromFile, fromString string }{
		{wrap("\t\tcatalog up {\n\t\t\tremote {$LG_TEST_URL} {\n\t\t\t\tauth none\n\t\t\t}\n\t\t}"),
			"remote: missing the backend's base URL (remote <url> { ... }): the environment variable LG_TEST_URL is unset or empty ({$LG_TEST_URL} has no default), at ",
			"remote: missing the backend's base URL (remote <url> { ... }) (an unset {$VAR} placeholder expands to nothing: is its variable set?), at "},
		{wrap("\t\tcatalog up {\n\t\t\tremote http://127.0.0.1:1 {\n\t\t\t\twarehouse \"{$LG_TEST_WAREHOUSE}\"\n\t\t\t}\n\t\t}"),
			"warehouse: its value is empty: the environment variable LG_TEST_WAREHOUSE is unset or empty ({$LG_TEST_WAREHOUSE} has no default), at ",
			""}, // an empty value is fine when nothing says why it is empty
		{wrap("\t\tcatalog {$LG_TEST_NAME} {\n\t\t}"),
			"catalog: missing the catalog's name (catalog <name> { ... }): the environment variable LG_TEST_NAME is unset or empty",
			"catalog: missing the catalog's name (catalog <name> { ... }) (an unset {$VAR} placeholder"},
		{wrap("\t\tcatalog up {\n\t\t\tremote http://127.0.0.1:1 {\n\t\t\t\tauth bearer {$LG_TEST_TOKEN}\n\t\t\t}\n\t\t}"),
			"bearer: missing the token (auth bearer <token>): the environment variable LG_TEST_TOKEN is unset or empty",
			"bearer: missing the token (auth bearer <token>) (an unset {$VAR} placeholder"},
		{wrap("\t\tdefault_catalog a b"), "default_catalog takes one argument (the name of one of the catalogs), got 2, at ",
			"default_catalog takes one argument (the name of one of the catalogs), got 2, at "},
	}
	dir := t.TempDir()
	for i, c := range cases {
		file := filepath.Join(dir, "Caddyfile"+string(rune('a'+i)))
		require.NoError(t, os.WriteFile(file, []byte(c.caddyfile), 0o600))
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(c.caddyfile), map[string]any{"filename": file})
		if assert.Error(t, err, c.caddyfile) {
			assert.Contains(t, err.Error(), c.fromFile)
			assert.NotContains(t, err.Error(), "wrong argument count")
		}
		_, _, err = caddyconfig.GetAdapter("caddyfile").Adapt([]byte(c.caddyfile), map[string]any{"filename": "Caddyfile"})
		if c.fromString == "" {
			assert.NoError(t, err, c.caddyfile)
		} else if assert.Error(t, err, c.caddyfile) {
			assert.Contains(t, err.Error(), c.fromString)
		}
	}

	optional := wrap("\t\tcatalog up {\n\t\t\tremote http://127.0.0.1:1 {\n\t\t\t\twarehouse \"{$LG_TEST_OPTIONAL:}\"\n\t\t\t}\n\t\t}")
	file := filepath.Join(dir, "optional")
	require.NoError(t, os.WriteFile(file, []byte(optional), 0o600))
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(optional), map[string]any{"filename": file})
	assert.NoError(t, err)
}

// auth sigv4 takes profile and credentials (default_chain: the opt-in to
// the instance role).
func TestCaddyfileSigV4CredentialOptions(t *testing.T) {
	cf := "{\n\tlakegate {\n\t\tcatalog glue {\n\t\t\tremote https://glue.us-east-1.amazonaws.com/iceberg {\n" +
		"\t\t\t\tauth sigv4 {\n\t\t\t\t\tregion us-east-1\n\t\t\t\t\tservice glue\n\t\t\t\t\tprofile lake\n" +
		"\t\t\t\t\tcredentials default_chain\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t}\n}\n\nhttp://127.0.0.1:8181 {\n\tlakegate_iceberg\n}\n"
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cf), map[string]any{"filename": "Caddyfile"})
	require.NoError(t, err)
	for _, want := range []string{`"profile":"lake"`, `"credentials":"default_chain"`, `"mode":"sigv4"`} {
		assert.True(t, strings.Contains(string(out), want), "%s in %s", want, out)
	}
}
