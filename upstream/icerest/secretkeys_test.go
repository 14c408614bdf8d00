package icerest

import "testing"

// Every storage credential key a backend may vend is secret (issue 39:
// Azure's account keys reached a principal whose policy strips
// credentials); table properties that only look alike are not.
func TestIsSecretConfigKey(t *testing.T) {
	for _, k := range []string{
		"s3.secret-access-key", "s3.session-token", "s3.access-key-id", "token", "adls.sas-token.acct.dfs.core.windows.net",
		"gcs.oauth2.token", "jdbc.password", "client.credential",
		"adls.account-key", "adls.auth.shared-key.account.key", "adls.connection-string", "azure.account-key",
		"ADLS.Account-Key", "gcs.service-account.private-key",
	} {
		if !IsSecretConfigKey(k) {
			t.Errorf("%s: not secret", k)
		}
	}
	for _, k := range []string{
		"s3.endpoint", "s3.region", "adls.account-name", "write.parquet.compression-codec", "s3.path-style-access",
		"gcs.project-id", "format-version", "write.object-storage.enabled",
	} {
		if IsSecretConfigKey(k) {
			t.Errorf("%s: secret", k)
		}
	}
}
