package delta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/translate/schema"
)

// Iceberg table properties lakegate keeps Delta-only state in. Everything
// under Prefix is lakegate's: Delta clients never see or write it directly.
const (
	Prefix = "lakegate.delta."
	// PropTableType is MANAGED or EXTERNAL, as the creator said.
	PropTableType = Prefix + "table-type"
	// PropProtocol is the DeltaProtocol as JSON.
	PropProtocol = Prefix + "protocol"
	// PropDomainPrefix + domain name holds that domain's metadata as JSON.
	PropDomainPrefix = Prefix + "domain."
	// PropColumns holds, by Iceberg field id, what the Iceberg schema cannot
	// say about a Delta column: field metadata other than the comment (which
	// is the field doc) and the short/byte types Iceberg widens to int.
	PropColumns = schema.HintsProperty
	// PropLastCommitVersion and PropLastCommitTimestamp are the Delta
	// metadata commit version and time (delta.lastUpdateVersion,
	// delta.lastCommitTimestamp).
	PropLastCommitVersion   = Prefix + "last-commit-version"
	PropLastCommitTimestamp = Prefix + "last-commit-timestamp-ms"
	// PropLatestVersion is the latest ratified Delta version: 0 at create,
	// then each add-commit's version (latest-table-version).
	PropLatestVersion = Prefix + "latest-table-version"
	// PropLatestUniform is the UniForm metadata location the latest
	// add-commit named, so a retry of it is recognized.
	PropLatestUniform = Prefix + "latest-uniform-metadata"
	// PropConvertedTimestamp is when the engine converted the Delta version
	// its UniForm metadata holds (converted-delta-timestamp).
	PropConvertedTimestamp = Prefix + "uniform-converted-timestamp-ms"
	// PropLatestCommitFile is the file name of the latest add-commit, so a
	// retry of a data commit is recognized.
	PropLatestCommitFile = Prefix + "latest-commit-file"
	// PropComment is the table comment, under Iceberg's (and Spark's) key.
	PropComment = "comment"
)

// derived are the keys the server computes for Delta clients; clients must
// not send them in set-properties / remove-properties (uc-delta-api.yaml).
var derived = map[string]bool{
	"delta.minReaderVersion": true, "delta.minWriterVersion": true,
	"delta.clusteringColumns": true, "delta.rowTracking.rowIdHighWaterMark": true,
	"delta.lastUpdateVersion": true, "delta.lastCommitTimestamp": true,
}

// checkWritableKey rejects keys a client may not set or remove.
func checkWritableKey(k string) error {
	switch {
	case k == "":
		return invalidParam("property keys must not be empty")
	case derived[k] || strings.HasPrefix(k, "delta.feature."):
		return invalidParam("property %q is derived by the server and cannot be written", k)
	case strings.HasPrefix(k, Prefix):
		return invalidParam("property %q is reserved for lakegate's own bookkeeping (prefix %q)", k, Prefix)
	case k == PropComment:
		return invalidParam("property %q holds the table comment; use set-table-comment", k)
	}
	return nil
}

// defaultProtocol is what a table created outside the Delta API reports:
// the oldest protocol, with no features.
var defaultProtocol = protocolOut{MinReaderVersion: 1, MinWriterVersion: 2}

func protocolOf(props map[string]string) protocolOut {
	p := defaultProtocol
	if raw, ok := props[PropProtocol]; ok {
		var stored protocolOut
		if json.Unmarshal([]byte(raw), &stored) == nil && stored.MinReaderVersion > 0 {
			p = stored
		}
	}
	return p
}

func encodeProtocol(p *Protocol) string {
	b, _ := json.Marshal(p.out())
	return string(b)
}

// deltaProperties is what a Delta client sees: the table's own properties
// without lakegate's bookkeeping, plus the server-derived delta.* keys.
func deltaProperties(props map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if !strings.HasPrefix(k, Prefix) && k != PropComment && k != table.DefaultNameMappingKey {
			out[k] = v
		}
	}
	p := protocolOf(props)
	out["delta.minReaderVersion"] = strconv.Itoa(p.MinReaderVersion)
	out["delta.minWriterVersion"] = strconv.Itoa(p.MinWriterVersion)
	for _, f := range append(append([]string{}, p.ReaderFeatures...), p.WriterFeatures...) {
		out["delta.feature."+f] = "supported"
	}
	if v, ok := props[PropLastCommitVersion]; ok {
		out["delta.lastUpdateVersion"] = v
	}
	if v, ok := props[PropLastCommitTimestamp]; ok {
		out["delta.lastCommitTimestamp"] = v
	}
	addDomainKeys(props, out)
	return out
}

