package upstream_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/upstream"
)

// fakeIMDS stands in for the EC2 instance metadata service: the SDK is
// pointed at it with AWS_EC2_METADATA_SERVICE_ENDPOINT, and it counts the
// connections it gets (it answers 404 to everything).
func fakeIMDS(t *testing.T) *atomic.Int32 {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.NotFound(w, nil)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", srv.URL)
	return &conns
}

// noAWSEnvironment clears every way the AWS SDK finds credentials: the
// variables, the shared config files (pointed at files that do not
// exist), container and web identity credentials.
func noAWSEnvironment(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_EC2_METADATA_DISABLED", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_DEFAULTS_MODE"} {
		t.Setenv(k, "")
		require.NoError(t, os.Unsetenv(k))
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	return dir
}

func sigv4Remote(url string, a upstream.Auth) (*upstream.Remote, error) {
	a.Mode, a.Region, a.Service = upstream.AuthSigV4, "us-east-1", "glue"
	return upstream.NewRemote("glue", upstream.RemoteConfig{URL: url, Warehouse: "1", Auth: a}, nil)
}

// Without keys and without the opt-in, no credentials configured means the
// backend does not load, with an error naming what to set, and the
// instance metadata service is never asked.
func TestSigV4WithoutCredentialsNeverAsksIMDS(t *testing.T) {
	noAWSEnvironment(t)
	imds := fakeIMDS(t)
	_, err := sigv4Remote("http://127.0.0.1:1/iceberg", upstream.Auth{})
	require.Error(t, err)
	for _, want := range []string{"no AWS credentials are configured", "AWS_ACCESS_KEY_ID", "AWS_PROFILE",
		"access_key_id", "credentials default_chain"} {
		assert.Contains(t, err.Error(), want)
	}
	// Even with IMDS switched on by the environment.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
	_, err = sigv4Remote("http://127.0.0.1:1/iceberg", upstream.Auth{})
	require.Error(t, err)
	assert.Zero(t, imds.Load(), "the instance metadata service was asked")
}

// Keys in the environment, or in a named profile of the shared files,
// are used (the requests are signed with them), and IMDS stays unasked.
func TestSigV4CredentialsFromEnvironmentAndProfile(t *testing.T) {
	dir := noAWSEnvironment(t)
	imds := fakeIMDS(t)
	ep := newSigV4Endpoint(t, "glue", "catalogs/1")

	t.Run("environment", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", testAKID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
		t.Setenv("AWS_SESSION_TOKEN", testToken)
		r, err := sigv4Remote(ep.srv.URL+"/iceberg", upstream.Auth{})
		require.NoError(t, err)
		_, err = r.Config(context.Background())
		require.NoError(t, err, "endpoint: %v", ep.lastErr.Load())
	})

	t.Run("profile", func(t *testing.T) {
		creds := filepath.Join(dir, "credentials")
		require.NoError(t, os.WriteFile(creds, []byte("[lake]\naws_access_key_id = "+testAKID+
			"\naws_secret_access_key = "+testSecret+"\naws_session_token = "+testToken+"\n"), 0o600))
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
		r, err := sigv4Remote(ep.srv.URL+"/iceberg", upstream.Auth{Profile: "lake"})
		require.NoError(t, err)
		_, err = r.Config(context.Background())
		require.NoError(t, err, "endpoint: %v", ep.lastErr.Load())

		_, err = sigv4Remote(ep.srv.URL+"/iceberg", upstream.Auth{Profile: "elsewhere"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "elsewhere")
	})

	assert.Equal(t, int32(2), ep.accepted.Load())
	assert.Zero(t, imds.Load(), "the instance metadata service was asked")
}

// credentials default_chain is the opt-in: the SDK's whole chain, which
// ends at the instance role, so the metadata service is asked (here it
// has no role: the request fails). This also shows fakeIMDS does see the
// SDK's probes.
func TestSigV4DefaultChainAsksIMDS(t *testing.T) {
	noAWSEnvironment(t)
	imds := fakeIMDS(t)
	ep := newSigV4Endpoint(t, "glue", "catalogs/1")
	r, err := sigv4Remote(ep.srv.URL+"/iceberg", upstream.Auth{Credentials: upstream.AWSDefaultChain})
	require.NoError(t, err, "the opt-in loads without credentials: they are looked up per request")
	_, err = r.Config(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EC2 IMDS")
	assert.NotZero(t, imds.Load(), "default_chain did not ask the instance metadata service")
	assert.Zero(t, ep.accepted.Load())
}

func TestSigV4CredentialOptionsChecked(t *testing.T) {
	noAWSEnvironment(t)
	for a, want := range map[upstream.Auth]string{
		{Credentials: "instance"}: `unknown credentials "instance"`,
		{AccessKeyID: "a"}:        "access_key_id and secret_access_key go together",
		{SecretAccessKey: "b"}:    "access_key_id and secret_access_key go together",
		{AccessKeyID: "a", SecretAccessKey: "b", Profile: "p"}:                 "excludes profile",
		{AccessKeyID: "a", SecretAccessKey: "b", Credentials: "x"}:             `unknown credentials "x"`,
		{AccessKeyID: "a", SecretAccessKey: "b", Credentials: "default_chain"}: "excludes profile and credentials",
	} {
		_, err := sigv4Remote("http://127.0.0.1:1/iceberg", a)
		if assert.Error(t, err, "%+v", a) {
			assert.Contains(t, err.Error(), want, "%+v", a)
		}
	}
	_, err := sigv4Remote("http://127.0.0.1:1/iceberg", upstream.Auth{AccessKeyID: "a", SecretAccessKey: "b"})
	assert.NoError(t, err, "static keys, as before")
}
