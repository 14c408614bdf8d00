// lakegate's catalog browser. Every request goes to the gateway that
// served this page, with the visitor's own bearer token, so the policy
// decides what is shown exactly as for any other client. The token lives
// in sessionStorage (this tab only); it never goes into a URL the page
// requests, and a #token=... fragment (never sent to a server, so never in
// an access log) is moved into sessionStorage and wiped from the address
// bar at once. Everything is built with textContent: names and documents
// from a catalog are data, never markup.
'use strict';

const TOKEN_KEY = 'lakegate.token';
const SVG_NS = 'http://www.w3.org/2000/svg';
const MAX_NAMESPACES = 500; // per catalog: a huge catalog stays browsable
const MAX_PAGES = 50;       // per listing

// ---- DOM helpers ----

// h builds an element: h('td', {class: 'x'}, 'text', child...).
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  append(el, kids);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null && v !== false) el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, kids) {
  for (const k of kids.flat()) {
    if (k === undefined || k === null || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
}

function table(id, headers, rows) {
  return h('table', {id},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows));
}

function none(text) { return h('p', {class: 'none'}, text); }

function errorBox(err) { return h('p', {class: 'error', role: 'alert'}, err.message || String(err)); }

function stamp(ms) {
  if (typeof ms !== 'number') return '–';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// ---- identity ----

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

// takeFragmentToken moves #token=... (or &token=...) into sessionStorage
// and rewrites the address without it, before anything is fetched.
function takeFragmentToken() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.has('token')) return;
  const t = params.get('token');
  params.delete('token');
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + (rest ? '#' + rest : ''));
}

function renderIdentity() {
  const box = document.getElementById('identity');
  box.replaceChildren();
  if (token()) {
    box.append(h('span', {class: 'who'}, 'Using your token (kept in this tab only). '),
      button('Forget token', 'sign-out', () => { sessionStorage.removeItem(TOKEN_KEY); refresh(); }));
    return;
  }
  const tokenInput = h('input', {type: 'password', name: 'token', autocomplete: 'off', placeholder: 'bearer token', 'aria-label': 'bearer token'});
  const tokenForm = h('form', {id: 'token-form'}, tokenInput, ' ', h('button', {type: 'submit'}, 'Use token'));
  tokenForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (tokenInput.value.trim()) sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
    refresh();
  });
  const id = h('input', {name: 'client_id', autocomplete: 'username', placeholder: 'client id', 'aria-label': 'client id'});
  const secret = h('input', {type: 'password', name: 'client_secret', autocomplete: 'current-password', placeholder: 'client secret', 'aria-label': 'client secret'});
  const status = h('span', {class: 'error'});
  const loginForm = h('form', {id: 'login-form'}, id, ' ', secret, ' ', h('button', {type: 'submit'}, 'Sign in'), ' ', status);
  loginForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.textContent = '';
    try {
      sessionStorage.setItem(TOKEN_KEY, await login(id.value, secret.value));
      refresh();
    } catch (err) {
      status.textContent = err.message;
    }
  });
  box.append(h('span', {class: 'who'}, 'No token: you browse as an anonymous caller. '),
    h('details', {}, h('summary', {}, 'Sign in'),
      h('p', {}, 'Paste a bearer token the gateway accepts:'), tokenForm,
      h('p', {}, 'or sign in with a client of lakegate\'s own token issuer (when the gateway runs one):'), loginForm));
}

function button(text, cls, onclick) {
  const b = h('button', {type: 'button', class: cls}, text);
  b.addEventListener('click', onclick);
  return b;
}

// login asks lakegate's issuer for a token (client credentials, in the
// form body: never in the URL).
async function login(clientID, secret) {
  const body = new URLSearchParams({grant_type: 'client_credentials', client_id: clientID, client_secret: secret, scope: 'catalog'});
  const resp = await fetch('/v1/oauth/tokens', {method: 'POST', body, credentials: 'omit', cache: 'no-store'});
  const doc = await resp.json().catch(() => ({}));
  if (!resp.ok || !doc.access_token) throw new Error(apiMessage(resp, doc));
  return doc.access_token;
}

// ---- the gateway's APIs ----

// apiMessage reads each API's error model: Iceberg's {error: {message}},
// OAuth2's {error, error_description}, the admin API's {error: "..."},
// Delta Sharing's {errorCode, message}.
function apiMessage(resp, doc) {
  const e = doc && doc.error;
  const msg = (e && typeof e === 'object' && e.message) || (doc && doc.error_description) || (typeof e === 'string' && e) ||
    (doc && typeof doc.message === 'string' && doc.message) || resp.statusText;
  if (resp.status === 401) return `${resp.status}: ${msg} — sign in above`;
  return `${resp.status}: ${msg}`;
}

