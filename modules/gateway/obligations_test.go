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
