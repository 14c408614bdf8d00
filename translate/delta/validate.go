package delta

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"

	"github.com/google/uuid"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/translate/schema"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// decode parses a JSON object body; what is not an object is a 400, and
// so is text encoding/json would quietly repair (invalid UTF-8 and lone
// surrogate escapes, both become U+FFFD; NUL) and a body other decoders
// would read otherwise: a repeated key, or a case variant of a field,
// which encoding/json takes for the field (strictjson). Every name,
// location, property and comment of a Delta body comes through here.
func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("request body is required")
	}
	if err := strictjson.Unmarshal(body, v); err != nil {
		return badRequest("malformed request body: %v", err)
	}
	return nil
}

// ParseCreate validates a DeltaCreateTableRequest.
func ParseCreate(body []byte) (*CreateTableRequest, error) {
	return parseCreate(body, false)
}

// ParseRegistration validates the create that registers an EXTERNAL table
// whose Delta log the engine has already written (Unity Catalog's own
// createTable): its columns may be empty, since the log holds the schema,
// and the server is told no version, so a load answers none.
func ParseRegistration(body []byte) (*CreateTableRequest, error) {
	req, err := parseCreate(body, true)
	if err == nil && *req.TableType != External {
		return nil, invalidParam("only EXTERNAL tables are registered; table-type is %s", *req.TableType)
	}
	return req, err
}

func parseCreate(body []byte, registration bool) (*CreateTableRequest, error) {
	req := CreateTableRequest{registration: registration}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	return &req, nil
}

func (req *CreateTableRequest) validate() error {
	switch {
	case req.Name == nil || *req.Name == "":
		return invalidParam("name is required")
	case req.Location == nil || *req.Location == "":
		return invalidParam("location is required")
	case req.TableType == nil:
		return invalidParam("table-type is required")
	case *req.TableType != Managed && *req.TableType != External:
		return invalidParam("table-type must be MANAGED or EXTERNAL, got %q", *req.TableType)
	case req.Columns == nil:
		return invalidParam("columns is required")
	case req.Protocol == nil:
		return invalidParam("protocol is required")
	case req.Properties == nil:
		return invalidParam("properties is required (it may be empty)")
	case req.LastCommitTimestampMs == nil:
		return invalidParam("last-commit-timestamp-ms is required")
	}
	if err := checkName(*req.Name); err != nil {
		return err
	}
	if err := CheckLocationSyntax(*req.Location); err != nil {
		return err
	}
	if err := req.Protocol.validate(); err != nil {
		return err
	}
	if err := dropDeclaredFeatures(req); err != nil {
		return err
	}
	for k := range req.Properties {
		if err := checkWritableKey(k); err != nil {
			return err
		}
	}
	cols, err := parseColumns(req.Columns, !req.registration)
	if err != nil {
		return err
	}
	req.columns = cols
	if err := checkPartitionColumns(req.PartitionColumns, cols); err != nil {
		return err
	}
	if req.Uniform != nil && (req.Uniform.Iceberg == nil || req.Uniform.Iceberg.MetadataLocation == "") {
		return invalidParam("uniform.iceberg.metadata-location is required when uniform is given")
	}
	if _, err := domainProps(req.DomainMetadata); err != nil {
		return err
	}
	return checkState(req.Protocol.out(), req.Properties, sortedKeys(req.DomainMetadata), req.columns)
}

// checkName rejects names that cannot be an Iceberg table name on a path,
// and dots: Unity Catalog names are single-level (catalog.schema.table is
// how clients write the full name), as rename already requires.
func checkName(name string) error {
	if icerest.NameProblem(name) != "" || strings.Contains(name, "/") || strings.TrimSpace(name) == "" {
		return invalidParam("invalid table name %q", name)
	}
	if strings.Contains(name, ".") {
		return invalidParam("table name %q contains a dot: Unity Catalog table names are one level (catalog.schema.table is the full name)", name)
	}
	return nil
}

// parseColumns parses UC columns; a type Iceberg cannot hold is a 400 too,
// caught here so nothing is half-created.
func parseColumns(raw json.RawMessage, nonEmpty bool) (schema.StructType, error) {
	cols, err := schema.ParseClientColumns(raw)
	if err != nil {
		return cols, invalidParam("columns: %v", err)
	}
	if nonEmpty && len(cols.Fields) == 0 {
		// A Delta table has at least one column (Spark refuses an empty
		// schema, and so does UC's Delta API).
		return cols, invalidParam("columns: no column: a table needs at least one")
	}
	if _, err := schema.FromDelta(cols); err != nil {
		return cols, invalidParam("columns: %v", err)
	}
	return cols, nil
}

