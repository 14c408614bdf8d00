package main

import (
	"bytes"
	"os"
	"testing"
)

// TestSchemaTableFresh: the committed schema_gen.json is what the
// committed spec generates. After editing either, run
// `go generate ./upstream/icerest`.
func TestSchemaTableFresh(t *testing.T) {
	doc, err := os.ReadFile("../../spec/iceberg-rest-catalog-open-api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../schema_gen.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("upstream/icerest/schema_gen.json is stale against spec/iceberg-rest-catalog-open-api.yaml: run `go generate ./upstream/icerest`")
	}
}
