package sharing

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/translate/sharing/actions"
	"github.com/lakegate/lakegate/translate/sharing/hints"
)

// CapabilitiesHeader negotiates response format and features.
const CapabilitiesHeader = "delta-sharing-capabilities"

// Capabilities is the client's delta-sharing-capabilities header.
type Capabilities struct {
	// Formats the client accepts, in its order; empty means parquet.
	Formats []actions.Format
	// ReaderFeatures the client can read (lower case); nil when not sent.
	ReaderFeatures map[string]bool
	// EndStream is includeEndStreamAction=true.
	EndStream bool
}

// ParseCapabilities reads the header: "key=v1,v2;key=v". Keys and values
// are case-insensitive; unknown keys are ignored, as the protocol evolves
// by adding them.
func ParseCapabilities(h string) (Capabilities, error) {
	var c Capabilities
	for _, part := range strings.Split(h, ";") {
		key, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		key = strings.ToLower(strings.TrimSpace(key))
		vals := splitList(strings.ToLower(val))
		switch key {
		case "responseformat":
			for _, v := range vals {
				f := actions.Format(v)
				if f != actions.Parquet && f != actions.Delta {
					return c, badParam("unsupported responseformat %q (parquet or delta)", v)
				}
				c.Formats = append(c.Formats, f)
			}
		case "readerfeatures":
			c.ReaderFeatures = map[string]bool{}
			for _, v := range vals {
				c.ReaderFeatures[v] = true
			}
		case "includeendstreamaction":
			c.EndStream = val != "" && strings.EqualFold(strings.TrimSpace(val), "true")
		}
	}
	return c, nil
}

// FileIDHashHeader selects the scheme of file ids (query and changes).
const FileIDHashHeader = "fileidhash"

// ParseFileIDHash reads the fileidhash header: "" when absent, else
// "parquet" or "delta" (case-insensitive); anything else is a 400. Both
// schemes derive a file's id the same way (the SHA-256 of its path), so
// an id stays the file's whichever format a client asks for; the server
// echoes the scheme so the client knows it was understood.
func ParseFileIDHash(h string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(h))
	switch v {
	case "", string(actions.Parquet), string(actions.Delta):
		return v, nil
	}
	return "", badParam("unsupported %s %q (parquet or delta)", FileIDHashHeader, h)
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// accepts reports whether the client takes format f.
func (c Capabilities) accepts(f actions.Format) bool {
	if len(c.Formats) == 0 {
		return f == actions.Parquet
	}
	for _, g := range c.Formats {
		if g == f {
			return true
		}
	}
	return false
}

// QueryRequest is the body of POST .../query.
type QueryRequest struct {
	PredicateHints     []string `json:"predicateHints"`
	JSONPredicateHints hintText `json:"jsonPredicateHints"`
	LimitHint          *int64   `json:"limitHint"`
	Version            *int64   `json:"version"`
	Timestamp          *string  `json:"timestamp"`
	StartingVersion    *int64   `json:"startingVersion"`
	EndingVersion      *int64   `json:"endingVersion"`
}

const maxQueryBody = 1 << 20

// hintText is jsonPredicateHints: the protocol sends the predicate as a
// JSON string, some clients send the object itself. Both are taken (the
// object as its JSON text); any other value is dropped, since a hint may
// be ignored but must never fail a query.
type hintText string

func (h *hintText) UnmarshalJSON(b []byte) error {
	var s string
	switch {
	case json.Unmarshal(b, &s) == nil:
		*h = hintText(s)
	case len(bytes.TrimSpace(b)) > 0 && bytes.TrimSpace(b)[0] == '{':
		*h = hintText(bytes.TrimSpace(b))
	default:
		*h = ""
	}
	return nil
}

// ParseQuery reads and checks a query body; an empty body is {}.
func ParseQuery(r io.Reader) (QueryRequest, error) {
	var q QueryRequest
	raw, err := io.ReadAll(io.LimitReader(r, maxQueryBody+1))
	if err != nil {
		return q, Errorf(http.StatusBadRequest, CodeMalformedRequest, "reading the request body: %v", err)
	}
	if len(raw) > maxQueryBody {
		return q, Errorf(http.StatusRequestEntityTooLarge, CodeMalformedRequest, "request body exceeds %d bytes", maxQueryBody)
	}
	if strings.TrimSpace(string(raw)) == "" {
		return q, nil
	}
	if err := strictjson.Unmarshal(raw, &q); err != nil {
		return q, Errorf(http.StatusBadRequest, CodeMalformedRequest, "request body is not a valid query: %v", err)
	}
	return q, q.check()
}

