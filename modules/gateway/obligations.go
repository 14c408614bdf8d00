package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/lakegate/lakegate/policies"
	"github.com/lakegate/lakegate/telemetry"
	"github.com/lakegate/lakegate/upstream"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// returnsTable are the operations whose answer is a LoadTableResult (or a
// CommitTableResponse): where vended credentials travel.
var returnsTable = map[string]bool{
	icerest.OpLoadTable: true, icerest.OpCreateTable: true, icerest.OpUpdateTable: true,
	icerest.OpRegisterTable: true,
}

// stripCredentials removes `storage-credentials`, secret `config` keys and
// the static signer headers of `remote-signing-config` (which may
// authenticate to the backend's signer) from a table response; other
// bodies are returned as they are. With dropSigner (a catalog whose
// storage the gateway governs) every setting that sends the client to
// the backend's signer goes too: the signer keys of config and the whole
// remote-signing-config.
func stripCredentials(body []byte, dropSigner bool) []byte {
	if !mayHoldCredentials(body, dropSigner) {
		return body // nothing to strip: skip parsing a large document
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	delete(doc, "storage-credentials")
	if raw, ok := doc["remote-signing-config"]; ok {
		var rsc map[string]json.RawMessage
		if dropSigner || json.Unmarshal(raw, &rsc) != nil {
			delete(doc, "remote-signing-config") // dropped whole, or not the spec's object: nothing to keep
		} else if _, ok := rsc["headers"]; ok {
			delete(rsc, "headers")
			doc["remote-signing-config"], _ = json.Marshal(rsc)
		}
	}
	if raw, ok := doc["config"]; ok {
		var cfg map[string]string
		if json.Unmarshal(raw, &cfg) == nil {
			for k := range cfg {
				if icerest.IsSecretConfigKey(k) || dropSigner && icerest.IsSignerConfigKey(k) {
					delete(cfg, k)
				}
			}
			doc["config"], _ = json.Marshal(cfg)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// credentialMarkers are substrings without which a body can hold neither
// storage-credentials, signer headers nor a secret config key (icerest.SecretKeyParts),
// nor a key spelled with JSON escapes (`\u0073ecret` is "secret" once
// decoded, which a byte search would miss).
var credentialMarkers = func() [][]byte {
	out := [][]byte{[]byte("storage-credentials"), []byte("remote-signing-config"), []byte(`\u`)}
	for _, p := range icerest.SecretKeyParts {
		out = append(out, []byte(p))
	}
	return out
}()

// mayHoldCredentials is a cheap necessary condition for stripCredentials
// to change anything; most table answers fail it and are passed as is.
// Iceberg config keys are lower case, so the search is too.
func mayHoldCredentials(body []byte, dropSigner bool) bool {
	for _, m := range credentialMarkers {
		if bytes.Contains(body, m) {
			return true
		}
	}
	return dropSigner && bytes.Contains(body, []byte("sign")) // signer.*, s3.signer*, s3.remote-signing-enabled
}

// serveStripped runs next without asking the backend for credentials and
// strips any that still come back; with dropSigner, the backend's signer
// settings too (stripCredentials).
func serveStripped(w http.ResponseWriter, r *http.Request, q icerest.Request, next upstream.Handler, dropSigner bool) {
	r.Header.Del("X-Iceberg-Access-Delegation")
	if !returnsTable[q.Route.Operation] {
		next(w, r, q)
		return
	}
	rec := upstream.Capture(next, r, q)
	// What the pipeline read of the answer tells whether there is anything
	// to strip: most answers are passed on without being parsed again.
	if rec.Status == http.StatusOK && (rec.MayHoldCredentials() || dropSigner && rec.Table().SignerSettings) {
		rec.SetBytes(stripCredentials(rec.Bytes(), dropSigner))
	}
	rec.WriteTo(w)
}

// listings are the operations whose pages are filtered by the policy.
var listings = map[string]bool{
	icerest.OpListNamespaces: true, icerest.OpListTables: true, icerest.OpListViews: true,
}

// filterPage keeps only the items of a listing page the principal may
// see, in one policy evaluation for the page; the page token is kept, so
// pagination goes on (a page may come back shorter, or empty).
func filterPage(ctx context.Context, eng *policies.Engine, in policies.Input, rec *upstream.Captured) {
	if rec.Status != http.StatusOK {
		return
	}
	var page map[string]json.RawMessage
	if json.Unmarshal(rec.Bytes(), &page) != nil {
		return
	}
	field := "identifiers"
	if in.Operation == icerest.OpListNamespaces {
		field = "namespaces"
	}
	var entries []json.RawMessage
	if json.Unmarshal(page[field], &entries) != nil {
		return
	}
	in.Items = make([]policies.Item, len(entries))
	for i, e := range entries {
		in.Items[i] = pageItem(in.Operation, e)
	}
	visible, err := eng.Filter(ctx, in)
	keep := func(i int) bool { return err == nil && i < len(visible) && visible[i] }
	record := telemetry.From(ctx)
	for i := range entries {
		record.CountDecision(keep(i))
	}
	page[field] = keepEntries(entries, keep)
	for _, k := range alignedFields {
		raw, ok := page[k]
		if !ok {
			continue
		}
		var aligned []json.RawMessage
		if json.Unmarshal(raw, &aligned) != nil || len(aligned) != len(entries) {
			delete(page, k) // not aligned with the page: it cannot be filtered
			continue
		}
		page[k] = keepEntries(aligned, keep)
	}
	out, _ := json.Marshal(page)
	rec.SetBytes(out)
}

// alignedFields are listing fields whose i-th entry describes the page's
// i-th item (seed 000's returnUuids and returnProtectionStatus): filtered
// with it, so no hidden item's UUID is shown.
var alignedFields = []string{"namespace-uuids", "table-uuids", "protection-status"}

func keepEntries(entries []json.RawMessage, keep func(int) bool) json.RawMessage {
	kept := make([]json.RawMessage, 0, len(entries))
	for i, e := range entries {
		if keep(i) {
			kept = append(kept, e)
		}
	}
	b, _ := json.Marshal(kept)
	return b
}

func pageItem(op string, raw json.RawMessage) policies.Item {
	if op == icerest.OpListNamespaces {
		var ns []string
		_ = json.Unmarshal(raw, &ns)
		return policies.Item{Namespace: ns}
	}
	var id struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	}
	_ = json.Unmarshal(raw, &id)
	if op == icerest.OpListViews {
		return policies.Item{Namespace: id.Namespace, View: id.Name}
	}
	return policies.Item{Namespace: id.Namespace, Table: id.Name}
}