// checkPartitionColumns requires distinct top-level columns (matched
// case-insensitively, as UC does).
func checkPartitionColumns(pcs []string, cols schema.StructType) error {
	seen := map[string]bool{}
	for _, pc := range pcs {
		l := strings.ToLower(pc)
		if seen[l] {
			return invalidParam("partition column %q is listed twice", pc)
		}
		seen[l] = true
		found := false
		for _, f := range cols.Fields {
			found = found || strings.EqualFold(f.Name, pc)
		}
		if !found {
			return invalidParam("partition column %q is not a top-level column", pc)
		}
	}
	return nil
}

// parseStaging validates a DeltaCreateStagingTableRequest.
func parseStaging(body []byte) (*StagingTableRequest, error) {
	var req StagingTableRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if req.Name == nil || *req.Name == "" {
		return nil, invalidParam("name is required")
	}
	return &req, checkName(*req.Name)
}

// parseRename validates a DeltaRenameTableRequest.
func parseRename(body []byte) (*RenameRequest, error) {
	var req RenameRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if req.NewName == nil || *req.NewName == "" {
		return nil, invalidParam("new-name is required")
	}
	if strings.Contains(*req.NewName, ".") {
		return nil, invalidParam("new-name %q: renames stay in the same schema; cross-schema moves are not supported", *req.NewName)
	}
	return &req, checkName(*req.NewName)
}

// parseMetrics validates a DeltaReportMetricsRequest.
func parseMetrics(body []byte) (*MetricsRequest, error) {
	var req MetricsRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if req.TableID == nil || *req.TableID == "" {
		return nil, invalidParam("table-id is required")
	}
	if _, err := uuid.Parse(*req.TableID); err != nil {
		return nil, invalidParam("table-id %q is not a UUID", *req.TableID)
	}
	return &req, nil
}

// Update actions and requirement types.
const (
	ActSetProperties        = "set-properties"
	ActRemoveProperties     = "remove-properties"
	ActSetColumns           = "set-columns"
	ActSetTableComment      = "set-table-comment"
	ActAddCommit            = "add-commit"
	ActSetBackfilled        = "set-latest-backfilled-version"
	ActSetProtocol          = "set-protocol"
	ActSetDomainMetadata    = "set-domain-metadata"
	ActRemoveDomainMetadata = "remove-domain-metadata"
	ActSetPartitionColumns  = "set-partition-columns"
	ActUpdateSnapshotVer    = "update-metadata-snapshot-version"

	ReqAssertTableUUID = "assert-table-uuid"
	ReqAssertEtag      = "assert-etag"
)

// parseUpdate validates a DeltaUpdateTableRequest against the spec's shape
// rules: non-empty requirements and updates, at most one of each type, an
// assert-table-uuid always, disjoint set/remove keys and domains.
func parseUpdate(body []byte) (*UpdateTableRequest, error) {
	var req UpdateTableRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if err := checkRequirements(req.Requirements); err != nil {
		return nil, err
	}
	if len(req.Updates) == 0 {
		return nil, badRequest("updates must not be empty")
	}
	seen := map[string]bool{}
	for i := range req.Updates {
		u := &req.Updates[i]
		if seen[u.Action] {
			return nil, badRequest("update %q appears more than once; send at most one of each", u.Action)
		}
		seen[u.Action] = true
		if err := u.validate(); err != nil {
			return nil, err
		}
	}
	return &req, checkDisjoint(&req)
}

func checkRequirements(reqs []Requirement) error {
	if len(reqs) == 0 {
		return badRequest("requirements must not be empty: an assert-table-uuid is always required")
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		if seen[r.Type] {
			return badRequest("requirement %q appears more than once", r.Type)
		}
		seen[r.Type] = true
		switch r.Type {
		case ReqAssertTableUUID:
			if r.UUID == nil {
				return invalidParam("assert-table-uuid needs uuid")
			}
			if _, err := uuid.Parse(*r.UUID); err != nil {
				return invalidParam("assert-table-uuid: %q is not a UUID", *r.UUID)
			}
		case ReqAssertEtag:
			if r.Etag == nil || *r.Etag == "" {
				return invalidParam("assert-etag needs etag")
			}
		case "":
			return badRequest("a requirement is missing its type")
		default:
			return badRequest("unknown requirement type %q", r.Type)
		}
	}
	if !seen[ReqAssertTableUUID] {
		return badRequest("an assert-table-uuid requirement is required")
	}
	return nil
}

