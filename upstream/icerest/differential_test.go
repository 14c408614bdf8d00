package icerest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The request types of a catalog written in Go, as encoding/json reads
// them: keys matched case-insensitively, the last of two equal keys kept.
// Only the fields lakegate checks or reads are here (the rest is the
// backend's to read, and lakegate vouches for nothing in it).
type (
	goIdentifier struct {
		Namespace []string `json:"namespace"`
		Name      string   `json:"name"`
	}
	goCreateNamespace struct {
		Namespace  []string          `json:"namespace"`
		Properties map[string]string `json:"properties"`
	}
	goUpdateProperties struct {
		Removals []string          `json:"removals"`
		Updates  map[string]string `json:"updates"`
	}
	goCreateTable struct {
		Name        string            `json:"name"`
		Location    *string           `json:"location"`
		StageCreate bool              `json:"stage-create"`
		Properties  map[string]string `json:"properties"`
	}
	goRegister struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
		Overwrite        bool   `json:"overwrite"`
	}
	goRename struct {
		Source      goIdentifier `json:"source"`
		Destination goIdentifier `json:"destination"`
	}
	goRequirement struct {
		Type       string  `json:"type"`
		Ref        *string `json:"ref"`
		UUID       *string `json:"uuid"`
		SnapshotID *int64  `json:"snapshot-id"`
		SchemaID   *int32  `json:"current-schema-id"`
		SpecID     *int32  `json:"default-spec-id"`
	}
	goFile struct {
		SnapshotID     *int64  `json:"snapshot-id"`
		ManifestList   *string `json:"manifest-list"`
		StatisticsPath *string `json:"statistics-path"`
	}
	goUpdate struct {
		Action              string            `json:"action"`
		Location            *string           `json:"location"`
		Updates             map[string]string `json:"updates"` // set-properties
		Removals            []string          `json:"removals"`
		FormatVersion       *int32            `json:"format-version"`
		SchemaID            *int32            `json:"schema-id"`
		RefName             *string           `json:"ref-name"`
		Type                *string           `json:"type"`
		SnapshotID          *int64            `json:"snapshot-id"`
		SnapshotIDs         []int64           `json:"snapshot-ids"`
		Snapshot            *goFile           `json:"snapshot"`
		Statistics          *goFile           `json:"statistics"`
		PartitionStatistics *goFile           `json:"partition-statistics"`
	}
	goCommit struct {
		Identifier   *goIdentifier   `json:"identifier"`
		Requirements []goRequirement `json:"requirements"`
		Updates      []goUpdate      `json:"updates"`
	}
	goTransaction struct {
		TableChanges []goCommit `json:"table-changes"`
	}
)

// goRequests are what a Go catalog decodes each operation's body into.
var goRequests = map[string]func() any{
	OpCreateNamespace:   func() any { return new(goCreateNamespace) },
	OpUpdateProperties:  func() any { return new(goUpdateProperties) },
	OpCreateTable:       func() any { return new(goCreateTable) },
	OpRegisterTable:     func() any { return new(goRegister) },
	OpRenameTable:       func() any { return new(goRename) },
	OpUpdateTable:       func() any { return new(goCommit) },
	OpCommitTransaction: func() any { return new(goTransaction) },
}

// FuzzGoCatalogAgrees is the differential test of issue 36: whatever
// ValidateBody accepts, a Go catalog decoding the same bytes with
// encoding/json reads the same values lakegate checked — namespace,
// names, identifiers, locations and path properties, the metadata file,
// requirement and update types and fields — and BodyLocations finds every
// location the catalog would act on. Seeds: testdata/fuzz/FuzzGoCatalogAgrees.
func FuzzGoCatalogAgrees(f *testing.F) {
	f.Add(OpCreateNamespace, []byte(`{"namespace":["cv1"],"properties":{"a":"b","location":"file:///in/ns"}}`))
	f.Add(OpCreateTable, []byte(`{"name":"t","schema":`+okSchema+`,"location":"file:///in/t","properties":{"write.data.path":"file:///in/d"}}`))
	f.Add(OpRegisterTable, []byte(`{"name":"t","metadata-location":"file:///in/m.json"}`))
	f.Add(OpRenameTable, []byte(`{"source":`+okIdent+`,"destination":{"namespace":["b"],"name":"u"}}`))
	f.Add(OpUpdateTable, []byte(appendCommit))
	f.Add(OpUpdateTable, []byte(commitOf(everyTableUpdate...)))
	f.Fuzz(func(t *testing.T, op string, body []byte) {
		newReq := goRequests[op]
		if newReq == nil {
			return
		}
		touched, err := ValidateBody(op, body)
		if err != nil {
			return
		}
		locs, err := BodyLocations(op, body)
		if err != nil {
			t.Fatalf("ValidateBody accepted what BodyLocations cannot read: %v", err)
		}
		lg, err := parseBody(op, body)
		if err != nil {
			t.Fatalf("ValidateBody accepted what parseBody refuses: %v", err)
		}
		goReq := newReq()
		if json.Unmarshal(body, goReq) != nil {
			return // the catalog refuses it too: nothing acted on
		}
		if err := agree(reflect.ValueOf(goReq).Elem(), map[string]any(lg), ""); err != nil {
			t.Fatalf("a Go catalog reads %s", err)
		}
		if want := goLocations(goReq); !slices.Equal(locs, want) {
			t.Fatalf("BodyLocations %q, a Go catalog acts on %q", locs, want)
		}
		if err := agreeTouched(touched, goReq); err != nil {
			t.Fatal(err)
		}
	})
}

