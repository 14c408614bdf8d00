package upstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lakegate/lakegate/cache"
	"github.com/lakegate/lakegate/duration"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// CacheConfig tunes a catalog's LoadTable cache.
type CacheConfig struct {
	// MaxAge is how long a cached table is served without asking the
	// backend; 0, the default, revalidates every load (cheaply, with
	// If-None-Match, when the backend gives ETags).
	MaxAge duration.Duration `json:"max_age,omitempty"`
	// StaleIfError is how long past MaxAge a metadata-only copy may still
	// be served while the backend fails (default 0: never).
	StaleIfError duration.Duration `json:"stale_if_error,omitempty"`
}

// CacheHeader tells how a LoadTable was answered (hit-l1, hit-l2,
// revalidated, miss, stale).
const CacheHeader = "Lakegate-Cache"

// TableCache answers LoadTable from cache.Cache and evicts tables that
// writes through the gateway change.
type TableCache struct {
	Cache   *cache.Cache
	Config  CacheConfig
	Catalog string
	// PerPrincipal keys every entry by principal: for backends that
	// authorize each caller themselves (passthrough auth), where serving
	// one caller's answer to another would skip the backend's check.
	PerPrincipal bool
}

// Serve runs the cache layer for one request.
func (tc *TableCache) Serve(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string, next Handler) {
	if op := q.Route.Operation; op != icerest.OpLoadTable && !invalidating[op] {
		next(w, r, q)
		return
	}
	r, span := telemetry.StartRequest(r, "lakegate.cache", tc.spanAttrs)
	if q.Route.Operation == icerest.OpLoadTable {
		tc.load(w, r, q, principal, next)
	} else {
		tc.write(w, r, q, principal, next)
	}
	if rec := telemetry.From(r.Context()); rec != nil && span.IsRecording() {
		span.SetAttributes(telemetry.Present(telemetry.AttrCache.String(rec.Cache))...)
	}
	span.End()
}

func (tc *TableCache) spanAttrs() []attribute.KeyValue {
	return []attribute.KeyValue{telemetry.AttrCatalog.String(tc.Catalog)}
}

// result counts a cache result and notes it in the request's record.
func (tc *TableCache) result(r *http.Request, result string) {
	telemetry.CountCache(tc.Catalog, result)
	telemetry.From(r.Context()).SetCache(result)
}

// variant is what, besides the table, selects one cached representation:
// only what the spec defines for LoadTable, the `snapshots` mode and the
// access delegation modes. Other query parameters are left out of the key,
// so a client cannot grow the cache (and Redis) with a new key per request;
// ok is false for a snapshots mode the spec does not know, which is not
// cached at all.
func variant(r *http.Request, q icerest.Request) (key string, ok bool) {
	mode := q.Query.Get("snapshots") // nil for most loads: nothing was parsed
	switch mode {
	case "", "all":
		mode = "all"
	case "refs":
	default:
		return "", false
	}
	return representation(mode, r), true
}

// representation is the variant key of the given snapshots mode for the
// access delegation modes r asks for.
func representation(mode string, r *http.Request) string {
	header := r.Header.Get("X-Iceberg-Access-Delegation")
	if header == "" && mode == "all" {
		return plainVariant // the common key, not built again per load
	}
	var deleg []string
	for _, d := range strings.Split(header, ",") {
		if d = strings.TrimSpace(d); delegationModes[d] && !slices.Contains(deleg, d) {
			deleg = append(deleg, d)
		}
	}
	sort.Strings(deleg)
	return "snapshots=" + mode + "|delegation=" + strings.Join(deleg, ",")
}

// sharedKey is the key of a representation every caller may be served:
// per principal when the backend authorizes each caller itself. The
// gateway's ETag is made from it too.
func (tc *TableCache) sharedKey(variant, principal string) string {
	if tc.PerPrincipal {
		return variant + "|principal=" + principal
	}
	return variant
}

// plainVariant is the representation of a load of every snapshot
// without access delegation.
const plainVariant = "snapshots=all|delegation="

// delegationModes are the spec's X-Iceberg-Access-Delegation values.
var delegationModes = map[string]bool{"vended-credentials": true, "remote-signing": true}