async function api(path, opts = {}) {
  const headers = Object.assign({Accept: 'application/json'}, opts.headers || {});
  if (token()) headers.Authorization = 'Bearer ' + token();
  const resp = await fetch(path, Object.assign({}, opts, {headers, credentials: 'omit', cache: 'no-store'}));
  const doc = resp.status === 204 ? {} : await resp.json().catch(() => null);
  if (!resp.ok) {
    const err = new Error(apiMessage(resp, doc));
    err.status = resp.status;
    throw err;
  }
  return doc;
}

// catalogPaths is how one catalog's Iceberg paths are spelled, from its
// /v1/config: the prefix and the namespace separator.
async function catalogPaths(name) {
  const cfg = await api('/v1/config?warehouse=' + encodeURIComponent(name));
  const o = Object.assign({}, cfg.defaults, cfg.overrides);
  const sep = o['namespace-separator'] ? decodeURIComponent(o['namespace-separator']) : '\x1f';
  const base = '/v1/' + (o.prefix ? encodeURIComponent(o.prefix) + '/' : '');
  return {
    base,
    sep,
    ns: (parts) => base + 'namespaces/' + encodeURIComponent(parts.join(sep)),
  };
}

async function listAll(path, key) {
  const out = [];
  let pageToken = '';
  for (let i = 0; i < MAX_PAGES; i++) {
    const q = pageToken ? (path.includes('?') ? '&' : '?') + 'pageToken=' + encodeURIComponent(pageToken) : '';
    const doc = await api(path + q);
    out.push(...(doc[key] || []));
    pageToken = doc['next-page-token'];
    if (!pageToken) break;
  }
  return out;
}

// ---- routing: the fragment is the page, as URL parameters ----

function route() { return new URLSearchParams(location.hash.slice(1)); }

function link(params, text, cls) {
  return h('a', {href: '#' + new URLSearchParams(params).toString(), class: cls}, text);
}

function nsParam(parts) { return JSON.stringify(parts); }

function parseNs(v) {
  try {
    const parts = JSON.parse(v || '[]');
    if (Array.isArray(parts) && parts.every((p) => typeof p === 'string')) return parts;
  } catch (e) { /* fall through */ }
  return [];
}

let generation = 0; // a newer render wins over one still fetching

async function render() {
  const mine = ++generation;
  renderIdentity();
  const main = document.getElementById('main');
  const r = route();
  const page = r.get('page') || (r.get('table') ? 'table' : r.get('view') ? 'view' : 'catalogs');
  main.replaceChildren(none('Loading…'));
  main.dataset.page = page;
  let content;
  try {
    if (page === 'table') content = await tablePage(r.get('catalog'), parseNs(r.get('ns')), r.get('table'));
    else if (page === 'view') content = await viewPage(r.get('catalog'), parseNs(r.get('ns')), r.get('view'));
    else if (page === 'explain') content = await explainPage();
    else content = await landingPage();
  } catch (err) {
    content = errorBox(err);
  }
  if (mine !== generation) return;
  main.replaceChildren(content);
  main.dataset.ready = 'true';
}

function refresh() { render(); }

// ---- landing: catalogs, namespace tree, tables and views ----

async function landingPage() {
  const cfg = await siteConfig();
  const out = h('div', {id: 'catalogs'});
  try {
    const cats = (await api('/lakegate/catalogs')).catalogs || [];
    if (!cats.length) out.append(none('No catalog is open to you.'));
    out.append(...await Promise.all(cats.map(catalogSection)));
  } catch (err) {
    out.append(errorBox(err));
  }
  // A share recipient's token opens the shares only: listed even when the
  // catalogs refuse it.
  if (cfg.sharing) out.append(await sharesSection(cfg.sharing));
  return out;
}

// siteConfig is what the page knows of its site (/ui/config.json): where
// the Delta Sharing door is, if the operator named it.
async function siteConfig() {
  const resp = await fetch('config.json', {credentials: 'omit', cache: 'no-store'});
  return resp.ok ? resp.json() : {};
}

// sharesSection lists the Delta Sharing door's shares and their tables as
// the door answers the visitor's token: a recipient sees its own share,
// anyone else what the policy lets them see (api "sharing").
async function sharesSection(prefix) {
  const sec = h('section', {id: 'shares'}, h('h2', {}, 'Delta Sharing ', h('span', {class: 'kind'}, prefix)));
  try {
    const [shares, recipients] = await Promise.all([listSharing(prefix + '/shares'), shareRecipients(prefix)]);
    if (!shares.length) sec.append(none('No share is open to you.'));
    const ul = h('ul', {class: 'tree'});
    for (const share of shares) {
      const li = h('li', {class: 'share', 'data-share': share.name}, h('span', {class: 'ns-name'}, share.name));
      try {
        const tables = await listSharing(prefix + '/shares/' + encodeURIComponent(share.name) + '/all-tables');
        li.append(h('ul', {class: 'objects'}, tables.map((t) => h('li', {class: 'shared-table'},
          h('span', {class: 'icon'}, 'S'), ' ', `${t.schema}.${t.name}`))));
      } catch (err) {
        li.append(errorBox(err));
      }
      if (recipients) li.append(recipientList(recipients.get(share.name) || []));
      ul.append(li);
    }
    if (shares.length) sec.append(ul);
  } catch (err) {
    sec.append(errorBox(err));
  }
  return sec;
}

