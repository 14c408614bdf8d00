// Package uitest holds what the catalog browser's tests share (the
// gateway's package and the examples' run the page in Chromium): the
// headless browser, and a catalog worth browsing, made through the
// gateway's own Iceberg REST API.
package uitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Chromium is the headless browser, or a skip (a failure when
// LAKEGATE_TEST_CHROMIUM says this run has one).
func Chromium(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("LAKEGATE_TEST_CHROMIUM") != "" {
			t.Fatal("chromium is not installed, but LAKEGATE_TEST_CHROMIUM says this run has it")
		}
		t.Skip("chromium is not installed (.ci/run installs it)")
	}
	return bin
}

// Run runs headless Chromium with its own profile; a generous deadline
// stops a hung browser, the test asserts no time.
func Run(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all := append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	return out
}

// DOM is the page at url once its script has fetched what it shows:
// virtual time stands still while requests are in flight, so the budget
// is not a wall-clock wait.
func DOM(t *testing.T, bin, url string) string {
	t.Helper()
	return string(Run(t, bin, "--virtual-time-budget=15000", "--dump-dom", url))
}

// Screenshot writes the page at url to path as a PNG.
func Screenshot(t *testing.T, bin, url, path string, height int) {
	t.Helper()
	Run(t, bin, "--virtual-time-budget=15000", "--hide-scrollbars", "--window-size=1280,"+strconv.Itoa(height),
		"--screenshot="+path, url)
}

// Page is the browser's address of a page of the catalog browser at base:
// params are its fragment (never sent to the server).
func Page(base string, params url.Values) string {
	if len(params) == 0 {
		return base + "/ui/"
	}
	return base + "/ui/#" + params.Encode()
}

// TablePage is the address of one table's page.
func TablePage(base, catalog string, ns []string, table string) string {
	nsJSON, _ := json.Marshal(ns)
	return Page(base, url.Values{"catalog": {catalog}, "ns": {string(nsJSON)}, "table": {table}})
}

// ViewPage is the address of one view's page.
func ViewPage(base, catalog string, ns []string, view string) string {
	nsJSON, _ := json.Marshal(ns)
	return Page(base, url.Values{"catalog": {catalog}, "ns": {string(nsJSON)}, "view": {view}})
}

// Token asks lakegate's issuer at base for a client's token.
func Token(t *testing.T, base, client, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {client}, "client_secret": {secret}}
	resp, err := http.PostForm(base+"/v1/oauth/tokens", form)
	require.NoError(t, err)
	defer resp.Body.Close()
	var doc struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.NoError(t, json.Unmarshal(body, &doc))
	return doc.AccessToken
}

// Schema is the seeded table's: nested struct, list and map fields, docs.
const Schema = `{"type":"struct","schema-id":0,"identifier-field-ids":[1],"fields":[
 {"id":1,"name":"id","type":"long","required":true,"doc":"order number"},
 {"id":2,"name":"placed_at","type":"timestamptz","required":true,"doc":"when the customer ordered"},
 {"id":3,"name":"customer","type":{"type":"struct","fields":[
   {"id":4,"name":"name","type":"string","required":false},
   {"id":5,"name":"email","type":"string","required":false,"doc":"contact address"}]},"required":false},
 {"id":6,"name":"lines","type":{"type":"list","element-id":7,"element-required":true,"element":{"type":"struct","fields":[
   {"id":8,"name":"sku","type":"string","required":true},
   {"id":9,"name":"quantity","type":"int","required":true}]}},"required":false},
 {"id":10,"name":"tags","type":{"type":"map","key-id":11,"key":"string","value-id":12,"value":"string","value-required":false},"required":false},
 {"id":13,"name":"total","type":"decimal(10, 2)","required":false}]}`