func (tc *TableCache) load(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string, next Handler) {
	ctx := r.Context()
	rt := q.Route
	shared, ok := variant(r, q)
	if !ok {
		tc.result(r, "bypass")
		next(w, r, q)
		return
	}
	table := cache.TableKey(tc.Catalog, rt.Namespace, rt.Table)
	shared = tc.sharedKey(shared, principal)
	private := shared + "|principal=" + principal
	gen := tc.Cache.Generation() // before the backend is asked: see store
	e, level := tc.Cache.Get(ctx, table, private, shared)
	if e != nil && time.Since(e.Stored) < tc.Config.MaxAge.D() {
		tc.Cache.Count(level)
		tc.answer(w, r, e, shared, levelName(level))
		return
	}
	tc.Cache.Count(cache.Miss)
	out := r.Clone(ctx)
	out.Header.Del("If-None-Match") // the client's tag is the gateway's, answered below
	// Vended credentials expire: a 304 must not extend them, so an entry
	// that carries them is fetched again in full.
	if e != nil && e.BackendETag != "" && !e.Credentials {
		tc.Cache.CountRevalidation()
		out.Header.Set("If-None-Match", e.BackendETag)
	}
	rec := Capture(next, out, q)
	switch {
	case rec.Status == http.StatusNotModified && e != nil:
		tc.Cache.CountRevalidated()
		fresh := *e
		fresh.Stored = time.Now()
		tc.store(r, table, shared, private, &fresh, gen)
		tc.answer(w, r, &fresh, shared, "revalidated")
	case rec.Status == http.StatusOK:
		fresh := newEntry(rec)
		tc.store(r, table, shared, private, fresh, gen)
		tc.answer(w, r, fresh, shared, "miss")
	case rec.Status >= 500 && e != nil && !e.Credentials &&
		time.Since(e.Stored) < tc.Config.MaxAge.D()+tc.Config.StaleIfError.D():
		tc.Cache.CountStale()
		w.Header().Set("Warning", `110 lakegate "Response is Stale"`)
		tc.answer(w, r, e, shared, "stale")
	default:
		tc.result(r, "miss")
		rec.WriteTo(w)
	}
}

// store caches e unless an invalidation ran since gen: a write that
// completed while this load was in flight may postdate e.
func (tc *TableCache) store(r *http.Request, table, shared, private string, e *cache.Entry, gen uint64) {
	key := shared
	if e.Credentials {
		key = private // one principal's credentials are never served to another
	}
	e.ETag = gatewayETag(e.MetadataLocation, shared)
	tc.Cache.PutIf(r.Context(), table, key, e, gen)
}

