package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lakegate/lakegate/internal/uitest"
	lakegate "github.com/lakegate/lakegate/modules/gateway"
)

// uiGateway serves the browser and the Iceberg door over app.
func uiGateway(t *testing.T, app map[string]any) string {
	t.Helper()
	addr := freeAddr(t)
	return serveOn(t, addr, caddyJSONHandlers(t, addr, app,
		map[string]any{"handler": "lakegate_ui"}, map[string]any{"handler": "lakegate_iceberg"}))
}

// rolesGateway fronts an embedded catalog "lake" with lakegate's issuer
// and policies/roles.rego: clients admin, writer, reader (global roles)
// and sales (reader of namespace sales only).
func rolesGateway(t *testing.T) string {
	t.Helper()
	return rolesGatewayWith(t, map[string]any{"handler": "lakegate_ui"})
}

// rolesGatewayWith is rolesGateway with handlers before the Iceberg door.
func rolesGatewayWith(t *testing.T, handlers ...any) string {
	t.Helper()
	client := func(id string, groups ...string) map[string]any {
		return map[string]any{"id": id, "secret_bcrypt": bcryptHash(t, id+"-secret"), "groups": groups}
	}
	addr := freeAddr(t)
	return serveOn(t, addr, caddyJSONHandlers(t, addr, map[string]any{
		"catalogs": []any{embeddedCatalog(t, "lake")},
		"identity": map[string]any{"required": true, "issuer": map[string]any{"clients": []any{
			client("admin", "admin"), client("writer", "writer"), client("reader", "reader"), client("sales", "reader:sales"),
		}}},
		"policy": map[string]any{"dir": "../../policies", "package": "lakegate.roles"},
	}, append(handlers, map[string]any{"handler": "lakegate_iceberg"})...))
}