// shareRecipients is who may read each share (the door's configured
// recipients: names and expiry, never a token), by share name; null for
// a visitor the policy does not let listShareRecipients (all but admins
// under roles.rego), who is not told more.
async function shareRecipients(prefix) {
  try {
    const doc = await api(prefix + '/lakegate/recipients');
    return new Map((doc.shares || []).map((sh) => [sh.share, sh.recipients || []]));
  } catch (err) {
    return null;
  }
}

function recipientList(recipients) {
  if (!recipients.length) return h('ul', {class: 'recipients'}, h('li', {class: 'none'}, 'No recipient (only principals the policy allows).'));
  return h('ul', {class: 'recipients'}, recipients.map((rc) => h('li', {class: 'recipient', 'data-recipient': rc.name},
    'Recipient ', h('strong', {}, rc.name),
    rc.expires ? (rc.expired ? ` · expired ${rc.expires}` : ` · until ${rc.expires}`) : ' · no expiry')));
}

async function listSharing(path) {
  const out = [];
  let pageToken = '';
  for (let i = 0; i < MAX_PAGES; i++) {
    const doc = await api(path + (pageToken ? '?pageToken=' + encodeURIComponent(pageToken) : ''));
    out.push(...(doc.items || []));
    pageToken = doc.nextPageToken;
    if (!pageToken) break;
  }
  return out;
}

async function catalogSection(cat) {
  const sec = h('section', {class: 'catalog', 'data-catalog': cat.name},
    h('h2', {}, cat.name, ' ', h('span', {class: 'kind'}, cat.kind), cat.default ? h('span', {class: 'badge'}, 'default') : null));
  try {
    const paths = await catalogPaths(cat.name);
    const budget = {left: MAX_NAMESPACES};
    const tree = await namespaceTree(cat.name, paths, [], budget);
    sec.append(tree.childNodes.length ? tree : none('No namespace here is open to you.'));
    if (budget.truncated) sec.append(none(`Only the first ${MAX_NAMESPACES} namespaces are shown.`));
  } catch (err) {
    sec.append(errorBox(err));
  }
  return sec;
}

// namespaceTree lists the namespaces under parent, each with its tables,
// views and children.
async function namespaceTree(catalog, paths, parent, budget) {
  const q = parent.length ? '?parent=' + encodeURIComponent(parent.join(paths.sep)) : '';
  const ul = h('ul', {class: 'tree'});
  let children = await listAll(paths.base + 'namespaces' + q, 'namespaces');
  // A backend that ignores parent answers every namespace: keep the children.
  children = children.filter((ns) => ns.length === parent.length + 1 && parent.every((p, i) => ns[i] === p));
  // Siblings load at once (the browser bounds connections per host); the
  // budget keeps a huge catalog to MAX_NAMESPACES.
  const picked = children.slice(0, Math.max(budget.left, 0));
  budget.left -= picked.length;
  if (picked.length < children.length) budget.truncated = true;
  ul.append(...await Promise.all(picked.map((ns) => namespaceItem(catalog, paths, ns, budget))));
  return ul;
}

async function namespaceItem(catalog, paths, ns, budget) {
  const li = h('li', {class: 'namespace', 'data-namespace': ns.join('.')}, h('span', {class: 'ns-name'}, ns[ns.length - 1]));
  const [tables, views] = await Promise.all([
    listAll(paths.ns(ns) + '/tables', 'identifiers').catch((err) => err),
    listAll(paths.ns(ns) + '/views', 'identifiers').catch((err) => err),
  ]);
  const items = h('ul', {class: 'objects'});
  for (const [list, kind] of [[tables, 'table'], [views, 'view']]) {
    if (list instanceof Error) {
      // A backend without views answers 404/400/501 for the listing: not worth a word.
      if (kind === 'table' || ![400, 404, 406, 501].includes(list.status)) items.append(h('li', {class: 'error'}, `${kind}s: ${list.message}`));
      continue;
    }
    for (const id of list) {
      items.append(h('li', {class: kind}, h('span', {class: 'icon'}, kind === 'table' ? 'T' : 'V'), ' ',
        link({catalog, ns: nsParam(ns), [kind]: id.name}, id.name, kind + '-link')));
    }
  }
  if (items.childNodes.length) li.append(items);
  try {
    const sub = await namespaceTree(catalog, paths, ns, budget);
    if (sub.childNodes.length) li.append(sub);
  } catch (err) {
    li.append(errorBox(err));
  }
  return li;
}

