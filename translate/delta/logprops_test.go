package delta

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lakegate/lakegate/translate/deltalog"
)

// Whatever protocol a log has, the synced table reports it as the log
// says: versions, and each feature as delta.feature.<f>=supported.
func TestSyncedProtocolIsTheLogs(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    deltalog.Protocol
		want map[string]string
	}{
		{"legacy 1/2", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			map[string]string{"delta.minReaderVersion": "1", "delta.minWriterVersion": "2"}},
		{"column mapping 2/5", deltalog.Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
			map[string]string{"delta.minReaderVersion": "2", "delta.minWriterVersion": "5"}},
		{"writer features 1/7", deltalog.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly"}},
			map[string]string{"delta.minReaderVersion": "1", "delta.minWriterVersion": "7", "delta.feature.appendOnly": "supported"}},
		{"table features 3/7", deltalog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors", "v2Checkpoint"}, WriterFeatures: []string{"deletionVectors", "v2Checkpoint", "invariants"}},
			map[string]string{"delta.minReaderVersion": "3", "delta.minWriterVersion": "7", "delta.feature.deletionVectors": "supported",
				"delta.feature.v2Checkpoint": "supported", "delta.feature.invariants": "supported"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := SyncedProperties(&deltalog.Snapshot{Protocol: tc.p})
			assert.Equal(t, tc.want, deltaProperties(props))
		})
	}
}