func uiGet(t *testing.T, url string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// The browser's files: embedded, kept to the gateway's origin by their
// CSP, fetching nothing from elsewhere; anything else under /ui/ is a
// 404, a write a 405, and the rest of the site is the next handler's.
func TestUIHandler(t *testing.T) {
	base := uiGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "emb")}})

	resp, page := uiGet(t, base+"/ui/", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	csp := resp.Header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		assert.Contains(t, csp, d)
	}
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Contains(t, page, `<script src="app.js" defer></script>`)
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		assert.NotContains(t, m[1], "//", "the page loads nothing from another origin")
	}

	resp, js := uiGet(t, base+"/ui/app.js", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.NotContains(t, js, "https://")
	assert.Equal(t, []string{"http://www.w3.org/2000/svg"}, regexp.MustCompile(`http://[^'"]*`).FindAllString(js, -1),
		"the only absolute URL is SVG's namespace, which is never fetched")
	assert.NotContains(t, js, "innerHTML", "catalog data is text, never markup")
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	resp, _ = uiGet(t, base+"/ui/app.js", map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)
	resp, _ = uiGet(t, base+"/ui/app.css", nil)
	assert.Equal(t, "text/css; charset=utf-8", resp.Header.Get("Content-Type"))

	resp, body := uiGet(t, base+"/ui/config.json", nil)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, `{}`, body, "no sharing door named")
	for _, bad := range []string{"delta-sharing", "/x?y", "/x#y"} {
		err := (&lakegate.UIHandler{Sharing: bad}).Provision(caddy.Context{})
		assert.ErrorContains(t, err, "sharing must be a path starting with /", bad)
	}

	resp, _ = uiGet(t, base+"/ui", nil)
	assert.Equal(t, http.StatusPermanentRedirect, resp.StatusCode)
	assert.Equal(t, "/ui/", resp.Header.Get("Location"))

	resp, body = uiGet(t, base+"/ui/index.html", nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.JSONEq(t, `{"error":"no such page: /ui/index.html"}`, body)

	status, b := do(t, http.MethodPost, base+"/ui/", "", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.JSONEq(t, `{"error":"method POST not allowed on /ui/ (allowed: GET, HEAD)"}`, string(b))

	resp, _ = uiGet(t, base+"/v1/config?warehouse=emb", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the Iceberg door answers the rest")
}

func TestUICaddyfile(t *testing.T) {
	adapted := adapt(t, []byte("http://:8181 {\n\tlakegate_ui\n\tlakegate_iceberg\n}\n"))
	assert.Contains(t, string(adapted), `{"handler":"lakegate_ui"}`)
	adapted = adapt(t, []byte("http://:8181 {\n\tlakegate_ui {\n\t\tsharing /delta-sharing\n\t}\n}\n"))
	assert.Contains(t, string(adapted), `{"handler":"lakegate_ui","sharing":"/delta-sharing"}`)
	for _, bad := range []string{"lakegate_ui extra", "lakegate_ui {\n\t\tpath /x\n\t}", "lakegate_ui {\n\t\tsharing\n\t}",
		"lakegate_ui {\n\t\tsharing /a /b\n\t}"} {
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte("http://:8181 {\n\t"+bad+"\n}\n"), nil)
		assert.Error(t, err, bad)
	}
}

// explain asks POST /lakegate/explain as token.
func explain(t *testing.T, base, token, body string) (int, []byte) {
	t.Helper()
	return do(t, http.MethodPost, base+"/lakegate/explain", token, body, map[string]string{"Content-Type": "application/json"})
}

// POST /lakegate/explain: only a caller the policy lets explainDecision
// (an admin under roles.rego) hears what the policy decides for someone
// else, and why; everyone else gets the Iceberg door's 401 or 403.
func TestExplain(t *testing.T) {
	base := rolesGateway(t)
	token := func(id string) string { return uitest.Token(t, base, id, id+"-secret") }
	admin := token("admin")
	question := `{"principal":{"id":"bob","groups":["reader"]},"operation":"dropTable",` +
		`"resource":{"catalog":"lake","namespace":["sales"],"table":"orders"}}`

	status, b := explain(t, base, "", question)
	assert.Equal(t, http.StatusUnauthorized, status, "%s", b)
	assert.Equal(t, "NotAuthorizedException", errorType(b))
	for _, id := range []string{"reader", "writer", "sales"} {
		status, b = explain(t, base, token(id), question)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", id, b)
		assert.Equal(t, "ForbiddenException", errorType(b), id)
		assert.Contains(t, string(b), "explainDecision", id)
	}

	var got struct {
		Decision struct {
			Allow       bool            `json:"allow"`
			Reason      string          `json:"reason"`
			Obligations map[string]bool `json:"obligations"`
		} `json:"decision"`
		Input struct {
			Principal struct{ ID string } `json:"principal"`
			Resource  struct {
				Catalog, Backend string
				Namespace        []string
			} `json:"resource"`
			Request struct{ Method, Path string } `json:"request"`
		} `json:"input"`
	}
	for _, c := range []struct {
		body, reason string
		allow, strip bool
	}{
		{question, "reader may not dropTable", false, false},
		{`{"principal":{"id":"bob","groups":["reader"]},"operation":"loadTable","resource":{"catalog":"lake","namespace":["sales"],"table":"orders"}}`,
			"reader may loadTable", true, true},
		{`{"principal":{"id":"eve","groups":["reader:sales"]},"operation":"loadTable","resource":{"catalog":"lake","namespace":["hr"],"table":"people"}}`,
			`principal "eve" has no role on namespace "hr"`, false, false},
		{`{"principal":{"id":"root","groups":["admin"]},"operation":"explainDecision"}`, "admin may explainDecision", true, false},
	} {
		status, b = explain(t, base, admin, c.body)
		require.Equal(t, http.StatusOK, status, "%s", b)
		got.Decision.Obligations = nil
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, c.allow, got.Decision.Allow, c.body)
		assert.Equal(t, c.reason, got.Decision.Reason, c.body)
		assert.Equal(t, c.strip, got.Decision.Obligations["strip_credentials"], c.body)
	}
	require.NoError(t, json.Unmarshal(mustExplain(t, base, admin, question), &got))
	assert.Equal(t, "bob", got.Input.Principal.ID)
	assert.Equal(t, "embedded", got.Input.Resource.Backend, "the gateway fills in the catalog's backend")
	assert.Empty(t, got.Input.Request.Method, "not the explain request's own POST")

	for body, msg := range map[string]string{
		`{"principal":{"id":"bob"},"operation":"loadTable","resource":{"catalog":"nope"}}`: `resource.catalog: no catalog named "nope"`,
		`{"principal":{"groups":["reader"]},"operation":"loadTable"}`:                      "principal.id is required",
		`{"principal":{"id":"bob"}}`:                                                       "operation is required",
		`{"principal":{"id":"bob"},"operation":"loadTable","extra":1}`:                     `unknown field "extra"`,
		`{"principal":{"id":"bob"},"operation":"loadTable","resource":{"namespce":["x"]}}`: `unknown field "namespce"`,
		`not json`: "malformed explain request",
		`{"principal":{"id":"bob"},"operation":"loadTable","operation":"dropTable"}`:         "malformed explain request",
		`{"principal":{"id":"` + strings.Repeat("b", 70<<10) + `"},"operation":"loadTable"}`: "request body too large",
	} {
		status, b = explain(t, base, admin, body)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", body, b)
		assert.Equal(t, "BadRequestException", errorType(b), body)
		assert.Contains(t, readIcebergError(b).Message, msg, body)
	}
	status, b = do(t, http.MethodGet, base+"/lakegate/explain", admin, "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status, "%s", b)
	assert.Equal(t, "UnsupportedOperationException", errorType(b))
}

func mustExplain(t *testing.T, base, token, body string) []byte {
	t.Helper()
	status, b := explain(t, base, token, body)
	require.Equal(t, http.StatusOK, status, "%s", b)
	return b
}

// Behind lakegate_status (which serves the /lakegate/ subtree) the
// explain and preview endpoints are still the Iceberg door's; with no
// policy explain says so.
func TestExplainWithoutPolicyBehindStatus(t *testing.T) {
	base, _ := statusGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "emb")}})
	b := mustExplain(t, base, "", `{"principal":{"id":"bob"},"operation":"dropTable","resource":{"catalog":"emb","namespace":["ns"],"table":"t"}}`)
	assert.Contains(t, string(b), `"decision":{"allow":true,"reason":"no policy is configured: every authenticated request is allowed"`)
	status, b := do(t, http.MethodGet, base+"/lakegate/preview?catalog=emb", "", "", nil)
	assert.Equal(t, http.StatusBadRequest, status, "%s", b)
	assert.Equal(t, "BadRequestException", errorType(b), "the Iceberg door's answer, not the status handler's 404")
}

