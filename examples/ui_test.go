package examples_test

// The catalog browser (/ui/) in Chromium, on the repository's Caddyfile
// and on examples/policy, run as a user runs them.

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/internal/uitest"
)

// screenshots is where the browser's tests write docs/ui-*.png: a
// temporary directory, or the directory LAKEGATE_UI_SCREENSHOTS names
// (docs/ui.md: `LAKEGATE_UI_SCREENSHOTS=$PWD/docs go test ./examples -run TestUI`).
func screenshots(t *testing.T) string {
	if dir := os.Getenv("LAKEGATE_UI_SCREENSHOTS"); dir != "" {
		return dir
	}
	return t.TempDir()
}

func requirePNG(t *testing.T, path string) {
	t.Helper()
	png, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Greater(t, len(png), 1000)
	assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "a PNG")
}

// rootServer runs the repository's Caddyfile on data of its own, seeded
// with uitest.Seed's catalog and, through the Delta door, a Delta table.
func rootServer(t *testing.T) *server {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "Caddyfile"))
	require.NoError(t, err)
	data := t.TempDir()
	env, addr := cleanEnv(t, "LAKEGATE_DATA="+data)
	srv := startServer(t, env, addr, t.TempDir(), root)
	uitest.Seed(t, srv.base+"/v1/local", "")
	uitest.SeedDelta(t, srv.base, "local", "file://"+filepath.Join(data, "local", "warehouse", "sales.db", "events"))
	return srv
}

// On the root Caddyfile: the landing page shows the catalog's namespace
// tree with its tables and views; a table's page its nested schema with
// field ids and docs, partition spec, sort order, snapshot chart with
// its refs, metadata log and properties; a view's page its SQL.
func TestUIOnRootCaddyfile(t *testing.T) {
	bin := uitest.Chromium(t)
	srv := rootServer(t)
	shots := screenshots(t)

	dom := uitest.DOM(t, bin, srv.base+"/ui/")
	require.Contains(t, dom, `data-ready="true"`, dom)
	assert.Contains(t, dom, `<section class="catalog" data-catalog="local"><h2>local <span class="kind">embedded</span><span class="badge">default</span></h2>`)
	tree := regexp.MustCompile(`(?s)<li class="namespace" data-namespace="sales">.*`).FindString(dom)
	assert.Contains(t, tree, `class="table-link">orders</a>`)
	assert.Contains(t, tree, `class="view-link">big_orders</a>`)
	assert.Contains(t, tree, `class="table-link">events</a>`)
	assert.Contains(t, tree, `<ul class="tree"><li class="namespace" data-namespace="sales.eu"><span class="ns-name">eu</span>`, "eu under sales")
	assert.Contains(t, dom, `<li class="namespace" data-namespace="hr"><span class="ns-name">hr</span>`)
	assert.Empty(t, uitest.WriteControls(dom))
	uitest.Screenshot(t, bin, srv.base+"/ui/", filepath.Join(shots, "ui-landing.png"), 520)

	page := uitest.TablePage(srv.base, "local", []string{"sales"}, "orders")
	dom = uitest.DOM(t, bin, page)
	require.Contains(t, dom, `<article id="table" data-table="orders">`, dom)
	for _, row := range []string{
		`<tr class="field" data-field-id="1"><td class="num">1</td><td class="fname"><span class="indent d0"></span>id</td><td class="type">long</td><td>required</td><td class="doc">order number</td></tr>`,
		`<tr class="field" data-field-id="5"><td class="num">5</td><td class="fname"><span class="indent d1"></span>email</td><td class="type">string</td><td>optional</td><td class="doc">contact address</td></tr>`,
		`<tr class="field" data-field-id="8"><td class="num">8</td><td class="fname"><span class="indent d2"></span>sku</td>`,
		`<td class="type">list&lt;struct&gt;</td>`,
		`<td class="type">map&lt;string, string&gt;</td>`,
		`<td class="type">decimal(10, 2)</td>`,
	} {
		assert.Contains(t, dom, row)
	}
	assert.Contains(t, dom, `<td class="num">1000</td><td>placed_day</td><td>placed_at</td><td>day</td>`, "partition spec")
	assert.Contains(t, dom, `<td>id</td><td>identity</td><td>asc</td><td>nulls-first</td>`, "sort order")
	chart := regexp.MustCompile(`(?s)<svg id="snapshot-chart".*?</svg>`).FindString(dom)
	require.NotEmpty(t, chart, dom)
	assert.Len(t, regexp.MustCompile(`<circle class="snapshot`).FindAllString(chart, -1), 4, chart)
	assert.Contains(t, chart, `<circle class="snapshot op-overwrite current" data-snapshot-id="1003"`)
	for _, ref := range []string{`class="ref branch"[^>]*>main<`, `class="ref branch"[^>]*>audit<`, `class="ref tag"[^>]*>v1<`} {
		assert.Regexp(t, ref, chart)
	}
	assert.Len(t, regexp.MustCompile(`<line class="parent"`).FindAllString(chart, -1), 3, "each snapshot joined to its parent")
	// The last commits through the gateway (anonymous on the root
	// Caddyfile), and the schema and spec the seed's last commit replaced.
	commits := regexp.MustCompile(`(?s)<section id="commits">.*?</section>`).FindString(dom)
	assert.Len(t, regexp.MustCompile(`<tr class="commit">`).FindAllString(commits, -1), 7, commits)
	assert.Contains(t, commits, `<td class="principal">anonymous</td><td>iceberg</td><td>updateTable</td><td class="kinds">schema, partition spec</td>`)
	assert.Contains(t, dom, `<details class="schema-version" data-schema-id="0"><summary>Schema 0 · 6 top-level fields</summary>`)
	assert.Contains(t, dom, `<tr class="spec current" data-spec-id="1">`)
	assert.Contains(t, dom, `<table id="metadata-log">`)
	assert.Contains(t, dom, `<td>owner</td><td>sales-team</td>`)
	// The seeded snapshots name manifest lists that were never written:
	// the preview says it could not read them, and why only in the log.
	assert.Contains(t, dom, `<section id="preview"><h3>First rows</h3><p class="none">Not shown: 502: reading the table's rows failed (the cause is in the server's log)</p></section>`)
	assert.Contains(t, srv.output(), "reading a table's rows for a preview failed")
	assert.Empty(t, uitest.WriteControls(dom))
	uitest.Screenshot(t, bin, page, filepath.Join(shots, "ui-table.png"), 2900)
	requirePNG(t, filepath.Join(shots, "ui-table.png"))

	// A Delta table's page: its log versions and protocol.
	dom = uitest.DOM(t, bin, uitest.TablePage(srv.base, "local", []string{"sales"}, "events"))
	delta := regexp.MustCompile(`<section id="delta">.*?</section>`).FindString(dom)
	require.NotEmpty(t, delta, dom)
	for _, row := range []string{"<th>Table type</th><td>EXTERNAL</td>", "<th>Last commit version</th><td>0</td>",
		"<th>Protocol</th><td>reader 3, writer 7</td>", "<th>Reader features</th><td>deletionVectors</td>"} {
		assert.Contains(t, delta, row)
	}
	assert.Contains(t, dom, `<td class="doc">event id</td>`, "the Delta column comment is the field's doc")
	assert.Contains(t, dom, `<td class="principal">anonymous</td><td>delta</td><td>createTable</td><td class="kinds">create</td>`, "made through the Delta door")

	dom = uitest.DOM(t, bin, uitest.ViewPage(srv.base, "local", []string{"sales"}, "big_orders"))
	assert.Contains(t, dom, `<pre class="sql">SELECT id, total FROM orders WHERE total &gt; 1000</pre>`, dom)
	assert.Contains(t, dom, `<section class="version current" data-version-id="1">`)
}

