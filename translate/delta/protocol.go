package delta

import (
	"maps"
	"slices"
	"strings"
)

// tableFeatures are the Delta protocol's "Valid Feature Names in Table
// Features" (and the features its later sections define): true for
// reader-writer features, false for writer-only ones. A client's "-preview"
// name of a known feature (Delta Spark's variantType-preview, ...) is the
// same feature.
var tableFeatures = map[string]bool{
	"appendOnly": false, "invariants": false, "checkConstraints": false, "generatedColumns": false,
	"allowColumnDefaults": false, "changeDataFeed": false, "columnMapping": true, "identityColumns": false,
	"deletionVectors": true, "rowTracking": false, "timestampNtz": true, "domainMetadata": false,
	"v2Checkpoint": true, "catalogManaged": true, "icebergCompatV1": false, "icebergCompatV2": false,
	"clustering": false, "vacuumProtocolCheck": true, "inCommitTimestamp": false,
	"typeWidening": true, "variantType": true, "variantShredding": true,
}

func featureKind(name string) (readerWriter, known bool) {
	readerWriter, known = tableFeatures[strings.TrimSuffix(name, "-preview")]
	return readerWriter, known
}

// validate checks a protocol the way the Delta protocol defines it: reader
// 1-3 and writer 1-7; features listed exactly when the version lists them
// (reader 3, writer 7), reader 3 only with writer 7; known feature names;
// reader-writer features in both lists, writer-only ones only in
// writer-features.
func (p *Protocol) validate() error {
	switch {
	case p.MinReaderVersion == nil:
		return invalidParam("protocol.min-reader-version is required")
	case p.MinWriterVersion == nil:
		return invalidParam("protocol.min-writer-version is required")
	}
	r, w := *p.MinReaderVersion, *p.MinWriterVersion
	switch {
	case r < 1 || r > 3:
		return invalidParam("protocol.min-reader-version must be 1, 2 or 3, got %d", r)
	case w < 1 || w > 7:
		return invalidParam("protocol.min-writer-version must be between 1 and 7, got %d", w)
	case r == 3 && w != 7:
		return invalidParam("protocol: reader version 3 needs writer version 7, got %d", w)
	case r == 3 && p.ReaderFeatures == nil:
		return invalidParam("protocol: reader version 3 must list reader-features")
	case r < 3 && p.ReaderFeatures != nil:
		return invalidParam("protocol: reader-features are only listed with reader version 3, got %d", r)
	case w == 7 && p.WriterFeatures == nil:
		return invalidParam("protocol: writer version 7 must list writer-features")
	case w < 7 && p.WriterFeatures != nil:
		return invalidParam("protocol: writer-features are only listed with writer version 7, got %d", w)
	}
	return p.validateFeatures()
}

func (p *Protocol) validateFeatures() error {
	for _, f := range p.WriterFeatures {
		rw, known := featureKind(f)
		if !known {
			return invalidParam("protocol: unknown table feature %q", f)
		}
		if rw && *p.MinReaderVersion == 3 && !slices.Contains(p.ReaderFeatures, f) {
			return invalidParam("protocol: %q is a reader-writer feature and must be in reader-features too", f)
		}
	}
	for _, f := range p.ReaderFeatures {
		rw, known := featureKind(f)
		switch {
		case !known:
			return invalidParam("protocol: unknown table feature %q", f)
		case !rw:
			return invalidParam("protocol: %q is a writer-only feature and cannot be in reader-features", f)
		case !slices.Contains(p.WriterFeatures, f):
			return invalidParam("protocol: reader feature %q must be in writer-features too", f)
		}
	}
	return nil
}

// out is the validated protocol as stored and answered.
func (p *Protocol) out() ProtocolOut {
	return ProtocolOut{MinReaderVersion: *p.MinReaderVersion, MinWriterVersion: *p.MinWriterVersion,
		ReaderFeatures: p.ReaderFeatures, WriterFeatures: p.WriterFeatures}
}

// legacyWriter is the writer version that implies a feature before table
// features existed (0: only as a named feature, writer 7).
var legacyWriter = map[string]int{
	"appendOnly": 2, "invariants": 2, "checkConstraints": 3, "changeDataFeed": 4,
	"generatedColumns": 4, "columnMapping": 5, "identityColumns": 6,
}

// supports reports whether protocol p lets a table use feature f.
func (p ProtocolOut) supports(f string) bool {
	if p.MinWriterVersion == 7 {
		return slices.ContainsFunc(p.WriterFeatures, func(g string) bool { return strings.TrimSuffix(g, "-preview") == f })
	}
	lw := legacyWriter[f]
	if lw == 0 || p.MinWriterVersion < lw {
		return false
	}
	return f != "columnMapping" || p.MinReaderVersion >= 2
}