// Seed makes, in the catalog whose Iceberg paths start at prefixURL
// (base + "/v1/<prefix>"), namespaces sales and sales.eu and hr, a table
// sales.orders (partitioned by day, sorted, with three snapshots on main,
// a branch and a tag, then a second schema and partition spec), a table
// hr.people, and a view sales.big_orders, as token (none when "").
func Seed(t *testing.T, prefixURL, token string) {
	t.Helper()
	c := client{t: t, token: token}
	for _, ns := range []string{`["sales"]`, `["sales","eu"]`, `["hr"]`} {
		c.must(http.MethodPost, prefixURL+"/namespaces", `{"namespace":`+ns+`}`)
	}
	c.must(http.MethodPost, prefixURL+"/namespaces/hr/tables", `{"name":"people","schema":`+Schema+`}`)
	created := c.must(http.MethodPost, prefixURL+"/namespaces/sales/tables", `{"name":"orders","schema":`+Schema+`,
	 "partition-spec":{"spec-id":0,"fields":[{"source-id":2,"field-id":1000,"name":"placed_day","transform":"day"}]},
	 "write-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]},
	 "properties":{"owner":"sales-team","write.format.default":"parquet"}}`)
	var table struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(created, &table))
	orders := prefixURL + "/namespaces/sales/tables/orders"
	now := time.Now().UnixMilli()
	var parent int64
	for i, op := range []string{"append", "append", "overwrite"} {
		id := int64(1001 + i)
		c.must(http.MethodPost, orders, commit(table.Metadata.Location, "main", id, parent, int64(i+1), now+int64(i)*1000, op))
		parent = id
	}
	// A branch off the second snapshot with one snapshot of its own, and a tag.
	c.must(http.MethodPost, orders, `{"requirements":[],"updates":[`+
		`{"action":"set-snapshot-ref","ref-name":"audit","type":"branch","snapshot-id":1002},`+
		`{"action":"set-snapshot-ref","ref-name":"v1","type":"tag","snapshot-id":1001}]}`)
	c.must(http.MethodPost, orders, commit(table.Metadata.Location, "audit", 1004, 1002, 4, now+3500, "append"))
	// The schema evolves (a column added) and the table is partitioned by
	// it too: schema 0 and spec 0 stay in the metadata, no longer current.
	c.must(http.MethodPost, orders, `{"requirements":[],"updates":[`+
		`{"action":"add-schema","schema":`+strings.TrimSuffix(strings.Replace(Schema, `"schema-id":0`, `"schema-id":1`, 1), "]}")+
		`,{"id":14,"name":"channel","type":"string","required":false,"doc":"where the order came from"}]}},`+
		`{"action":"set-current-schema","schema-id":-1},`+
		`{"action":"add-spec","spec":{"spec-id":1,"fields":[{"source-id":2,"field-id":1000,"name":"placed_day","transform":"day"},`+
		`{"source-id":14,"field-id":1001,"name":"channel","transform":"identity"}]}},`+
		`{"action":"set-default-spec","spec-id":-1}]}`)
	c.must(http.MethodPost, prefixURL+"/namespaces/sales/views", `{"name":"big_orders","schema":{"type":"struct","schema-id":0,"fields":[
	  {"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"total","type":"decimal(10, 2)","required":false}]},
	 "view-version":{"version-id":1,"timestamp-ms":`+strconv.FormatInt(now, 10)+`,"schema-id":0,"summary":{"engine-name":"spark"},
	  "default-namespace":["sales"],"representations":[{"type":"sql","dialect":"spark","sql":"SELECT id, total FROM orders WHERE total > 1000"}]},
	 "properties":{"comment":"orders above 1000"}}`)
}

// SeedDelta makes, through the Delta door at base (Unity Catalog's Delta
// REST API), an EXTERNAL Delta table sales.events at location in catalog,
// with a reader-3/writer-7 protocol.
func SeedDelta(t *testing.T, base, catalog, location string) {
	t.Helper()
	c := client{t: t}
	c.must(http.MethodPost, base+"/api/2.1/unity-catalog/delta/v1/catalogs/"+catalog+"/schemas/sales/tables", `{"name":"events",
	 "location":"`+location+`","table-type":"EXTERNAL","comment":"click events",
	 "columns":{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"comment":"event id"}},
	  {"name":"kind","type":"string","nullable":true,"metadata":{}}]},"partition-columns":["kind"],
	 "protocol":{"min-reader-version":3,"min-writer-version":7,"reader-features":["deletionVectors"],"writer-features":["deletionVectors"]},
	 "properties":{"delta.enableDeletionVectors":"true"},"last-commit-timestamp-ms":1700000000000}`)
}

// commit adds snapshot id (its parent parent, 0 for none) on branch ref.
func commit(location, ref string, id, parent, seq, at int64, op string) string {
	ids := strconv.FormatInt(id, 10)
	parentField := ""
	if parent != 0 {
		parentField = `"parent-snapshot-id":` + strconv.FormatInt(parent, 10) + `,`
	}
	return `{"requirements":[],"updates":[` +
		`{"action":"add-snapshot","snapshot":{"snapshot-id":` + ids + `,` + parentField +
		`"sequence-number":` + strconv.FormatInt(seq, 10) + `,"timestamp-ms":` + strconv.FormatInt(at, 10) +
		`,"manifest-list":"` + location + `/metadata/snap-` + ids + `.avro","summary":{"operation":"` + op +
		`","added-records":"` + strconv.FormatInt(seq*100, 10) + `"},"schema-id":0}},` +
		`{"action":"set-snapshot-ref","ref-name":"` + ref + `","type":"branch","snapshot-id":` + ids + `}]}`
}

type client struct {
	t     *testing.T
	token string
}

// must sends body and requires a 2xx answer, which it returns.
func (c client) must(method, url, body string) []byte {
	c.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	require.Less(c.t, resp.StatusCode, 300, "%s %s: %s", method, url, out)
	return out
}

var writeWords = regexp.MustCompile(`(?i)>\s*(drop|delete|create|rename|commit|update|register|purge|truncate|alter)\b`)

// WriteControls lists the DOM's elements that would change a catalog:
// forms or buttons marked as writes, and any button or link whose label
// is a write verb.
func WriteControls(dom string) []string {
	var found []string
	for _, m := range regexp.MustCompile(`(?is)<(button|a|input|form)\b[^>]*>[^<]*`).FindAllString(dom, -1) {
		if strings.Contains(m, "data-write") || writeWords.MatchString(m) ||
			regexp.MustCompile(`(?i)method="(post|put|delete)"`).MatchString(m) {
			found = append(found, m)
		}
	}
	return found
}