// In Chromium, under policies/roles.rego, a reader of namespace sales
// sees the catalog, sales with its table and view and nothing of hr;
// an admin sees both; nobody gets a write control, and the token the
// page got in its fragment is in no address and nowhere on the page.
func TestUIInChromiumShowsOnlyWhatThePolicyAllows(t *testing.T) {
	bin := uitest.Chromium(t)
	base := rolesGateway(t)
	admin, sales := uitest.Token(t, base, "admin", "admin-secret"), uitest.Token(t, base, "sales", "sales-secret")
	uitest.Seed(t, base+"/v1/lake", admin)

	dom := uitest.DOM(t, bin, base+"/ui/#token="+url.QueryEscape(sales))
	require.Contains(t, dom, `data-ready="true"`, dom)
	assert.Contains(t, dom, `<section class="catalog" data-catalog="lake">`)
	assert.Contains(t, dom, `data-namespace="sales"`)
	assert.Contains(t, dom, `data-namespace="sales.eu"`)
	assert.Contains(t, dom, `class="table-link">orders</a>`)
	assert.Contains(t, dom, `class="view-link">big_orders</a>`)
	assert.NotContains(t, dom, `data-namespace="hr"`, "hr is hidden from a reader of sales")
	assert.NotContains(t, dom, "people")
	assert.NotContains(t, dom, sales)
	assert.Empty(t, uitest.WriteControls(dom))

	dom = uitest.DOM(t, bin, base+"/ui/#token="+url.QueryEscape(admin))
	assert.Contains(t, dom, `data-namespace="hr"`)
	assert.Contains(t, dom, `class="table-link">people</a>`)
	assert.Empty(t, uitest.WriteControls(dom), "the browser has no write control for anyone")

	// A table's page as the reader of sales: the last commits through the
	// gateway with their principal (the admin's, seeded), every schema and
	// partition spec with the current one marked.
	dom = uitest.DOM(t, bin, uitest.TablePage(base, "lake", []string{"sales"}, "orders")+"&token="+url.QueryEscape(sales))
	commits := regexp.MustCompile(`(?s)<section id="commits">.*?</section>`).FindString(dom)
	require.NotEmpty(t, commits, dom)
	assert.Len(t, regexp.MustCompile(`<tr class="commit">`).FindAllString(commits, -1), 7, commits)
	assert.Regexp(t, `<tr class="commit"><td>[^<]+</td><td class="principal">admin</td><td>iceberg</td><td>updateTable</td>`+
		`<td class="kinds">schema, partition spec</td>`, commits, "newest first")
	assert.Contains(t, commits, `<td>updateTable</td><td class="kinds">overwrite</td><td class="num">1003</td>`)
	assert.Contains(t, commits, `<td>createTable</td><td class="kinds">create</td>`)
	assert.Contains(t, commits, "that this replica served")
	assert.Contains(t, dom, `<details class="schema-version current" data-schema-id="1"><summary>Schema 1 · 7 top-level fields (current)</summary>`)
	assert.Contains(t, dom, `<details class="schema-version" data-schema-id="0"><summary>Schema 0 · 6 top-level fields</summary>`)
	assert.Contains(t, dom, `<td class="doc">where the order came from</td>`)
	assert.Contains(t, dom, `<tr class="spec current" data-spec-id="1"><td class="num">1</td><td>placed_day: day(placed_at), channel: identity(channel)</td><td>current</td></tr>`)
	assert.Contains(t, dom, `<tr class="spec" data-spec-id="0"><td class="num">0</td><td>placed_day: day(placed_at)</td><td></td></tr>`)
	assert.Empty(t, uitest.WriteControls(dom))

	// A table the policy hides is not shown by its address either.
	dom = uitest.DOM(t, bin, uitest.TablePage(base, "lake", []string{"hr"}, "people")+"&token="+url.QueryEscape(sales))
	assert.Contains(t, dom, `role="alert">403: loadTable: principal "sales" has no role on namespace "hr"</p>`)
	assert.NotContains(t, dom, `id="schema"`)

	// Without a token the gateway asks for one.
	dom = uitest.DOM(t, bin, base+"/ui/")
	assert.Contains(t, dom, "401: ")
	assert.NotContains(t, dom, `data-catalog=`)

	// The explain page, asked by an admin through its fragment, and refused to a reader.
	q := "#page=explain&principal=eve&groups=reader%3Asales&operation=loadTable&catalog=lake&namespace=hr&table=people&token="
	dom = uitest.DOM(t, bin, base+"/ui/"+q+url.QueryEscape(admin))
	assert.Contains(t, dom, `<div class="decision deny"><p><strong>Denied</strong>: principal "eve" has no role on namespace "hr"</p>`)
	dom = uitest.DOM(t, bin, base+"/ui/"+q+url.QueryEscape(sales))
	assert.Contains(t, dom, "403: explainDecision")
	assert.NotContains(t, dom, `class="decision`)
}

