package icerest

import "strings"

// ETagMatches implements If-None-Match's weak comparison of etag against
// the header's list (or "*").
func ETagMatches(header, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// SecretKeyParts are the parts of a key's name that make it secret
// (lower case).
var SecretKeyParts = []string{"secret", "token", "password", "sas", "credential", "access-key-id", "session",
	"account-key", "account.key", "shared-key", "connection-string", "private-key"}

// IsSecretConfigKey tells config and property keys that carry credentials
// (s3.secret-access-key, s3.session-token, token, adls.sas-token.*,
// gcs.oauth2.token, passwords, and Azure's account keys and connection
// strings: adls.account-key, adls.auth.shared-key.account.key,
// adls.connection-string, azure.account-key): never logged, advertised,
// or shared between principals.
func IsSecretConfigKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range SecretKeyParts {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// SignerConfigKeys are the config keys that send a client to a remote
// signer for its storage requests (Iceberg Java reads signer.* first, the
// deprecated s3.signer.* after; PyIceberg reads s3.signer*).
var SignerConfigKeys = []string{"s3.remote-signing-enabled", "s3.signer", "s3.signer.uri", "s3.signer.endpoint", "signer.uri", "signer.endpoint"}

// IsSignerConfigKey reports one of SignerConfigKeys.
func IsSignerConfigKey(k string) bool {
	for _, s := range SignerConfigKeys {
		if k == s {
			return true
		}
	}
	return false
}
