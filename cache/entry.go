package cache

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
	"unsafe"
)

// entryFormat is the first byte of an entry as Redis holds it. Version 1
// is the meta JSON then the raw body, so an L2 hit decodes a few hundred
// bytes of JSON instead of a base64 body inside JSON (a third larger, and
// decoded byte by byte). An entry in any other format reads as a miss and
// is overwritten by the next fill.
const entryFormat = 1

// entryMeta is an Entry without its body.
type entryMeta struct {
	ContentType      string    `json:"content_type,omitempty"`
	MetadataLocation string    `json:"metadata_location"`
	BackendETag      string    `json:"backend_etag,omitempty"`
	ETag             string    `json:"etag,omitempty"`
	Credentials      bool      `json:"credentials,omitempty"`
	Stored           time.Time `json:"stored"`
}

// encodeEntry frames e as: format byte, uvarint length of the meta JSON,
// the meta JSON, the body.
func encodeEntry(e *Entry) ([]byte, error) {
	meta, err := json.Marshal(entryMeta{
		ContentType: e.ContentType, MetadataLocation: e.MetadataLocation,
		BackendETag: e.BackendETag, ETag: e.ETag, Credentials: e.Credentials, Stored: e.Stored,
	})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(meta)+len(e.Body))
	out = append(out, entryFormat)
	out = binary.AppendUvarint(out, uint64(len(meta)))
	out = append(out, meta...)
	return append(out, e.Body...), nil
}

var errEntryFormat = errors.New("cache entry in an unknown format")

// decodeEntry reads what encodeEntry wrote.
func decodeEntry(raw string) (*Entry, error) {
	if len(raw) == 0 || raw[0] != entryFormat {
		return nil, errEntryFormat
	}
	n, w := binary.Uvarint([]byte(raw[1:min(len(raw), 1+binary.MaxVarintLen64)]))
	if w <= 0 || n > uint64(len(raw)-1-w) {
		return nil, errEntryFormat
	}
	metaEnd := 1 + w + int(n)
	var m entryMeta
	if err := json.Unmarshal([]byte(raw[1+w:metaEnd]), &m); err != nil {
		return nil, err
	}
	e := &Entry{
		Body:        bodyOf(raw[metaEnd:]),
		ContentType: m.ContentType, MetadataLocation: m.MetadataLocation,
		BackendETag: m.BackendETag, ETag: m.ETag, Credentials: m.Credentials, Stored: m.Stored,
	}
	return e, nil
}

// bodyOf is the body's bytes without copying them out of the string
// go-redis read (as its own StringCmd.Bytes does): an L2 hit moves tens of
// KB, and an Entry's Body is never written to, only sent and cloned.
func bodyOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