// With `sharing` set, the landing page lists the Delta Sharing door's
// shares as the door answers the visitor: an admin sees both shares and
// their tables (and the door's error for a share whose namespace is
// missing); a recipient, to whom roles.rego grants nothing, sees none.
func TestUIListsSharesInChromium(t *testing.T) {
	bin := uitest.Chromium(t)
	base := rolesGatewayWith(t, sharingHandler(map[string]any{"change_data_dir": t.TempDir()}),
		map[string]any{"handler": "lakegate_ui", "sharing": "/delta-sharing"})
	admin := uitest.Token(t, base, "admin", "admin-secret")
	uitest.Seed(t, base+"/v1/lake", admin)

	resp, cfg := uiGet(t, base+"/ui/config.json", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"sharing":"/delta-sharing"}`, cfg)

	dom := uitest.DOM(t, bin, base+"/ui/#token="+url.QueryEscape(admin))
	shares := regexp.MustCompile(`(?s)<section id="shares">.*?</section>`).FindString(dom)
	require.NotEmpty(t, shares, dom)
	assert.Contains(t, shares, `<li class="share" data-share="demo">`)
	assert.Contains(t, shares, `<span class="icon">S</span> sales.orders</li>`)
	assert.Contains(t, shares, `<span class="icon">S</span> extra.orders_copy</li>`)
	assert.Contains(t, shares, `<li class="share" data-share="other">`)
	assert.Contains(t, dom, `data-catalog="lake"`)
	// An admin sees who each share is shared with, never a token.
	assert.Contains(t, shares, `<ul class="recipients"><li class="recipient" data-recipient="partner">Recipient <strong>partner</strong> · no expiry</li></ul>`)
	assert.Contains(t, shares, `<li class="none">No recipient (only principals the policy allows).</li>`)
	assert.NotContains(t, dom, recipientToken)

	// roles.rego gives a share's recipient no lakegate role: the door
	// knows the token, the policy shows it nothing, and the catalogs
	// refuse it.
	dom = uitest.DOM(t, bin, base+"/ui/#token="+url.QueryEscape(recipientToken))
	shares = regexp.MustCompile(`(?s)<section id="shares">.*?</section>`).FindString(dom)
	assert.Contains(t, shares, "No share is open to you.", dom)
	assert.NotContains(t, shares, "recipient")
	assert.NotContains(t, dom, `data-catalog="lake"`)
	assert.Contains(t, dom, "401: ")
	assert.Empty(t, uitest.WriteControls(dom))
}

// GET /lakegate/preview: a table's first rows, read by the gateway from
// the warehouse, in the Iceberg error model when it cannot.
func TestPreview(t *testing.T) {
	base := uiGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "lake")}})
	_, states := writeOrders(t, base)
	kept := map[int64]order{}
	for _, o := range states[len(states)-1] {
		kept[o.ID] = o
	}

	status, b := do(t, http.MethodGet, base+"/lakegate/preview?catalog=lake&namespace=sales&table=orders&limit=5", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	var got struct {
		Columns []string `json:"columns"`
		Rows    []struct {
			ID     int64  `json:"id"`
			Region string `json:"region"`
			Note   string `json:"note"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, []string{"id", "region", "note"}, got.Columns)
	require.Len(t, got.Rows, 5)
	for _, r := range got.Rows {
		want, ok := kept[r.ID]
		require.True(t, ok, "row %d is in the current snapshot", r.ID)
		assert.Equal(t, want.Region, r.Region)
		assert.Equal(t, want.Note, r.Note)
	}
	status, b = do(t, http.MethodGet, base+"/lakegate/preview?catalog=lake&namespace=sales&table=orders", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Len(t, got.Rows, 10, "ten rows by default")

	seedTables(t, base+"/v1/lake", "empty", "t")
	status, b = do(t, http.MethodGet, base+"/lakegate/preview?catalog=lake&namespace=empty&table=t", "", "", nil)
	require.Equal(t, http.StatusOK, status, "%s", b)
	assert.Contains(t, string(b), `"rows":[]`, "a table without a snapshot has no rows")

	for query, want := range map[string]struct {
		status int
		typ    string
		msg    string
	}{
		"catalog=lake&namespace=sales":                        {400, "BadRequestException", "catalog, namespace and table are required"},
		"catalog=lake&namespace=sales&table=orders&limit=0":   {400, "BadRequestException", "limit must be a number from 1 to 100"},
		"catalog=lake&namespace=sales&table=orders&limit=101": {400, "BadRequestException", "limit must be a number from 1 to 100"},
		"catalog=nope&namespace=sales&table=orders":           {404, "NoSuchWarehouseException", `no catalog named "nope"`},
		"catalog=lake&namespace=sales&table=missing":          {404, "NoSuchTableException", "missing"},
	} {
		status, b = do(t, http.MethodGet, base+"/lakegate/preview?"+query, "", "", nil)
		assert.Equal(t, want.status, status, "%s: %s", query, b)
		assert.Equal(t, want.typ, errorType(b), query)
		assert.Contains(t, readIcebergError(b).Message, want.msg, query)
	}
	status, b = do(t, http.MethodPost, base+"/lakegate/preview?catalog=lake&namespace=sales&table=orders", "", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status, "%s", b)
}