func (u *Update) validate() error {
	switch u.Action {
	case ActSetProperties:
		return u.validateSetProperties()
	case ActRemoveProperties:
		return u.validateRemoveProperties()
	case ActSetColumns:
		if u.Columns == nil {
			return invalidParam("set-columns needs columns")
		}
		cols, err := parseColumns(u.Columns, true)
		u.columns = cols
		return err
	case ActSetTableComment:
		if u.Comment == nil {
			return invalidParam("set-table-comment needs comment")
		}
	case ActAddCommit:
		return u.validateAddCommit()
	case ActSetBackfilled:
		if u.LatestPublishedVersion == nil {
			return invalidParam("set-latest-backfilled-version needs latest-published-version")
		}
	case ActSetProtocol:
		if u.Protocol == nil {
			return invalidParam("set-protocol needs protocol")
		}
		return u.Protocol.validate()
	case ActSetDomainMetadata:
		return u.validateSetDomains()
	case ActRemoveDomainMetadata:
		if u.Domains == nil {
			return invalidParam("remove-domain-metadata needs domains")
		}
	case ActSetPartitionColumns:
		if u.PartitionColumns == nil {
			return invalidParam("set-partition-columns needs partition-columns")
		}
	case ActUpdateSnapshotVer:
		if u.LastCommitVersion == nil || u.LastCommitTimestampMs == nil {
			return invalidParam("update-metadata-snapshot-version needs last-commit-version and last-commit-timestamp-ms")
		}
	case "":
		return badRequest("an update is missing its action")
	default:
		return badRequest("unknown update action %q", u.Action)
	}
	return nil
}

func (u *Update) validateSetProperties() error {
	if u.Updates == nil {
		return invalidParam("set-properties needs updates")
	}
	if err := json.Unmarshal(u.Updates, &u.properties); err != nil || u.properties == nil {
		return invalidParam("set-properties: updates must be an object of strings")
	}
	for k := range u.properties {
		if err := checkWritableKey(k); err != nil {
			return err
		}
	}
	return nil
}

func (u *Update) validateRemoveProperties() error {
	if u.Removals == nil {
		return invalidParam("remove-properties needs removals")
	}
	for _, k := range u.Removals {
		if err := checkWritableKey(k); err != nil {
			return err
		}
	}
	return nil
}

func (u *Update) validateAddCommit() error {
	c := u.Commit
	if c == nil {
		return invalidParam("add-commit needs commit")
	}
	if c.Version == nil || c.Timestamp == nil || c.FileName == nil || c.FileSize == nil || c.FileModificationTimestamp == nil {
		return invalidParam("add-commit: commit needs version, timestamp, file-name, file-size and file-modification-timestamp")
	}
	return nil
}

func (u *Update) validateSetDomains() error {
	if u.Updates == nil {
		return invalidParam("set-domain-metadata needs updates")
	}
	if err := json.Unmarshal(u.Updates, &u.domains); err != nil || len(u.domains) == 0 {
		return invalidParam("set-domain-metadata: updates must be an object with at least one domain")
	}
	_, err := domainProps(u.domains)
	return err
}

// checkDisjoint rejects a request that sets and removes the same property
// or domain: the outcome would depend on the order applied.
func checkDisjoint(req *UpdateTableRequest) error {
	setKeys, setDomains := map[string]bool{}, map[string]bool{}
	for _, u := range req.Updates {
		for k := range maps.Keys(u.properties) {
			setKeys[k] = true
		}
		for d := range maps.Keys(u.domains) {
			setDomains[d] = true
		}
	}
	for _, u := range req.Updates {
		for _, k := range u.Removals {
			if setKeys[k] {
				return badRequest("property %q is both set and removed", k)
			}
		}
		for _, d := range u.Domains {
			if setDomains[d] {
				return badRequest("domain %q is both set and removed", d)
			}
		}
	}
	return nil
}

// dropDeclaredFeatures accepts delta.feature.<f>=supported in a create's
// properties when the protocol lists f: that is how Delta writers spell an
// enabled feature (Unity Catalog's clients send it), and the key is derived
// from the protocol, so it is not stored. One naming a feature the protocol
// lacks is refused as any derived key is.
func dropDeclaredFeatures(req *CreateTableRequest) error {
	p := req.Protocol.out()
	for k, v := range req.Properties {
		f, ok := strings.CutPrefix(k, "delta.feature.")
		if !ok {
			continue
		}
		if (v != "supported" && v != "enabled") || !p.supports(f) {
			return invalidParam("property %q=%q: the protocol does not list feature %q (features are declared in protocol)", k, v, f)
		}
		delete(req.Properties, k)
	}
	return nil
}
