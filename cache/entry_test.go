package cache

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEntryRoundTrip(t *testing.T) {
	for _, e := range []*Entry{
		{Body: []byte(`{"metadata-location":"s3://b/t/m.json"}`), ContentType: "application/json",
			MetadataLocation: "s3://b/t/m.json", BackendETag: `"abc"`, ETag: `W/"0123"`, Credentials: true,
			Stored: time.Date(2026, 12, 1, 15, 4, 5, 123456789, time.UTC)},
		{MetadataLocation: "file:///w/t/m.json", Stored: time.Unix(0, 0).UTC()},
		{Body: []byte{0, 1, 0xff, '\n'}, Stored: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	} {
		raw, err := encodeEntry(e)
		require.NoError(t, err)
		got, err := decodeEntry(string(raw))
		require.NoError(t, err)
		if len(e.Body) == 0 {
			assert.Empty(t, got.Body)
			got.Body = e.Body
		}
		assert.Equal(t, e, got)
	}
}

func TestDecodeEntryBad(t *testing.T) {
	good, err := encodeEntry(&Entry{Body: []byte("b"), MetadataLocation: "m", Stored: time.Unix(1, 0).UTC()})
	require.NoError(t, err)
	for name, raw := range map[string]string{
		"empty":                   "",
		"entry of the JSON era":   `{"body":"YQ==","metadata_location":"m","stored":"2026-12-01T00:00:00Z"}`,
		"unknown format":          "\x02" + string(good[1:]),
		"no length":               "\x01",
		"unterminated length":     "\x01\xff\xff",
		"length past the end":     "\x01\x7f{}",
		"meta not JSON":           "\x01\x02xx",
		"meta of the wrong shape": "\x01\x02[]",
		"stored time not a time":  "\x01\x0f{\"stored\":\"x\"}",
		"length overflows int":    "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	} {
		_, err := decodeEntry(raw)
		assert.Error(t, err, name)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	good, _ := encodeEntry(&Entry{Body: []byte("body"), MetadataLocation: "m", BackendETag: "e", Stored: time.Unix(1, 0).UTC()})
	f.Add(string(good))
	f.Add("\x01\x02{}")
	f.Add(`{"body":"YQ=="}`)
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := decodeEntry(raw)
		if err != nil {
			return
		}
		// What decodes re-encodes to a frame that decodes the same.
		again, err := encodeEntry(e)
		require.NoError(t, err)
		e2, err := decodeEntry(string(again))
		require.NoError(t, err)
		assert.Equal(t, e.Body, e2.Body)
		assert.Equal(t, e.MetadataLocation, e2.MetadataLocation)
		assert.True(t, e.Stored.Equal(e2.Stored))
	})
}

// An entry larger than all of L1 is not added (it would evict everything,
// then itself), and takes the older copy of its key with it.
func TestOversizedEntrySkipsL1(t *testing.T) {
	c, err := New(Config{MaxBytes: 1 << 10}, nil, nil)
	require.NoError(t, err)
	small := &Entry{Body: []byte("old"), MetadataLocation: "m1", Stored: time.Now()}
	other := &Entry{Body: []byte("other"), MetadataLocation: "m2", Stored: time.Now()}
	c.Put(context.Background(), "lake\x00ns\x00t", "v", small)
	c.Put(context.Background(), "lake\x00ns\x00u", "v", other)
	big := &Entry{Body: make([]byte, 2<<10), MetadataLocation: "m3", Stored: time.Now()}
	c.Put(context.Background(), "lake\x00ns\x00t", "v", big)

	e, level := c.Get(context.Background(), "lake\x00ns\x00t", "v")
	assert.Nil(t, e, "neither the oversized entry nor the copy it replaced")
	assert.Equal(t, Miss, level)
	e, _ = c.Get(context.Background(), "lake\x00ns\x00u", "v")
	require.NotNil(t, e, "the other entries stay")
	assert.Equal(t, "other", string(e.Body))
	assert.Equal(t, other.size(), c.Stats().L1Bytes)
}
