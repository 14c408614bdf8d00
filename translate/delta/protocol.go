package delta

import (
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/lakegate/lakegate/translate/schema"
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
func (p *Protocol) out() protocolOut {
	return protocolOut{MinReaderVersion: *p.MinReaderVersion, MinWriterVersion: *p.MinWriterVersion,
		ReaderFeatures: p.ReaderFeatures, WriterFeatures: p.WriterFeatures}
}

// legacyWriter is the writer version that implies a feature before table
// features existed (0: only as a named feature, writer 7).
var legacyWriter = map[string]int{
	"appendOnly": 2, "invariants": 2, "checkConstraints": 3, "changeDataFeed": 4,
	"generatedColumns": 4, "columnMapping": 5, "identityColumns": 6,
}

// legacyReader is the reader version that implies a reader-writer feature
// before table features existed (0: only as a named feature, reader 3).
var legacyReader = map[string]int{"columnMapping": 2}

// supports reports whether protocol p lets a table use feature f: writers
// must know it, and so must readers when it is a reader-writer feature
// (a reader that ignores deletion vectors or timestamp_ntz misreads the
// table).
func (p protocolOut) supports(f string) bool {
	readerWriter, _ := featureKind(f)
	return p.writerSupports(f) && (!readerWriter || p.readerSupports(f))
}

func (p protocolOut) writerSupports(f string) bool {
	if p.MinWriterVersion == 7 {
		return listed(p.WriterFeatures, f)
	}
	lw := legacyWriter[f]
	return lw != 0 && p.MinWriterVersion >= lw
}

func (p protocolOut) readerSupports(f string) bool {
	if p.MinReaderVersion == 3 {
		return listed(p.ReaderFeatures, f)
	}
	lr := legacyReader[f]
	return lr != 0 && p.MinReaderVersion >= lr
}

// listed reports feature f in a features list (a "-preview" name counts).
func listed(features []string, f string) bool {
	return slices.ContainsFunc(features, func(g string) bool { return strings.TrimSuffix(g, "-preview") == f })
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

// checkState checks that the protocol supports what the table's properties,
// domains and columns use: a table cannot turn on a feature its protocol
// lacks.
func checkState(p protocolOut, props map[string]string, domains []string, cols schema.StructType) error {
	if err := checkColumnTypes(p, cols); err != nil {
		return err
	}
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

// typeFeatures are the column types a table may hold only with a table
// feature (variant, the other one, has no Iceberg type and is refused
// before this).
var typeFeatures = map[schema.PrimitiveType]string{schema.TimestampNtz: "timestampNtz"}

// checkColumnTypes refuses a column, at any depth, whose type needs a
// feature the protocol does not support; the error names the column.
func checkColumnTypes(p protocolOut, cols schema.StructType) error {
	return walkTypes(cols, "", func(path string, t schema.DataType) error {
		pt, _ := t.(schema.PrimitiveType)
		if f, ok := typeFeatures[pt]; ok && !p.supports(f) {
			return invalidParam("column %q is %s, which needs the %q table feature: reader version 3 and writer "+
				"version 7 with %q in reader-features and writer-features", path, pt, f, f)
		}
		return nil
	})
}

// walkTypes calls visit on every column's type and every type nested in
// it, named the way schema errors name them (a.b, a.element, a.key,
// a.value), stopping at the first error.
func walkTypes(st schema.StructType, parent string, visit func(path string, t schema.DataType) error) error {
	for _, f := range st.Fields {
		path := f.Name
		if parent != "" {
			path = parent + "." + f.Name
		}
		if err := walkType(f.Type, path, visit); err != nil {
			return err
		}
	}
	return nil
}

func walkType(t schema.DataType, path string, visit func(path string, t schema.DataType) error) error {
	if err := visit(path, t); err != nil {
		return err
	}
	switch t := t.(type) {
	case schema.StructType:
		return walkTypes(t, path, visit)
	case schema.ArrayType:
		return walkType(t.ElementType, path+".element", visit)
	case schema.MapType:
		if err := walkType(t.KeyType, path+".key", visit); err != nil {
			return err
		}
		return walkType(t.ValueType, path+".value", visit)
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
func checkUpgrade(from, to protocolOut) error {
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
// table will have: set-protocol only upgrades; properties, domains and
// columns the request sets need their features (all of the table's, its
// current columns included, when the protocol itself changes). State a
// table already had is not re-judged otherwise.
func checkUpdateState(props map[string]string, current *iceberg.Schema, by map[string]*Update) error {
	if u := by[ActRemoveDomainMetadata]; u != nil {
		// As Delta Kernel (DomainDoesNotExistException): removing a domain
		// the table lacks is a mistake, not a no-op.
		for _, d := range u.Domains {
			if _, ok := props[PropDomainPrefix+d]; !ok {
				return invalidParam("remove-domain-metadata: the table has no domain %q", d)
			}
		}
	}
	next := protocolOf(props)
	setProps, domains := map[string]string{}, []string{}
	var cols schema.StructType
	if u := by[ActSetColumns]; u != nil {
		cols = u.columns
	}
	if u := by[ActSetProtocol]; u != nil {
		if err := checkUpgrade(next, u.Protocol.out()); err != nil {
			return err
		}
		next = u.Protocol.out()
		maps.Copy(setProps, props)
		if by[ActSetColumns] == nil && current != nil {
			// A schema with no Delta view has no Delta columns to judge
			// (loading the table answers UnsupportedTableFormat).
			cols, _ = toDelta(current, props)
		}
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
	return checkState(next, setProps, slices.Compact(domains), cols)
}