// ---- a table ----

function crumbs(catalog, ns, name) {
  return h('p', {class: 'crumbs'}, link({}, 'catalogs'), ' / ', catalog, ' / ', ns.join('.'), ' / ', h('strong', {}, name));
}

async function tablePage(catalog, ns, name) {
  const paths = await catalogPaths(catalog);
  const doc = await api(paths.ns(ns) + '/tables/' + encodeURIComponent(name));
  const m = doc.metadata || {};
  const schemas = m.schemas || (m.schema ? [m.schema] : []);
  const schema = schemas.find((x) => x['schema-id'] === m['current-schema-id']) || schemas[schemas.length - 1] || {fields: []};
  const names = fieldNames(schema);
  const [preview, commits] = await Promise.all([previewSection(catalog, ns, name), commitsSection(catalog, ns, name)]);
  return h('article', {id: 'table', 'data-table': name},
    crumbs(catalog, ns, name),
    h('h2', {}, 'Table ', name),
    overview([['Format version', m['format-version']], ['Table UUID', m['table-uuid']], ['Location', m.location],
      ['Metadata file', doc['metadata-location']], ['Last updated', stamp(m['last-updated-ms'])],
      ['Current snapshot', m['current-snapshot-id'] ?? 'none'], ['Schemas', schemas.length]]),
    h('h3', {}, `Schema ${schema['schema-id'] ?? ''}`), schemaTable(schema),
    h('h3', {}, 'Partition spec'), partitionSpec(m, names),
    h('h3', {}, 'Sort order'), sortOrder(m, names),
    h('h3', {}, 'Snapshots and refs'), snapshotChart(m), snapshotTable(m), refTable(m),
    commits,
    h('h3', {}, 'All schemas'), schemaHistory(schemas, schema),
    h('h3', {}, 'All partition specs'), specHistory(m, schemas),
    deltaSection(m.properties || {}),
    h('h3', {}, 'Metadata log'), logTable('metadata-log', m['metadata-log'], 'metadata-file', 'Metadata file'),
    h('h3', {}, 'Properties'), propertyTable(m.properties),
    preview);
}

// commitsSection lists the table's last commits through the gateway
// (GET /lakegate/commits: who, when, through which door, what kind),
// shown to whoever may load the table.
async function commitsSection(catalog, ns, name) {
  const q = new URLSearchParams({catalog, namespace: ns.join('\x1f'), table: name});
  const sec = h('section', {id: 'commits'}, h('h3', {}, 'Last commits through the gateway'));
  try {
    const doc = await api('/lakegate/commits?' + q.toString());
    if (!doc.commits.length) sec.append(none('No commit through the gateway is on record.'));
    else {
      sec.append(table('commit-log', ['Time', 'Principal', 'Door', 'Operation', 'Kind', 'Snapshots', 'Metadata file', 'Idempotency-Key'],
        doc.commits.map((c) => h('tr', {class: 'commit'},
          h('td', {}, stamp(Date.parse(c.time))), h('td', {class: 'principal'}, c.principal), h('td', {}, c.door || '–'),
          h('td', {}, c.operation), h('td', {class: 'kinds'}, (c.kinds || []).join(', ')),
          h('td', {class: 'num'}, (c['snapshot-ids'] || []).join(', ')), h('td', {class: 'path'}, c['metadata-location'] || ''),
          h('td', {class: 'path'}, c['idempotency-key'] || '')))));
    }
    sec.append(h('p', {class: 'meta'}, doc.shared
      ? 'The newest 50, kept 7 days, from every replica of the gateway.'
      : 'The newest 50, kept 7 days, that this replica served (the gateway has no Redis to share them through).'));
  } catch (err) {
    sec.append(h('p', {class: 'none'}, 'Not shown: ', err.message));
  }
  return sec;
}

// previewSection shows the table's first rows, which the gateway reads
// from the warehouse when the policy lets the visitor previewTable
// (admins under roles.rego); otherwise it says why, quietly.
async function previewSection(catalog, ns, name) {
  const q = new URLSearchParams({catalog, namespace: ns.join('\x1f'), table: name, limit: '10'});
  const sec = h('section', {id: 'preview'}, h('h3', {}, 'First rows'));
  try {
    const doc = await api('/lakegate/preview?' + q.toString());
    if (!doc.rows.length) sec.append(none('No rows.'));
    else {
      const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
      sec.append(table('preview-rows', doc.columns, doc.rows.map((row) =>
        h('tr', {}, doc.columns.map((c) => h('td', {}, cell(row[c])))))));
    }
  } catch (err) {
    sec.append(h('p', {class: 'none'}, 'Not shown: ', err.message));
  }
  return sec;
}