func (q QueryRequest) check() error {
	set := 0
	for _, b := range []bool{q.Version != nil, q.Timestamp != nil, q.StartingVersion != nil} {
		if b {
			set++
		}
	}
	switch {
	case set > 1:
		return badParam("version, timestamp and startingVersion are mutually exclusive")
	case q.EndingVersion != nil && q.StartingVersion == nil:
		return badParam("endingVersion is only valid with startingVersion")
	case negative(q.Version, q.StartingVersion, q.EndingVersion, q.LimitHint):
		return badParam("version, startingVersion, endingVersion and limitHint must not be negative")
	case q.StartingVersion != nil && q.EndingVersion != nil && *q.EndingVersion < *q.StartingVersion:
		return badParam("endingVersion %d is before startingVersion %d", *q.EndingVersion, *q.StartingVersion)
	}
	if q.Timestamp != nil {
		if _, err := ParseTimestamp(*q.Timestamp); err != nil {
			return err
		}
	}
	return nil
}

func negative(vs ...*int64) bool {
	for _, v := range vs {
		if v != nil && *v < 0 {
			return true
		}
	}
	return false
}

// ParseTimestamp reads a timestamp parameter (version/timestamp time
// travel, starting/ending timestamps) in the spellings the protocol
// (ISO 8601: 2022-01-01T00:00:00Z) and its OpenAPI seed
// (yyyy-[m]m-[d]d hh:mm:ss[.f...]) show, with `T` or a space, with `Z`,
// an offset or no zone. A zone-less timestamp is UTC: the protocol's
// timestamps are UTC, and reading it in the server's own zone would make
// the answer depend on where lakegate runs.
func ParseTimestamp(s string) (time.Time, error) {
	t, _, ok := hints.ParseTimestamp(s)
	if !ok {
		return time.Time{}, badParam("timestamp %q is not a timestamp like 2022-01-01T00:00:00Z or 2022-01-01 00:00:00 (UTC unless it names a zone)", s)
	}
	return t, nil
}

// Bound is one end of a change range: a version or a timestamp.
type Bound struct {
	Version   *int64
	Timestamp *time.Time
}

func (b Bound) set() bool { return b.Version != nil || b.Timestamp != nil }

// ChangesRequest is the query of GET .../changes.
type ChangesRequest struct {
	Start, End         Bound
	HistoricalMetadata bool
	// asQuery marks a query with startingVersion (what streaming readers
	// send): every version answers its files as the Delta log would have
	// them, remove and add, never derived row-level cdf lines, and with
	// the metadata of each version that changed it (the protocol:
	// "including historical metadata if seen in the delta log").
	asQuery bool
}

// ParseChanges reads the changes query: a start (version or timestamp) is
// required, an end is optional; each end takes one form only.
func ParseChanges(q url.Values) (ChangesRequest, error) {
	var c ChangesRequest
	var err error
	if c.Start, err = bound(q, "startingVersion", "startingTimestamp"); err != nil {
		return c, err
	}
	if !c.Start.set() {
		return c, badParam("startingVersion or startingTimestamp is required")
	}
	if c.End, err = bound(q, "endingVersion", "endingTimestamp"); err != nil {
		return c, err
	}
	if s, e := c.Start.Version, c.End.Version; s != nil && e != nil && *e < *s {
		return c, badParam("endingVersion %d is before startingVersion %d", *e, *s)
	}
	if v := q.Get("includeHistoricalMetadata"); v != "" {
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			return c, badParam("includeHistoricalMetadata must be true or false")
		}
		c.HistoricalMetadata = b
	}
	return c, nil
}

func bound(q url.Values, versionKey, timeKey string) (Bound, error) {
	var b Bound
	vs, ts := q.Get(versionKey), q.Get(timeKey)
	if vs != "" && ts != "" {
		return b, badParam("%s and %s are mutually exclusive", versionKey, timeKey)
	}
	if vs != "" {
		v, err := strconv.ParseInt(vs, 10, 64)
		if err != nil || v < 0 {
			return b, badParam("%s must be a non-negative integer, not %q", versionKey, vs)
		}
		b.Version = &v
	}
	if ts != "" {
		t, err := ParseTimestamp(ts)
		if err != nil {
			return b, err
		}
		b.Timestamp = &t
	}
	return b, nil
}

// Page is a listing request's maxResults and pageToken.
type Page struct {
	Max   int // -1: not given
	Token string
}

// ParsePage reads maxResults (non-negative int32) and pageToken.
func ParsePage(q url.Values) (Page, error) {
	p := Page{Max: -1, Token: q.Get("pageToken")}
	if s := q.Get("maxResults"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return p, badParam("maxResults must be a non-negative 32-bit integer, not %q", s)
		}
		p.Max = int(n)
	}
	return p, nil
}
