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
		"nothing to strip is passed as is": {
			`{"metadata":{"x":1},  "config":{"s3.region":"eu"}}`,
			`{"metadata":{"x":1},  "config":{"s3.region":"eu"}}`},
		"not JSON is passed as is": {`not json: token`, `not json: token`},
	} {
		t.Run(name, func(t *testing.T) {
			got := string(stripCredentials([]byte(tc.in)))
			if tc.in == tc.want {
				assert.Equal(t, tc.want, got)
				return
			}
			assert.JSONEq(t, tc.want, got)
		})
	}
}