// deltaSection shows a Delta table's side (docs/unity-delta.md, the
// lakegate.delta. properties): its type, log versions, protocol and the
// commits the catalog ratified but the log has not backfilled yet.
function deltaSection(props) {
  const p = (k) => props['lakegate.delta.' + k];
  if (!p('table-type') && !p('protocol')) return null;
  const json = (k, fallback) => { try { return JSON.parse(p(k)); } catch (e) { return fallback; } };
  const proto = json('protocol', {});
  const list = (v) => (Array.isArray(v) && v.length ? v.join(', ') : '–');
  const commits = json('commits', []);
  return h('section', {id: 'delta'}, h('h3', {}, 'Delta'),
    overview([['Table type', p('table-type')], ['Latest table version', p('latest-table-version')],
      ['Last commit version', p('last-commit-version')],
      ['Last commit', p('last-commit-timestamp-ms') ? stamp(Number(p('last-commit-timestamp-ms'))) : undefined],
      ['Log version synced', p('synced-version')],
      ['Protocol', proto['min-reader-version'] !== undefined ? `reader ${proto['min-reader-version']}, writer ${proto['min-writer-version']}` : undefined],
      ['Reader features', list(proto['reader-features'])], ['Writer features', list(proto['writer-features'])]]),
    Array.isArray(commits) && commits.length ? table('delta-commits', ['Version', 'Time', 'File'], commits.map((c) =>
      h('tr', {}, h('td', {class: 'num'}, c.version), h('td', {}, stamp(c.timestamp)), h('td', {class: 'path'}, c['file-name'])))) : null);
}

function overview(rows) {
  return h('table', {class: 'overview'}, rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v ?? '–'))));
}

// schemaRows flattens a schema: each field with its depth, nested
// struct, list and map types below it.
function schemaRows(fields, depth, out) {
  for (const f of fields || []) {
    out.push({id: f.id, name: f.name, type: f.type, required: f.required, doc: f.doc, depth});
    nestedRows(f.type, depth + 1, out);
  }
  return out;
}

function nestedRows(type, depth, out) {
  if (!type || typeof type !== 'object') return;
  if (type.type === 'struct') schemaRows(type.fields, depth, out);
  if (type.type === 'list') {
    out.push({id: type['element-id'], name: 'element', type: type.element, required: type['element-required'], depth});
    nestedRows(type.element, depth + 1, out);
  }
  if (type.type === 'map') {
    out.push({id: type['key-id'], name: 'key', type: type.key, required: true, depth});
    nestedRows(type.key, depth + 1, out);
    out.push({id: type['value-id'], name: 'value', type: type.value, required: type['value-required'], depth});
    nestedRows(type.value, depth + 1, out);
  }
}

function typeName(t) {
  if (typeof t === 'string') return t;
  if (!t) return '?';
  if (t.type === 'list') return `list<${typeName(t.element)}>`;
  if (t.type === 'map') return `map<${typeName(t.key)}, ${typeName(t.value)}>`;
  return t.type || '?';
}

// schemaHistory lists every schema of the table, newest first, each
// with its fields folded away (the current one, shown above, marked).
function schemaHistory(schemas, current) {
  if (schemas.length < 2) return none('Only the current schema.');
  const sorted = schemas.slice().sort((a, b) => (b['schema-id'] ?? 0) - (a['schema-id'] ?? 0));
  return h('div', {id: 'schemas'}, sorted.map((sc) => {
    const cur = sc === current;
    return h('details', {class: 'schema-version' + (cur ? ' current' : ''), 'data-schema-id': sc['schema-id']},
      h('summary', {}, `Schema ${sc['schema-id']}`, ` · ${(sc.fields || []).length} top-level fields`, cur ? ' (current)' : ''),
      schemaTable(sc, 'schema-' + sc['schema-id']));
  }));
}

// specHistory lists every partition spec, newest first, the default one
// marked; source columns are named by the schema that has them.
function specHistory(m, schemas) {
  const specs = (m['partition-specs'] || []).slice().sort((a, b) => b['spec-id'] - a['spec-id']);
  if (!specs.length) return none('No partition spec.');
  const names = new Map();
  for (const sc of schemas) for (const [id, n] of fieldNames(sc)) if (!names.has(id)) names.set(id, n);
  return table('partition-specs', ['Spec id', 'Fields', ''], specs.map((sp) => {
    const cur = sp['spec-id'] === m['default-spec-id'];
    const fields = (sp.fields || []).map((f) => `${f.name}: ${f.transform}(${names.get(f['source-id']) ?? 'field ' + f['source-id']})`);
    return h('tr', {class: 'spec' + (cur ? ' current' : ''), 'data-spec-id': sp['spec-id']},
      h('td', {class: 'num'}, sp['spec-id']), h('td', {}, fields.length ? fields.join(', ') : 'unpartitioned'),
      h('td', {}, cur ? 'current' : ''));
  }));
}