// featureProperties are table properties that turn a feature on; the
// protocol must support it.
var featureProperties = []struct{ key, feature string }{
	{"delta.enableChangeDataFeed", "changeDataFeed"},
	{"delta.enableDeletionVectors", "deletionVectors"},
	{"delta.enableRowTracking", "rowTracking"},
	{"delta.enableTypeWidening", "typeWidening"},
	{"delta.enableInCommitTimestamps", "inCommitTimestamp"},
	{"delta.appendOnly", "appendOnly"},
}

// checkState checks that the protocol supports what the table's properties
// and domains use: a table cannot turn on a feature its protocol lacks.
func checkState(p ProtocolOut, props map[string]string, domains []string) error {
	for _, fp := range featureProperties {
		if strings.EqualFold(props[fp.key], "true") && !p.supports(fp.feature) {
			return invalidParam("property %s=true needs the %q table feature in the protocol", fp.key, fp.feature)
		}
	}
	if mode := props["delta.columnMapping.mode"]; (mode == "name" || mode == "id") && !p.supports("columnMapping") {
		return invalidParam("property delta.columnMapping.mode=%s needs the \"columnMapping\" table feature (or reader 2 / writer 5)", mode)
	}
	if len(domains) > 0 && !p.supports("domainMetadata") {
		return invalidParam("domain metadata needs writer version 7 with the \"domainMetadata\" writer feature")
	}
	for _, d := range domains {
		if f := systemDomains[d]; f != "" && !p.supports(f) {
			return invalidParam("domain %q needs the %q writer feature", d, f)
		}
	}
	return nil
}

// systemDomains are the delta.* domains lakegate knows, with the feature
// each belongs to; other delta.* domains are system domains it cannot
// check and refuses.
var systemDomains = map[string]string{"delta.clustering": "clustering", "delta.rowTracking": "rowTracking"}

// checkUpgrade refuses a set-protocol that lowers a version or drops a
// feature: the Delta protocol lets clients add features, never silently
// remove them.
func checkUpgrade(from, to ProtocolOut) error {
	if to.MinReaderVersion < from.MinReaderVersion || to.MinWriterVersion < from.MinWriterVersion {
		return invalidParam("set-protocol: protocol versions cannot go down (reader %d, writer %d now)",
			from.MinReaderVersion, from.MinWriterVersion)
	}
	for _, f := range append(slices.Clone(from.ReaderFeatures), from.WriterFeatures...) {
		if !slices.Contains(to.ReaderFeatures, f) && !slices.Contains(to.WriterFeatures, f) {
			return invalidParam("set-protocol: table feature %q cannot be removed", f)
		}
	}
	if from.MinWriterVersion < 7 && to.MinWriterVersion == 7 {
		for _, f := range sortedKeys(legacyWriter) {
			if from.supports(f) && !to.supports(f) {
				return invalidParam("set-protocol: writer version %d supports %q; writer 7 must list it", from.MinWriterVersion, f)
			}
		}
	}
	return nil
}

// checkUpdateState checks what an update turns on against the protocol the
// table will have: set-protocol only upgrades; properties and domains the
// request sets need their features (all of the table's, when the protocol
// itself changes). State a table already had is not re-judged otherwise.
func checkUpdateState(props map[string]string, by map[string]*Update) error {
	next := protocolOf(props)
	setProps, domains := map[string]string{}, []string{}
	if u := by[ActSetProtocol]; u != nil {
		if err := checkUpgrade(next, u.Protocol.out()); err != nil {
			return err
		}
		next = u.Protocol.out()
		maps.Copy(setProps, props)
		for k := range props {
			if d, ok := strings.CutPrefix(k, PropDomainPrefix); ok {
				domains = append(domains, d)
			}
		}
	}
	if u := by[ActSetProperties]; u != nil {
		maps.Copy(setProps, u.properties)
	}
	if u := by[ActRemoveProperties]; u != nil {
		for _, k := range u.Removals {
			delete(setProps, k)
		}
	}
	if u := by[ActSetDomainMetadata]; u != nil {
		domains = append(domains, sortedKeys(u.domains)...)
	}
	if u := by[ActRemoveDomainMetadata]; u != nil {
		domains = slices.DeleteFunc(domains, func(d string) bool { return slices.Contains(u.Domains, d) })
	}
	slices.Sort(domains)
	return checkState(next, setProps, slices.Compact(domains))
}
