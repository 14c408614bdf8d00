package translate

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/apache/iceberg-go/table"

	"github.com/lakegate/lakegate/upstream/icerest"
)

// Client speaks Iceberg REST to one catalog's pipeline, for what
// iceberg-go's client hides from translators: stage-create, register with
// overwrite, the credentials endpoint, the upstream's error body, and
// LoadTable's config and storage credentials. Calls are typed routes run
// in process (Pipelines.Serve): no URL is built or parsed.
type Client struct {
	Catalog   string
	pipelines Pipelines
}

// Call is one Iceberg REST operation a translator sends through a
// catalog's pipeline: the operation and the names it addresses (Route:
// Operation, Namespace, Table, View, PlanID; its prefix is the catalog's),
// the query parameters, headers and body.
type Call struct {
	Route  icerest.Route
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Response is one answer: the status, headers and the body as the
// pipeline wrote it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// StorageCredential is an Iceberg vended credential.
type StorageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// LoadResult is the spec's LoadTableResult, its metadata left unparsed.
type LoadResult struct {
	MetadataLocation string              `json:"metadata-location"`
	Metadata         json.RawMessage     `json:"metadata"`
	Config           map[string]string   `json:"config"`
	Credentials      []StorageCredential `json:"storage-credentials"`
}

// LoadedTable is the spec's LoadTableResult with its metadata parsed in
// the same decode.
type LoadedTable struct {
	MetadataLocation string              `json:"metadata-location"`
	Metadata         ParsedMetadata      `json:"metadata"`
	Config           map[string]string   `json:"config"`
	Credentials      []StorageCredential `json:"storage-credentials"`
}

// ParsedMetadata is a LoadTableResult's metadata as iceberg-go parses it
// from the slice of the answer encoding/json hands it: neither copied as
// raw JSON nor held, and parsed once per distinct metadata (see parsed).
// Err keeps a failure for the caller to report in its API's error model;
// Metadata is nil then, or when the answer had none. Metadata is shared:
// read it, never modify it.
type ParsedMetadata struct {
	Metadata table.Metadata
	Err      error
}

// UnmarshalJSON parses the metadata; it never fails the whole decode.
func (p *ParsedMetadata) UnmarshalJSON(b []byte) error {
	p.Metadata, p.Err = parsed.parse(b)
	return nil
}

// Do runs call through the catalog's pipeline.
func (c *Client) Do(ctx context.Context, call Call) (*Response, error) {
	return c.pipelines.Serve(ctx, c.Catalog, call)
}
