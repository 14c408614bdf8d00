package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStripCredentials(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"vended credentials and secret config": {
			`{"metadata":{"x":1},"config":{"s3.secret-access-key":"S","s3.region":"eu","token":"T"},"storage-credentials":[{"prefix":"s3://b","config":{"s3.access-key-id":"A"}}]}`,
			`{"config":{"s3.region":"eu"},"metadata":{"x":1}}`},
		"Azure account keys and connection strings (issue 39)": {
			`{"metadata":{"x":1},"config":{"adls.account-name":"acct","adls.account-key":"K1","adls.auth.shared-key.account.key":"K2",` +
				`"adls.connection-string":"DefaultEndpointsProtocol=https;AccountKey=K3","azure.account-key":"K4"}}`,
			`{"config":{"adls.account-name":"acct"},"metadata":{"x":1}}`},
		"a key spelled with JSON escapes": {
			`{"metadata":{"x":1},"config":{"s3.\u0073ecret-access-key":"S","s3.region":"eu"}}`,
			`{"config":{"s3.region":"eu"},"metadata":{"x":1}}`},
		"the backend signer's static headers (they may authenticate to it); its properties stay": {
			`{"metadata":{"x":1},"config":{"signer.uri":"http://signer"},"remote-signing-config":{"properties":{"p":"1"},"headers":{"Authorization":["Bearer T"]}}}`,
			`{"config":{"signer.uri":"http://signer"},"metadata":{"x":1},"remote-signing-config":{"properties":{"p":"1"}}}`},
		"a remote-signing-config that is not an object": {
			`{"metadata":{"x":1},"remote-signing-config":"Bearer T"}`,
			`{"metadata":{"x":1}}`},
		"nothing to strip is passed as is": {
			`{"metadata":{"x":1},  "config":{"s3.region":"eu"}}`,
			`{"metadata":{"x":1},  "config":{"s3.region":"eu"}}`},
		"not JSON is passed as is": {`not json: token`, `not json: token`},
	} {
		t.Run(name, func(t *testing.T) {
			got := string(stripCredentials([]byte(tc.in), false))
			if tc.in == tc.want {
				assert.Equal(t, tc.want, got)
				return
			}
			assert.JSONEq(t, tc.want, got)
		})
	}
}

// A catalog whose storage the gateway governs drops the backend's signer
// whole: its config keys and remote-signing-config.
func TestStripCredentialsDropsTheBackendsSigner(t *testing.T) {
	in := `{"metadata":{"x":1},"config":{"s3.region":"eu","s3.remote-signing-enabled":"true","s3.signer":"S3V4RestSigner",` +
		`"s3.signer.uri":"http://s","s3.signer.endpoint":"e","signer.uri":"http://s","signer.endpoint":"e"},` +
		`"remote-signing-config":{"properties":{"p":"1"}}}`
	assert.JSONEq(t, `{"config":{"s3.region":"eu"},"metadata":{"x":1}}`, string(stripCredentials([]byte(in), true)))
	only := `{"metadata":{"x":1},"config":{"s3.region":"eu","s3.remote-signing-enabled":"true"}}`
	assert.JSONEq(t, `{"config":{"s3.region":"eu"},"metadata":{"x":1}}`, string(stripCredentials([]byte(only), true)))
	plain := `{"metadata":{"x":1},"config":{"s3.region":"eu"}}`
	assert.Equal(t, plain, string(stripCredentials([]byte(plain), true)), "nothing to drop: as is")
}