function schemaTable(schema, id = 'schema') {
  const rows = schemaRows(schema.fields, 0, []).map((f) => h('tr', {class: 'field', 'data-field-id': f.id},
    h('td', {class: 'num'}, f.id),
    h('td', {class: 'fname'}, h('span', {class: 'indent d' + Math.min(f.depth, 6)}), f.name),
    h('td', {class: 'type'}, typeName(f.type)),
    h('td', {}, f.required ? 'required' : 'optional'),
    h('td', {class: 'doc'}, f.doc || '')));
  const ids = schema['identifier-field-ids'] || [];
  return h('div', {}, table(id, ['Field id', 'Name', 'Type', 'Required', 'Doc'], rows),
    ids.length ? h('p', {class: 'meta'}, 'Identifier fields: ', ids.join(', ')) : null);
}

function fieldNames(schema) {
  const names = new Map();
  const walk = (fields, prefix) => {
    for (const f of fields || []) {
      names.set(f.id, prefix + f.name);
      if (f.type && f.type.type === 'struct') walk(f.type.fields, prefix + f.name + '.');
    }
  };
  walk(schema.fields, '');
  return names;
}

function partitionSpec(m, names) {
  const specs = m['partition-specs'] || [];
  const spec = specs.find((x) => x['spec-id'] === m['default-spec-id']) || specs[0];
  if (!spec || !(spec.fields || []).length) return none('Unpartitioned.');
  return table('partition-spec', ['Partition field id', 'Name', 'Source', 'Transform'], spec.fields.map((f) =>
    h('tr', {}, h('td', {class: 'num'}, f['field-id']), h('td', {}, f.name),
      h('td', {}, names.get(f['source-id']) ?? `field ${f['source-id']}`), h('td', {}, f.transform))));
}

function sortOrder(m, names) {
  const orders = m['sort-orders'] || [];
  const order = orders.find((x) => x['order-id'] === m['default-sort-order-id']) || orders[0];
  if (!order || !(order.fields || []).length) return none('Unsorted.');
  return table('sort-order', ['Source', 'Transform', 'Direction', 'Nulls'], order.fields.map((f) =>
    h('tr', {}, h('td', {}, names.get(f['source-id']) ?? `field ${f['source-id']}`), h('td', {}, f.transform),
      h('td', {}, f.direction), h('td', {}, f['null-order']))));
}

function propertyTable(props) {
  const keys = Object.keys(props || {}).sort();
  if (!keys.length) return none('No properties.');
  return table('properties', ['Key', 'Value'], keys.map((k) => h('tr', {}, h('td', {}, k), h('td', {}, props[k]))));
}

function logTable(id, entries, key, title) {
  if (!(entries || []).length) return none('Empty.');
  return table(id, ['Time', title], entries.slice().reverse().map((e) =>
    h('tr', {}, h('td', {}, stamp(e['timestamp-ms'])), h('td', {class: 'path'}, e[key]))));
}

function snapshotTable(m) {
  const snaps = (m.snapshots || []).slice().sort((a, b) => b['timestamp-ms'] - a['timestamp-ms']);
  if (!snaps.length) return none('No snapshots yet.');
  return table('snapshots', ['Snapshot id', 'Parent', 'Time', 'Operation', 'Sequence', 'Summary'], snaps.map((sn) => {
    const sum = Object.assign({}, sn.summary);
    const op = sum.operation;
    delete sum.operation;
    return h('tr', {class: 'snapshot', 'data-snapshot-id': sn['snapshot-id']},
      h('td', {class: 'num'}, sn['snapshot-id']), h('td', {class: 'num'}, sn['parent-snapshot-id'] ?? '–'),
      h('td', {}, stamp(sn['timestamp-ms'])), h('td', {}, op || '–'), h('td', {class: 'num'}, sn['sequence-number'] ?? '–'),
      h('td', {class: 'summary'}, Object.entries(sum).map(([k, v]) => `${k}=${v}`).join(', ')));
  }));
}

function refTable(m) {
  const refs = Object.entries(m.refs || {});
  if (!refs.length) return null;
  return table('refs', ['Ref', 'Type', 'Snapshot id', 'Retention'], refs.sort().map(([name, ref]) =>
    h('tr', {}, h('td', {}, name), h('td', {}, ref.type), h('td', {class: 'num'}, ref['snapshot-id']),
      h('td', {}, ['max-ref-age-ms', 'max-snapshot-age-ms', 'min-snapshots-to-keep']
        .filter((k) => ref[k] !== undefined).map((k) => `${k}=${ref[k]}`).join(', ')))));
}

