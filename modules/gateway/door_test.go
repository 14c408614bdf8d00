package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A caller no door can authenticate gets a 401 in the error model of the
// API it called, with the same reason from every door, and a Bearer
// challenge; a caller the identity names gets past every door.
func TestUnauthenticatedInEachAPIsModel(t *testing.T) {
	addr := freeAddr(t)
	app := map[string]any{
		"catalogs": []any{remote("lake", "http://127.0.0.1:9", nil)},
		"identity": map[string]any{"required": true, "tokens": []any{tokenFor("alice", "good-token")}},
	}
	base := serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		sharingHandler(map[string]any{"change_data_dir": t.TempDir()}),
		map[string]any{"handler": "lakegate_delta"}, map[string]any{"handler": "lakegate_iceberg"}))
	iceberg := func(reason string) map[string]any {
		return map[string]any{"error": map[string]any{"type": "NotAuthorizedException", "message": reason, "code": 401.0}}
	}
	for _, door := range []struct {
		name, path, contentType string
		body                    func(reason string) map[string]any
	}{
		{"iceberg", "/v1/lake/namespaces", "application/json", iceberg},
		{"delta", deltaAPI + "/config?catalog=lake&protocol-versions=1.0", "application/json", iceberg},
		{"unity", unityAPI + "/catalogs", "application/json", func(reason string) map[string]any {
			return map[string]any{"error_code": "UNAUTHENTICATED", "message": reason, "details": []any{map[string]any{
				"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "UNAUTHENTICATED", "metadata": map[string]any{}}}}
		}},
		{"sharing", "/delta-sharing/shares", "application/json; charset=utf-8", func(reason string) map[string]any {
			return map[string]any{"errorCode": "UNAUTHENTICATED", "message": reason}
		}},
	} {
		for _, tc := range []struct{ token, reason string }{
			{"", "authentication required"},
			{"bad-token", "invalid credentials: unknown token"},
		} {
			status, header, body := doorCall(t, base+door.path, tc.token)
			assert.Equal(t, http.StatusUnauthorized, status, "%s with %q", door.name, tc.token)
			assert.Equal(t, "Bearer", header.Get("WWW-Authenticate"), "%s with %q", door.name, tc.token)
			assert.Equal(t, door.contentType, header.Get("Content-Type"), "%s with %q", door.name, tc.token)
			var got map[string]any
			require.NoError(t, json.Unmarshal(body, &got), "%s: %s", door.name, body)
			assert.Equal(t, door.body(tc.reason), got, "%s with %q", door.name, tc.token)
		}
		status, header, body := doorCall(t, base+door.path, "good-token")
		assert.NotEqual(t, http.StatusUnauthorized, status, "%s: %s", door.name, body)
		assert.Empty(t, header.Get("WWW-Authenticate"), door.name)
	}
}

// doorCall GETs url, as the holder of token when there is one.
func doorCall(t *testing.T, url, token string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}