// answer serves an entry with the gateway's ETag, or 304 when the client
// already holds it.
func (tc *TableCache) answer(w http.ResponseWriter, r *http.Request, e *cache.Entry, variant, how string) {
	etag := e.ETag
	if etag == "" {
		etag = gatewayETag(e.MetadataLocation, variant)
	}
	// The four header values share one backing array (one allocation, not
	// four): each is its own full slice (cap 1), so a later Add elsewhere
	// appends into a new array, never into a neighbour.
	vals := make([]string, 4)
	h := w.Header()
	setHeader(h, "Etag", vals[0:1:1], etag) // canonical keys: no per-call canonicalization
	setHeader(h, CacheHeader, vals[1:2:2], how)
	tc.result(r, how)
	if inm := r.Header.Get("If-None-Match"); inm != "" && icerest.ETagMatches(inm, etag) {
		tc.Cache.CountNotModified()
		telemetry.CountNotModified(tc.Catalog)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	setHeader(h, "Content-Type", vals[2:3:3], e.ContentType)
	setHeader(h, "Content-Length", vals[3:4:4], strconv.Itoa(len(e.Body))) // one write, not chunks
	w.WriteHeader(http.StatusOK)
	writeBody(w, e.Body)
}

// setHeader sets canonical header key to v, in slot (a slice of len 1).
func setHeader(h http.Header, key string, slot []string, v string) {
	slot[0] = v
	h[key] = slot
}

// gatewayETag is lakegate's own weak ETag for one representation of one
// metadata version, whether or not the backend gives ETags.
func gatewayETag(metadataLocation, variant string) string {
	sum := sha256.Sum256([]byte(metadataLocation + "\x00" + variant))
	return `W/"` + hex.EncodeToString(sum[:16]) + `"`
}

// newEntry makes a cache entry of a LoadTable response, from what the
// answer's check read (Captured.Table): the body is not parsed again.
func newEntry(rec *Captured) *cache.Entry {
	table := rec.Table()
	return &cache.Entry{
		Body: rec.keepable(), ContentType: rec.Header.Get("Content-Type"),
		MetadataLocation: table.MetadataLocation, BackendETag: rec.Header.Get("ETag"),
		Credentials: table.Credentials(), Stored: time.Now(),
	}
}

func levelName(l cache.Level) string {
	if l == cache.L2 {
		return "hit-l2"
	}
	return "hit-l1"
}

// write runs a mutation, then evicts what it may have changed before the
// client sees the answer, so no later read through any replica is stale.
func (tc *TableCache) write(w http.ResponseWriter, r *http.Request, q icerest.Request, principal string, next Handler) {
	rec := Capture(next, r, q)
	for _, prefix := range tc.affected(q) {
		tc.Cache.Invalidate(r.Context(), prefix)
		telemetry.CountInvalidation(tc.Catalog)
		telemetry.From(r.Context()).SetCache("invalidated")
	}
	if answersTable[q.Route.Operation] && rec.Status == http.StatusOK {
		tc.tagTable(rec, r, principal)
	}
	rec.WriteTo(w)
}

// answersTable are the writes whose answer is a table's metadata and,
// per the spec, carries an ETag that a later LoadTable's If-None-Match
// may send.
var answersTable = map[string]bool{
	icerest.OpUpdateTable: true, icerest.OpCreateTable: true, icerest.OpRegisterTable: true,
}

// tagTable gives a write's table answer the ETag a LoadTable of the same
// metadata version would get from this cache: the answer holds the full
// metadata (snapshots=all) at its metadata-location, for the delegation
// modes the write asked for. The backend's own tag is dropped: loads
// through the cache never answer it. A staged create has no
// metadata-location, hence no version and no tag.
func (tc *TableCache) tagTable(rec *Captured, r *http.Request, principal string) {
	location := rec.Table().MetadataLocation
	if location == "" {
		rec.Header.Del("ETag")
		return
	}
	shared := tc.sharedKey(representation("all", r), principal)
	rec.Header.Set("ETag", gatewayETag(location, shared))
}

// invalidating are the writes that can change a cached LoadTable answer;
// namespace property and view writes cannot, and pass straight through.
var invalidating = map[string]bool{
	icerest.OpUpdateTable: true, icerest.OpDropTable: true, icerest.OpCreateTable: true,
	icerest.OpRegisterTable: true, icerest.OpDropNamespace: true, icerest.OpRenameTable: true,
	icerest.OpCommitTransaction: true, icerest.OpUnregisterTable: true,
}

// affected lists the cache keys (tables, or namespace prefixes) a write
// may change: the tables a rename or a transaction names are those its
// body's one parse found (q.Touched), which the policy decided on.
func (tc *TableCache) affected(q icerest.Request) []string {
	rt := q.Route
	switch rt.Operation {
	case icerest.OpUpdateTable, icerest.OpDropTable, icerest.OpUnregisterTable:
		return []string{cache.TableKey(tc.Catalog, rt.Namespace, rt.Table)}
	case icerest.OpCreateTable, icerest.OpRegisterTable, icerest.OpDropNamespace:
		return []string{cache.NamespacePrefix(tc.Catalog, rt.Namespace)}
	case icerest.OpRenameTable, icerest.OpCommitTransaction:
		if ids := q.Touched.Identifiers; len(ids) > 0 {
			keys := make([]string, 0, len(ids))
			for _, id := range ids {
				keys = append(keys, cache.TableKey(tc.Catalog, id.Namespace, id.Name))
			}
			return keys
		}
	}
	return []string{cache.CatalogPrefix(tc.Catalog)} // names no table: be safe
}

// Captured is a response held back from the client, to be inspected or
// rewritten before it is sent.
type Captured struct {
	Status int
	Header http.Header
	body   bytes.Buffer
	// shared is a body the handler handed over whole and unchanging (a
	// cache entry's, see writeBody; a backend answer, see answerHolder),
	// held instead of copied into body.
	shared []byte
	// table is what the check of a table answer in shared read, when the
	// backend handed it over with the answer.
	table *icerest.TableAnswer
	// unreadable: the body is not JSON the scan could read (Table is then
	// empty, which says nothing of what the body holds).
	unreadable bool
}

// Bytes is the held body. The caller must not change it: it may be a
// cache entry's own.
func (c *Captured) Bytes() []byte {
	if c.shared != nil {
		return c.shared
	}
	return c.body.Bytes()
}

// SetBytes replaces the held body.
func (c *Captured) SetBytes(b []byte) {
	c.shared, c.table, c.unreadable = nil, nil, false
	c.body.Reset()
	c.body.Write(b)
}

// Table is what a table answer (the held body) holds for the stages
// after the backend: what the backend's check read, handed over with the
// body; else one pass over the body (remembered per content, so an answer
// seen before costs a hash pass). It is never nil.
func (c *Captured) Table() *icerest.TableAnswer {
	if c.table == nil {
		var v tableVerdict
		c.table, v = readTableAnswer(c.Bytes())
		c.unreadable = v.syntax != nil
	}
	return c.table
}

// MayHoldCredentials reports a held table answer that has
// storage-credentials or secret config, or that cannot be read to tell.
func (c *Captured) MayHoldCredentials() bool {
	return c.Table().Strippable() || c.unreadable
}

// keepable is the held body for a cache entry to keep: a body handed
// over is kept as it is unless its array is much larger than it (the
// cache counts only len(Body) against max_bytes); a written one, whose
// buffer has up to twice its length in spare capacity, is copied.
func (c *Captured) keepable() []byte {
	if b := c.shared; b != nil && cap(b)-len(b) <= len(b)/64 {
		return b
	}
	return bytes.Clone(c.Bytes())
}

// Capture runs next and holds its response.
func Capture(next Handler, r *http.Request, q icerest.Request) *Captured {
	rec := &Captured{Status: http.StatusOK, Header: http.Header{}}
	next(captureWriter{rec}, r, q)
	return rec
}

// WriteTo sends the held response. A length the handler declared is
// made the held body's: a stage may have rewritten the body since.
func (c *Captured) WriteTo(w http.ResponseWriter) {
	body := c.Bytes()
	if _, ok := c.Header["Content-Length"]; ok {
		c.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	for k, v := range c.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.Status)
	if h, ok := w.(answerHolder); ok && c.table != nil && c.shared != nil {
		h.HoldAnswer(body, c.table) // what was read of it goes on with it
		return
	}
	writeBody(w, body)
}

// sharedWriter is a ResponseWriter that can hold a body it is handed
// instead of copying it: an in-process capture. Only bodies nobody
// changes afterwards are handed over this way (cache entries are never
// changed once stored), so a LoadTable answered from the cache reaches a
// translator, or passes a stage that looks at it, without a copy.
type sharedWriter interface{ WriteShared(b []byte) }

// writeBody writes an unchanging body to w, handing it over when w can
// hold it.
func writeBody(w http.ResponseWriter, b []byte) {
	if sw, ok := w.(sharedWriter); ok {
		sw.WriteShared(b)
		return
	}
	_, _ = w.Write(b)
}

// answerHolder is a ResponseWriter that holds a backend's checked answer
// as it is, with what the check read (icerest.TableAnswer): a capture.
// The backend hands it a buffer of the answer's own, never reused.
type answerHolder interface {
	HoldAnswer(body []byte, table *icerest.TableAnswer)
}

type captureWriter struct{ c *Captured }

func (w captureWriter) Header() http.Header  { return w.c.Header }
func (w captureWriter) WriteHeader(code int) { w.c.Status = code }

func (w captureWriter) Write(b []byte) (int, error) {
	if w.c.shared != nil { // more after a handed-over body: hold a copy of both
		w.c.body.Write(w.c.shared)
		w.c.shared = nil
	}
	w.c.table, w.c.unreadable = nil, false // what was read of a body no longer holds for more
	return w.c.body.Write(b)
}

// WriteShared holds b itself when it is the whole body so far.
func (w captureWriter) WriteShared(b []byte) {
	if w.c.shared == nil && w.c.body.Len() == 0 {
		w.c.shared = b
		return
	}
	_, _ = w.Write(b)
}

// HoldAnswer holds a backend's answer and what its check read.
func (w captureWriter) HoldAnswer(b []byte, table *icerest.TableAnswer) {
	if w.c.shared == nil && w.c.body.Len() == 0 {
		w.c.shared, w.c.table = b, table
		return
	}
	_, _ = w.Write(b)
}
