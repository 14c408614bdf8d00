package schema

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// PartitionColumns returns Delta's partitionColumns for an Iceberg spec.
// Delta partitions only by raw column values, so only identity transforms of
// top-level columns qualify; bucket/truncate/time transforms (and identity on
// nested fields) are not partition columns to a Delta reader, which simply
// sees those columns as data.
func PartitionColumns(spec iceberg.PartitionSpec, s *iceberg.Schema) []string {
	if s == nil {
		return []string{}
	}
	top := make(map[int]string, s.NumFields())
	for _, f := range s.Fields() {
		top[f.ID] = f.Name
	}
	cols := []string{}
	for _, pf := range spec.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok || len(pf.SourceIDs) != 1 {
			continue
		}
		if name, ok := top[pf.SourceIDs[0]]; ok {
			cols = append(cols, name)
		}
	}
	return cols
}

// IdentitySpec builds the Iceberg spec for a Delta create with partition
// columns cols (top-level names). Partition field ids start at Iceberg's
// 1000 as a new table's would.
func IdentitySpec(s *iceberg.Schema, cols []string) (iceberg.PartitionSpec, error) {
	opts := make([]iceberg.PartitionOption, 0, len(cols))
	for i, c := range cols {
		f, ok := topLevel(s, c)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("schema: partition column %q: no such top-level column", c)
		}
		id := iceberg.PartitionDataIDStart + i
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, f.Name, iceberg.IdentityTransform{}, s, &id))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("schema: partition columns %q: %w", cols, err)
	}
	return spec, nil
}

// topLevel finds a top-level column; FindFieldByName would also accept dotted
// nested paths, which Delta partition columns cannot be. The UC Delta API
// matches column references case-insensitively, so an exact match wins and
// otherwise the case-insensitive one is used.
func topLevel(s *iceberg.Schema, name string) (iceberg.NestedField, bool) {
	var folded []iceberg.NestedField
	for _, f := range s.Fields() {
		if f.Name == name {
			return f, true
		}
		if strings.EqualFold(f.Name, name) {
			folded = append(folded, f)
		}
	}
	if len(folded) == 1 {
		return folded[0], true
	}
	return iceberg.NestedField{}, false
}