// Under roles.rego only an admin may preview: a reader, even of the
// table's namespace, gets the policy's 403 before anything is read.
func TestPreviewNeedsThePolicy(t *testing.T) {
	base := rolesGateway(t)
	admin := uitest.Token(t, base, "admin", "admin-secret")
	uitest.Seed(t, base+"/v1/lake", admin)
	for _, id := range []string{"reader", "writer", "sales"} {
		status, b := do(t, http.MethodGet, base+"/lakegate/preview?catalog=lake&namespace=sales&table=orders", uitest.Token(t, base, id, id+"-secret"), "", nil)
		assert.Equal(t, http.StatusForbidden, status, "%s: %s", id, b)
		assert.Contains(t, readIcebergError(b).Message, "previewTable: ", id)
	}
	status, b := do(t, http.MethodGet, base+"/lakegate/preview?catalog=lake&namespace=sales&table=orders", "", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "%s", b)
}

// A table's page shows its first rows where the policy allows (here no
// policy: everyone).
func TestUIPreviewInChromium(t *testing.T) {
	bin := uitest.Chromium(t)
	base := uiGateway(t, map[string]any{"catalogs": []any{embeddedCatalog(t, "lake")}})
	writeOrders(t, base)
	dom := uitest.DOM(t, bin, uitest.TablePage(base, "lake", []string{"sales"}, "orders"))
	rows := regexp.MustCompile(`(?s)<table id="preview-rows">.*?</table>`).FindString(dom)
	require.NotEmpty(t, rows, dom)
	assert.Contains(t, rows, `<th>id</th><th>region</th><th>note</th>`)
	assert.Len(t, regexp.MustCompile(`<tr><td>\d+</td><td>(eu|apac)</td><td>order \d+</td></tr>`).FindAllString(rows, -1), 10, rows)
}

