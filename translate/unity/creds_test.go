package unity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/translate/delta"
)

// Vended sets become UC's one answer: the set whose prefix covers the
// location most closely, in its cloud's field; a local location is its
// empty set, whatever the catalog vends with it.
func TestCredentials(t *testing.T) {
	s3 := func(prefix, key string) delta.StorageCredential {
		return delta.StorageCredential{Prefix: prefix, ExpirationTimeMs: 7,
			Config: map[string]string{"s3.access-key-id": key, "s3.secret-access-key": "s-" + key, "s3.session-token": "t"}}
	}
	exp := time.UnixMilli(5)
	vended := []delta.StorageCredential{s3("s3://b/", "bucket"), s3("s3://b/t/", "table"), s3("s3://b/t2/", "sibling")}
	got := Credentials("s3://b/t", vended, exp)
	assert.Equal(t, &TemporaryCredentials{URL: "s3://b/t", ExpirationTime: 7,
		AWS: &AWSCredentials{AccessKeyID: "table", SecretAccessKey: "s-table", SessionToken: "t"}}, got)
	assert.Equal(t, "bucket", Credentials("s3://b/other", vended, exp).AWS.AccessKeyID)
	assert.Equal(t, &TemporaryCredentials{URL: "s3://c/t", ExpirationTime: 5}, Credentials("s3://c/t", vended, exp), "no set covers it")

	azure := []delta.StorageCredential{{Prefix: "abfss://c@a.dfs.core.windows.net/t/", ExpirationTimeMs: 9,
		Config: map[string]string{"azure.sas-token": "sas"}}}
	assert.Equal(t, &TemporaryCredentials{URL: "abfss://c@a.dfs.core.windows.net/t", ExpirationTime: 9, Azure: &AzureSAS{SASToken: "sas"}},
		Credentials("abfss://c@a.dfs.core.windows.net/t", azure, exp))
	gcs := []delta.StorageCredential{{Prefix: "gs://b/", Config: map[string]string{"gcs.oauth-token": "tok"}}}
	assert.Equal(t, &GCPToken{OAuthToken: "tok"}, Credentials("gs://b/t", gcs, exp).GCP)

	local := []delta.StorageCredential{s3("file:///w/t/", "k")}
	assert.Equal(t, &TemporaryCredentials{URL: "file:///w/t", ExpirationTime: 5, AWS: &AWSCredentials{}}, Credentials("file:///w/t", local, exp),
		"a local location: an empty set, never the catalog's keys")
}