// snapshotChart draws the snapshots on a time axis, one lane per branch
// (main first), a line from each snapshot to its parent, and the refs as
// labels on the snapshots they point to.
function snapshotChart(m) {
  const snaps = m.snapshots || [];
  if (!snaps.length) return null;
  const byID = new Map(snaps.map((sn) => [String(sn['snapshot-id']), sn]));
  const refs = Object.entries(m.refs || {});
  const branches = refs.filter(([, r]) => r.type === 'branch').sort(([a], [b]) => (a === 'main' ? -1 : b === 'main' ? 1 : a.localeCompare(b)));
  const lane = new Map();
  branches.forEach(([, r], i) => {
    for (let sn = byID.get(String(r['snapshot-id'])); sn && !lane.has(String(sn['snapshot-id'])); sn = byID.get(String(sn['parent-snapshot-id']))) {
      lane.set(String(sn['snapshot-id']), i);
    }
  });
  const lanes = Math.max(branches.length, 1) + (snaps.some((sn) => !lane.has(String(sn['snapshot-id']))) ? 1 : 0);
  const laneOf = (sn) => lane.get(String(sn['snapshot-id'])) ?? lanes - 1;
  const times = snaps.map((sn) => sn['timestamp-ms']);
  let t0 = Math.min(...times), t1 = Math.max(...times);
  if (t1 === t0) { t0 -= 1000; t1 += 1000; }
  const W = 900, left = 90, right = 40, top = 30, laneH = 44;
  const H = top + lanes * laneH + 30;
  const x = (t) => left + (t - t0) / (t1 - t0) * (W - left - right);
  const y = (sn) => top + laneOf(sn) * laneH + laneH / 2;
  const svg = s('svg', {id: 'snapshot-chart', class: 'timeline', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
    'aria-label': `${snaps.length} snapshots on a time line`});
  const laneNames = branches.map(([name]) => name);
  if (lanes > branches.length) laneNames.push(branches.length ? 'other' : 'snapshots');
  laneNames.forEach((name, i) => {
    const ly = top + i * laneH + laneH / 2;
    svg.append(s('line', {class: 'lane', x1: left, x2: W - right, y1: ly, y2: ly}),
      s('text', {class: 'lane-name', x: 6, y: ly + 4}, name));
  });
  for (const sn of snaps) {
    const parent = byID.get(String(sn['parent-snapshot-id']));
    if (parent) svg.append(s('line', {class: 'parent', x1: x(parent['timestamp-ms']), y1: y(parent), x2: x(sn['timestamp-ms']), y2: y(sn)}));
  }
  const current = String(m['current-snapshot-id']);
  for (const sn of snaps) {
    const id = String(sn['snapshot-id']);
    const op = (sn.summary || {}).operation || 'snapshot';
    svg.append(s('circle', {class: 'snapshot op-' + op.replace(/[^a-z]/g, '') + (id === current ? ' current' : ''),
      'data-snapshot-id': id, cx: x(sn['timestamp-ms']), cy: y(sn), r: id === current ? 7 : 5},
    s('title', {}, `${id} · ${op} · ${stamp(sn['timestamp-ms'])}`)));
  }
  const labelled = new Map();
  for (const [name, r] of refs.sort()) {
    const sn = byID.get(String(r['snapshot-id']));
    if (!sn) continue;
    const n = labelled.get(sn) || 0;
    labelled.set(sn, n + 1);
    svg.append(s('text', {class: 'ref ' + r.type, x: x(sn['timestamp-ms']) + 9, y: y(sn) - 9 - n * 12}, name));
  }
  svg.append(s('text', {class: 'axis', x: left, y: H - 8}, stamp(t0)),
    s('text', {class: 'axis', x: W - right, y: H - 8, 'text-anchor': 'end'}, stamp(t1)));
  return h('figure', {}, svg, h('figcaption', {class: 'meta'},
    'Each dot is a snapshot (the larger one is current), joined to its parent; labels are branches and tags.'));
}

// ---- a view ----

async function viewPage(catalog, ns, name) {
  const paths = await catalogPaths(catalog);
  const doc = await api(paths.ns(ns) + '/views/' + encodeURIComponent(name));
  const m = doc.metadata || {};
  const versions = (m.versions || []).slice().sort((a, b) => b['version-id'] - a['version-id']);
  const schemas = new Map((m.schemas || []).map((x) => [x['schema-id'], x]));
  const cur = versions.find((v) => v['version-id'] === m['current-version-id']) || versions[0];
  return h('article', {id: 'view', 'data-view': name},
    crumbs(catalog, ns, name),
    h('h2', {}, 'View ', name),
    overview([['Format version', m['format-version']], ['View UUID', m['view-uuid']], ['Location', m.location],
      ['Metadata file', doc['metadata-location']], ['Current version', m['current-version-id']]]),
    h('h3', {}, 'Schema'), cur && schemas.get(cur['schema-id']) ? schemaTable(schemas.get(cur['schema-id'])) : none('No schema.'),
    h('h3', {}, 'Versions'),
    h('div', {id: 'versions'}, versions.map((v) => h('section', {class: 'version' + (v === cur ? ' current' : ''), 'data-version-id': v['version-id']},
      h('h4', {}, `Version ${v['version-id']}`, v === cur ? ' (current)' : '', ' · ', stamp(v['timestamp-ms']),
        v['default-namespace'] ? ` · default namespace ${v['default-namespace'].join('.')}` : ''),
      (v.representations || []).map((rep) => h('div', {class: 'representation'},
        h('p', {class: 'meta'}, `${rep.type || ''} ${rep.dialect || ''}`), h('pre', {class: 'sql'}, rep.sql || ''))),
      Object.keys(v.summary || {}).length ? h('p', {class: 'meta'}, Object.entries(v.summary).map(([k, x]) => `${k}=${x}`).join(', ')) : null))),
    h('h3', {}, 'Version log'), logTable('version-log', m['version-log'], 'version-id', 'Version'),
    h('h3', {}, 'Properties'), propertyTable(m.properties));
}