// The sign-in form, driven in Chromium as a user drives it (mouse clicks,
// typed text): a wrong secret is refused in the form and nothing is kept;
// the reader's client id and secret get a token from lakegate's issuer,
// kept in the tab's sessionStorage only (never in the address), and the
// page then shows what the reader may see; "Forget token" drops it.
func TestUILoginFormInChromium(t *testing.T) {
	bin := uitest.Chromium(t)
	base := rolesGateway(t)
	uitest.Seed(t, base+"/v1/lake", uitest.Token(t, base, "admin", "admin-secret"))

	s := uitest.Open(t, bin)
	s.Navigate(base + "/ui/")
	s.WaitFor(`document.querySelector('#main').dataset.ready === 'true'`)
	assert.Contains(t, s.DOM(), "401: ", "anonymous callers are asked to sign in")

	signIn := func(id, secret string) {
		s.Click(`#identity details > summary`)
		s.Click(`#login-form input[name=client_id]`)
		s.Type(id)
		s.Click(`#login-form input[name=client_secret]`)
		s.Type(secret)
		s.Click(`#login-form button[type=submit]`)
	}
	signIn("reader", "wrong-secret")
	s.WaitFor(`document.querySelector('#login-form .error').textContent !== ''`)
	var status string
	s.Eval(`document.querySelector('#login-form .error').textContent`, &status)
	assert.Contains(t, status, "401")
	var kept bool
	s.Eval(`sessionStorage.length > 0`, &kept)
	assert.False(t, kept, "a refused sign-in keeps nothing")

	s.Eval(`document.querySelector('#login-form input[name=client_secret]').value = ''`, nil)
	s.Click(`#login-form input[name=client_secret]`)
	s.Type("reader-secret")
	s.Click(`#login-form button[type=submit]`)
	s.WaitFor(`document.querySelector('#identity .who').textContent.startsWith('Using your token') && document.querySelector('[data-namespace="hr"]')`)
	dom := s.DOM()
	assert.Contains(t, dom, `<section class="catalog" data-catalog="lake">`)
	assert.Contains(t, dom, `class="table-link">orders</a>`)
	assert.NotContains(t, dom, "reader-secret")
	assert.Empty(t, uitest.WriteControls(dom))
	var where struct{ Href, Token string }
	s.Eval(`({Href: location.href, Token: sessionStorage.getItem('lakegate.token') || ''})`, &where)
	require.NotEmpty(t, where.Token, "the issuer's token is in the tab's sessionStorage")
	assert.NotContains(t, where.Href, where.Token)
	code, b := do(t, http.MethodGet, base+"/lakegate/catalogs", where.Token, "", nil)
	assert.Equal(t, http.StatusOK, code, "the page's token works: %s", b)

	s.Click(`#identity button.sign-out`)
	s.WaitFor(`document.querySelector('#identity .who').textContent.startsWith('No token')`)
	s.Eval(`sessionStorage.length > 0`, &kept)
	assert.False(t, kept, "Forget token drops it")
}