// agree compares a Go catalog's decoded value with lakegate's exact-key
// reading of the same field (absent and null are the zero value).
func agree(g reflect.Value, lg any, path string) error {
	if g.Kind() == reflect.Pointer {
		if g.IsNil() {
			if lg != nil {
				return fmt.Errorf("%s as absent, lakegate read %v", path, lg)
			}
			return nil
		}
		return agree(g.Elem(), lg, path)
	}
	switch g.Kind() {
	case reflect.Struct:
		m, _ := lg.(map[string]any)
		for i := 0; i < g.NumField(); i++ {
			name, _, _ := strings.Cut(g.Type().Field(i).Tag.Get("json"), ",")
			if err := agree(g.Field(i), m[name], path+"."+name); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Map:
		if g.Len() == 0 && lg == nil {
			return nil
		}
	}
	if lg == nil {
		if !g.IsZero() {
			return fmt.Errorf("%s as %v, lakegate read nothing", path, g.Interface())
		}
		return nil
	}
	switch g.Kind() {
	case reflect.Slice:
		a, _ := lg.([]any)
		if len(a) != g.Len() {
			return fmt.Errorf("%s with %d items, lakegate read %v", path, g.Len(), lg)
		}
		for i := range a {
			if err := agree(g.Index(i), a[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		m, _ := lg.(map[string]any)
		if len(m) != g.Len() {
			return fmt.Errorf("%s with %d keys, lakegate read %v", path, g.Len(), lg)
		}
		for k, v := range m {
			if err := agree(g.MapIndex(reflect.ValueOf(k)), v, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case reflect.Int32, reflect.Int64:
		n, _ := lg.(json.Number)
		if i, err := strconv.ParseInt(string(n), 10, 64); err != nil || i != g.Int() {
			return fmt.Errorf("%s as %d, lakegate read %v", path, g.Int(), lg)
		}
		return nil
	}
	if !g.IsValid() || !reflect.DeepEqual(g.Interface(), lg) {
		return fmt.Errorf("%s as %v, lakegate read %v", path, g, lg)
	}
	return nil
}

// goLocations are the locations a Go catalog acts on, in BodyLocations'
// order.
func goLocations(req any) []string {
	var out []string
	add := func(s *string) {
		if s != nil {
			out = append(out, *s)
		}
	}
	props := func(m map[string]string, keys []string) {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				out = append(out, v)
			}
		}
	}
	commit := func(c goCommit) {
		for _, u := range c.Updates {
			switch u.Action {
			case "set-location":
				add(u.Location)
			case "set-properties":
				props(u.Updates, PathProperties)
			case "add-snapshot":
				if u.Snapshot != nil {
					add(u.Snapshot.ManifestList)
				}
			case "set-statistics":
				if u.Statistics != nil {
					add(u.Statistics.StatisticsPath)
				}
			case "set-partition-statistics":
				if u.PartitionStatistics != nil {
					add(u.PartitionStatistics.StatisticsPath)
				}
			}
		}
	}
	switch r := req.(type) {
	case *goCreateNamespace:
		props(r.Properties, []string{NamespaceLocation})
	case *goUpdateProperties:
		props(r.Updates, []string{NamespaceLocation})
	case *goCreateTable:
		add(r.Location)
		props(r.Properties, PathProperties)
	case *goRegister:
		out = append(out, r.MetadataLocation)
	case *goCommit:
		commit(*r)
	case *goTransaction:
		for _, c := range r.TableChanges {
			commit(c)
		}
	}
	return out
}

// agreeTouched: what the policy decided on is what the catalog acts on.
func agreeTouched(t Touched, req any) error {
	var want Touched
	switch r := req.(type) {
	case *goCreateNamespace:
		want.Namespace = r.Namespace
	case *goCreateTable:
		want.Name = r.Name
	case *goRegister:
		want.Name = r.Name
	case *goRename:
		want.Identifiers = []Identifier{{r.Source.Namespace, r.Source.Name}, {r.Destination.Namespace, r.Destination.Name}}
	case *goTransaction:
		for _, c := range r.TableChanges {
			want.Identifiers = append(want.Identifiers, Identifier{c.Identifier.Namespace, c.Identifier.Name})
		}
	default:
		return nil
	}
	if !reflect.DeepEqual(t, want) {
		return fmt.Errorf("the policy was asked about %+v, a Go catalog acts on %+v", t, want)
	}
	return nil
}

// TestGoCatalogSeedsAreCompared: the valid seeds of FuzzGoCatalogAgrees
// pass both readers, so the comparison runs on them rather than stopping
// at a refusal.
func TestGoCatalogSeedsAreCompared(t *testing.T) {
	for _, tc := range []struct{ op, body string }{
		{OpCreateNamespace, `{"namespace":["cv1"],"properties":{"a":"b","location":"file:///in/ns"}}`},
		{OpRegisterTable, `{"name":"t","metadata-location":"file:///in/m.json"}`},
		{OpUpdateTable, appendCommit},
		{OpUpdateTable, commitOf(everyTableUpdate...)},
		{OpCommitTransaction, `{"table-changes":[{"identifier":` + okIdent + `,"requirements":[],"updates":[]}]}`},
	} {
		if _, err := ValidateBody(tc.op, []byte(tc.body)); err != nil {
			t.Errorf("%s: lakegate refuses: %v", tc.op, err)
		}
		if err := json.Unmarshal([]byte(tc.body), goRequests[tc.op]()); err != nil {
			t.Errorf("%s: a Go catalog refuses: %v", tc.op, err)
		}
	}
}