// On examples/policy, a reader (lakegate's issuer, reader:reader-secret)
// browses both catalogs (local, and remote: the root Caddyfile's gateway)
// and a table's page, sees no write control, and its token, handed over
// in the page's fragment, appears in no access log line; without a token
// the page asks for one.
func TestUIOnPolicyExample(t *testing.T) {
	bin := uitest.Chromium(t)
	upstream := rootServer(t)
	dir, err := filepath.Abs("policy")
	require.NoError(t, err)
	env, addr := cleanEnv(t, "UPSTREAM_URL="+upstream.base, "LAKEGATE_DATA="+t.TempDir())
	srv := startServerUntil(t, env, addr, dir, "Caddyfile", 401)
	uitest.Seed(t, srv.base+"/v1/local", uitest.Token(t, srv.base, "admin", "admin-secret"))
	reader := uitest.Token(t, srv.base, "reader", "reader-secret")

	dom := uitest.DOM(t, bin, srv.base+"/ui/#token="+url.QueryEscape(reader))
	require.Contains(t, dom, `data-ready="true"`, dom)
	for _, cat := range []string{"local", "remote"} {
		sec := regexp.MustCompile(`(?s)<section class="catalog" data-catalog="` + cat + `">.*?</section>`).FindString(dom)
		require.NotEmpty(t, sec, "catalog %s: %s", cat, dom)
		assert.Contains(t, sec, `class="table-link">orders</a>`, cat)
		assert.Contains(t, sec, `class="table-link">people</a>`, cat)
	}
	assert.Empty(t, uitest.WriteControls(dom), "a reader gets no write control")
	assert.NotContains(t, dom, reader)

	dom = uitest.DOM(t, bin, uitest.TablePage(srv.base, "remote", []string{"sales"}, "orders")+"&token="+url.QueryEscape(reader))
	assert.Contains(t, dom, `<svg id="snapshot-chart"`, dom)
	assert.Contains(t, dom, `<td class="doc">when the customer ordered</td>`)
	assert.Empty(t, uitest.WriteControls(dom))

	dom = uitest.DOM(t, bin, srv.base+"/ui/")
	assert.Contains(t, dom, "401: ")
	assert.Contains(t, dom, "sign in above")
	assert.NotContains(t, dom, `data-catalog=`)

	out := srv.output()
	assert.Contains(t, out, `"uri":"/lakegate/catalogs"`, "the access log has the page's requests")
	assert.False(t, strings.Contains(out, reader), "the token is in no log line")
	assert.Contains(t, out, `"principal":"reader"`)
}
