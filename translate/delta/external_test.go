package delta

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// A failed sync reaches an Iceberg reader in the Iceberg error model.
func TestSyncErrorInIcebergModel(t *testing.T) {
	ref := Ref{Catalog: "lake", Namespace: []string{"sales"}, Name: "events"}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		typ    string
	}{
		{"untranslatable", untranslatable("deletion vectors"), http.StatusNotAcceptable, icerest.UnsupportedOperation},
		{"outside the locations", Errorf(http.StatusForbidden, PermissionDenied, "outside"), http.StatusForbidden, icerest.Forbidden},
		{"dropped meanwhile", Errorf(http.StatusNotFound, NoSuchTable, "gone"), http.StatusNotFound, icerest.NoSuchTable},
		{"lock store down", Errorf(http.StatusServiceUnavailable, InternalServerError, "redis"), http.StatusServiceUnavailable, icerest.ServiceUnavailable},
		{"catalog failed", Errorf(http.StatusBadGateway, InternalServerError, "boom"), http.StatusBadGateway, icerest.InternalServerError},
		{"log unreadable", errors.New("_delta_log/00000000000000000003.json line 2: not JSON"), http.StatusBadGateway, icerest.InternalServerError},
	} {
		got := icerest.AsError(syncError(ref, tc.err))
		assert.Equal(t, tc.status, got.Code, tc.name)
		assert.Equal(t, tc.typ, got.Type, tc.name)
		assert.Contains(t, got.Message, "sales.events", tc.name)
	}
}

// Only EXTERNAL tables without UniForm metadata follow their log.
func TestLogSynced(t *testing.T) {
	assert.True(t, logSynced(map[string]string{PropTableType: External}))
	assert.False(t, logSynced(map[string]string{PropTableType: Managed}))
	assert.False(t, logSynced(map[string]string{PropTableType: External, PropLatestUniform: "s3://b/t/metadata/v3.json"}))
	assert.False(t, logSynced(map[string]string{}))
}
