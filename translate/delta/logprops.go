package delta

import (
	"encoding/json"

	"github.com/lakegate/lakegate/translate/deltalog"
)

// SyncedProperties are the table properties the EXTERNAL sync records
// from a snapshot of the table's log, so that every door reports what the
// log says rather than what the registration said: its protocol, versions
// and features as written (a reader-3/writer-7 log is not the 1/2 a table
// registered without a protocol reports, see defaultProtocol).
func SyncedProperties(snap *deltalog.Snapshot) map[string]string {
	p := snap.Protocol
	b, _ := json.Marshal(protocolOut{MinReaderVersion: int(p.MinReaderVersion), MinWriterVersion: int(p.MinWriterVersion),
		ReaderFeatures: p.ReaderFeatures, WriterFeatures: p.WriterFeatures})
	return map[string]string{PropProtocol: string(b)}
}