// ---- explain (admins) ----

const OPERATIONS = ['getConfig', 'listNamespaces', 'loadNamespaceMetadata', 'createNamespace', 'dropNamespace', 'updateProperties',
  'listTables', 'loadTable', 'createTable', 'updateTable', 'dropTable', 'renameTable', 'registerTable', 'loadCredentials',
  'planTableScan', 'commitTransaction', 'listViews', 'loadView', 'createView', 'replaceView', 'dropView', 'renameView'];

async function explainPage() {
  const doc = await api('/lakegate/catalogs').catch(() => ({catalogs: []}));
  const field = (label, input) => h('label', {}, h('span', {}, label), input);
  const principal = h('input', {name: 'principal', required: true, placeholder: 'e.g. reader'});
  const groups = h('input', {name: 'groups', placeholder: 'comma-separated, e.g. reader, writer:sales'});
  const operation = h('select', {name: 'operation'}, OPERATIONS.map((o) => h('option', {value: o}, o)));
  const catalog = h('select', {name: 'catalog'}, (doc.catalogs || []).map((c) => h('option', {value: c.name, selected: c.default}, c.name)));
  const namespace = h('input', {name: 'namespace', placeholder: 'levels separated by dots, e.g. sales.eu'});
  const tableName = h('input', {name: 'table', placeholder: 'table (optional)'});
  const viewName = h('input', {name: 'view', placeholder: 'view (optional)'});
  const result = h('div', {id: 'explain-result'});
  const form = h('form', {id: 'explain-form', class: 'grid'},
    field('Principal', principal), field('Groups', groups), field('Operation', operation), field('Catalog', catalog),
    field('Namespace', namespace), field('Table', tableName), field('View', viewName),
    h('div', {}, h('button', {type: 'submit'}, 'Explain')));
  const ask = async () => {
    result.replaceChildren(none('Asking the policy…'));
    const split = (v, sep) => v.split(sep).map((x) => x.trim()).filter(Boolean);
    const body = {
      principal: {id: principal.value.trim(), groups: split(groups.value, ',')},
      operation: operation.value,
      resource: {catalog: catalog.value, namespace: split(namespace.value, '.'), table: tableName.value.trim(), view: viewName.value.trim()},
    };
    try {
      const doc = await api('/lakegate/explain', {method: 'POST', body: JSON.stringify(body), headers: {'Content-Type': 'application/json'}});
      result.replaceChildren(decisionBox(doc.decision || {}),
        h('details', {}, h('summary', {}, 'The input the policy saw'), h('pre', {class: 'input'}, JSON.stringify(doc.input, null, 2))));
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
  };
  form.addEventListener('submit', (ev) => { ev.preventDefault(); ask(); });
  // A fragment may carry the question (#page=explain&principal=...&
  // operation=...): an explanation can be linked to, and is asked at once.
  const r = route();
  const prefill = {principal, groups, operation, catalog, namespace, table: tableName, view: viewName};
  for (const [k, input] of Object.entries(prefill)) {
    if (r.has(k)) input.value = r.get(k);
  }
  if (r.get('principal') && r.get('operation')) ask();
  return h('article', {id: 'explain'}, h('h2', {}, 'Explain a decision'),
    h('p', {class: 'meta'}, 'Asks the gateway\'s policy what it decides for a principal, an operation and an object, and why. ' +
      'Only a caller the policy lets explain (operation explainDecision: admins under policies/roles.rego) gets an answer.'),
    form, result);
}

function decisionBox(d) {
  const obligations = Object.entries(d.obligations || {}).filter(([, v]) => v && (!(Array.isArray(v)) || v.length));
  return h('div', {class: 'decision ' + (d.allow ? 'allow' : 'deny')},
    h('p', {}, h('strong', {}, d.allow ? 'Allowed' : 'Denied'), d.reason ? ': ' + d.reason : ''),
    obligations.length ? h('p', {class: 'meta'}, 'Obligations: ', obligations.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')) : null);
}

// ---- start ----

takeFragmentToken();
window.addEventListener('hashchange', () => { takeFragmentToken(); render(); });
render();
