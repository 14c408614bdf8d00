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

// IsSecretConfigKey tells config and property keys that carry credentials
// (s3.secret-access-key, s3.session-token, token, adls.sas-token.*,
// gcs.oauth2.token, passwords): never logged, advertised, or shared
// between principals.
func IsSecretConfigKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"secret", "token", "password", "sas", "credential", "access-key-id", "session"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}