// addDomainKeys derives delta.clusteringColumns and the row-id high-water
// mark from the domains that carry them.
func addDomainKeys(props, out map[string]string) {
	if raw, ok := props[PropDomainPrefix+"delta.clustering"]; ok {
		var c struct {
			ClusteringColumns [][]string `json:"clusteringColumns"`
		}
		if json.Unmarshal([]byte(raw), &c) == nil {
			b, _ := json.Marshal(c.ClusteringColumns)
			out["delta.clusteringColumns"] = string(b)
		}
	}
	if raw, ok := props[PropDomainPrefix+"delta.rowTracking"]; ok {
		var rt struct {
			RowIDHighWaterMark *int64 `json:"rowIdHighWaterMark"`
		}
		if json.Unmarshal([]byte(raw), &rt) == nil && rt.RowIDHighWaterMark != nil {
			out["delta.rowTracking.rowIdHighWaterMark"] = strconv.FormatInt(*rt.RowIDHighWaterMark, 10)
		}
	}
}

// domainProps turns DeltaDomainMetadataUpdates into properties; each
// domain's configuration must be a JSON object.
func domainProps(domains map[string]json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	names := sortedKeys(domains)
	for _, name := range names {
		raw := domains[name]
		var obj map[string]any
		if name == "" {
			return nil, invalidParam("domain names must not be empty")
		}
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return nil, invalidParam("domain %q: configuration must be a JSON object", name)
		}
		if err := checkKnownDomain(name, raw); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(obj)
		out[PropDomainPrefix+name] = string(b)
	}
	return out, nil
}

// checkKnownDomain checks the shape of the system domains the spec types
// (DeltaClusteringDomainMetadata, DeltaRowTrackingDomainMetadata). Other
// delta.* domains belong to Delta features lakegate cannot check, so they
// are refused; user domains are kept as given.
func checkKnownDomain(name string, raw json.RawMessage) error {
	switch {
	case name == "delta.clustering":
		var c struct {
			ClusteringColumns *[][]string `json:"clusteringColumns"`
		}
		if err := strictDecode(raw, &c); err != nil {
			return invalidParam("domain %q: %v", name, err)
		}
		if c.ClusteringColumns == nil {
			return invalidParam("domain %q: missing %q", name, "clusteringColumns")
		}
		for _, path := range *c.ClusteringColumns {
			if len(path) == 0 || slices.Contains(path, "") {
				return invalidParam("domain %q: clusteringColumns paths must be non-empty lists of non-empty names", name)
			}
		}
	case name == "delta.rowTracking":
		var rt struct {
			RowIDHighWaterMark *int64 `json:"rowIdHighWaterMark"`
		}
		if err := strictDecode(raw, &rt); err != nil {
			return invalidParam("domain %q: %v", name, err)
		}
		if rt.RowIDHighWaterMark == nil {
			return invalidParam("domain %q: missing %q", name, "rowIdHighWaterMark")
		}
		if *rt.RowIDHighWaterMark < -1 {
			return invalidParam("domain %q: rowIdHighWaterMark must be at least -1 (none assigned)", name)
		}
	case strings.HasPrefix(name, "delta."):
		return invalidParam("domain %q: unknown system domain (delta.* domains belong to Delta features; "+
			"lakegate knows delta.clustering and delta.rowTracking)", name)
	}
	return nil
}

// strictDecode decodes a domain configuration, refusing unknown keys,
// and case variants of the known ones (which encoding/json would take).
func strictDecode(raw json.RawMessage, v any) error {
	if err := strictjson.Check(raw, strictjson.ShapeOf(v)); err != nil {
		return fmt.Errorf("configuration does not match its schema: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("configuration does not match its schema: %v", err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// createProperties are the Iceberg properties of a table a Delta client
// creates: its properties plus lakegate's record of the Delta-only state.
func createProperties(req *CreateTableRequest, columns string) (map[string]string, error) {
	props := maps.Clone(req.Properties)
	if props == nil {
		props = map[string]string{}
	}
	props[PropTableType] = *req.TableType
	props[PropProtocol] = encodeProtocol(req.Protocol)
	if !req.registration {
		// The create is the table's Delta version 0.
		props[PropLastCommitVersion] = "0"
		props[PropLatestVersion] = "0"
	}
	props[PropLastCommitTimestamp] = strconv.FormatInt(*req.LastCommitTimestampMs, 10)
	if req.Comment != nil && *req.Comment != "" {
		props[PropComment] = *req.Comment
	}
	if columns != "" {
		props[PropColumns] = columns
	}
	dp, err := domainProps(req.DomainMetadata)
	if err != nil {
		return nil, err
	}
	maps.Copy(props, dp)
	return props, nil
}

func int64Prop(props map[string]string, key string) *int64 {
	v, ok := props[key]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// PropCommits holds a MANAGED table's unbackfilled commits (the add-commits
// ratified since the last set-latest-backfilled-version), newest first, as
// the load response's `commits`.
const PropCommits = Prefix + "commits"

// maxUnbackfilled bounds the unbackfilled commits a table may hold, as the
// spec asks the server to (ResourceExhaustedException at write time).
const maxUnbackfilled = 50

// unbackfilled reads PropCommits; a damaged record reads as none.
func unbackfilled(props map[string]string) []Commit {
	var out []Commit
	if raw := props[PropCommits]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &out)
	}
	return out
}

func encodeCommits(c []Commit) string {
	b, _ := json.Marshal(c)
	return string(b)
}
