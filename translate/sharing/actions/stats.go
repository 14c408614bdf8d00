package actions

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/apache/iceberg-go"
)

// Stats layouts: Delta writes timestamp stats at millisecond precision as
// ISO-8601, with a zone for timestamp and without for timestamp_ntz.
const (
	statsTimestampLayout    = "2006-01-02T15:04:05.000Z07:00"
	statsTimestampNtzLayout = "2006-01-02T15:04:05.000"
)

// Stats returns the stats JSON string of a data file, built from its Iceberg
// column metrics. Columns are keyed by name (= physical name under id-mode
// column mapping) and nested structs become nested objects. A missing or
// undecodable metric only drops that one key: stats are an optional hint,
// and a missing key makes a reader keep the file, never skip it wrongly.
// Fields inside lists and maps have no stats (Delta keeps none for array
// elements or map entries), and a float column's max is published only
// when its NaN count is known to be zero.
func Stats(df iceberg.DataFile, s *iceberg.Schema) (string, error) {
	if df == nil {
		return "", fmt.Errorf("actions: stats of a nil data file")
	}
	var e Encoder
	b, err := e.appendStats(nil, df, s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// decodeBound wraps iceberg.LiteralFromBytes, adding the width changes of
// Iceberg type promotion: files written before int→long, float→double or
// date→timestamp promotion keep their narrower bound encoding.
func decodeBound(t iceberg.Type, raw []byte) (iceberg.Literal, error) {
	if len(raw) == 4 {
		switch t.(type) {
		case iceberg.Int64Type:
			return iceberg.Int64Literal(int32(binary.LittleEndian.Uint32(raw))), nil
		case iceberg.Float64Type:
			return iceberg.Float64Literal(math.Float32frombits(binary.LittleEndian.Uint32(raw))), nil
		case iceberg.TimestampType, iceberg.TimestampTzType:
			days := int64(int32(binary.LittleEndian.Uint32(raw)))
			return iceberg.TimestampLiteral(days * 86_400_000_000), nil
		}
	}
	switch t.(type) {
	case iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType:
		// Delta has no min/max for binary, and uuid is a Delta string whose
		// bounds Iceberg does not keep in string form.
		return nil, fmt.Errorf("no Delta bounds for %s", t)
	}
	return iceberg.LiteralFromBytes(t, raw)
}

func isTimestampTz(t iceberg.Type) bool {
	_, ok := t.(iceberg.TimestampTzType)
	return ok
}

// appendStatsTimestamp renders a microsecond bound at Delta's millisecond
// precision. The lower bound rounds down and the upper bound rounds up so
// both stay true bounds; Delta itself truncates maxima down and has its
// readers compensate, which readers not doing so would get wrong.
func appendStatsTimestamp(dst []byte, micros int64, upper, withZone bool) []byte {
	ms := micros / 1000
	if micros%1000 < 0 {
		ms-- // floor before the epoch
	}
	if upper && ms*1000 != micros {
		ms++
	}
	t := time.UnixMilli(ms).UTC()
	if withZone {
		return t.AppendFormat(dst, statsTimestampLayout)
	}
	return t.AppendFormat(dst, statsTimestampNtzLayout)
}
