package unity

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/translate/delta"
)

// UC's temporary credentials (generateTemporaryTableCredentials,
// generateTemporaryPathCredentials): delta-rs, Daft and DuckDB ask for
// them before every read of a uc:// table, even one on a local file
// system. lakegate vends what the catalog vends through the Delta API's
// code (translate/delta vend.go) and answers it in UC's model.

// Table and path operations, as UC's TableOperation and PathOperation
// enums spell them.
const (
	TableRead       = "READ"
	TableReadWrite  = "READ_WRITE"
	PathRead        = "PATH_READ"
	PathReadWrite   = "PATH_READ_WRITE"
	PathCreateTable = "PATH_CREATE_TABLE"
	unknownTableOp  = "UNKNOWN_TABLE_OPERATION"
	unknownPathOp   = "UNKNOWN_PATH_OPERATION"
	fileScheme      = "file:"
)

// TableCredentialsRequest is GenerateTemporaryTableCredential.
type TableCredentialsRequest struct {
	TableID   *string `json:"table_id"`
	Operation *string `json:"operation"`
}

// ParseTableCredentials reads generateTemporaryTableCredentials' body:
// table_id is a table's uuid (TableInfo.table_id), spelled as lakegate
// shows it (lower case) whatever case the client sent; operation READ or
// READ_WRITE (UC's UNKNOWN_TABLE_OPERATION vends nothing there either).
func ParseTableCredentials(body []byte) (id, op string, err error) {
	var req TableCredentialsRequest
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return "", "", Errorf(http.StatusBadRequest, InvalidArgument, "malformed GenerateTemporaryTableCredential: %v", err)
	}
	if req.TableID == nil || *req.TableID == "" {
		return "", "", Errorf(http.StatusBadRequest, InvalidArgument, "table_id is required")
	}
	u, err := uuid.Parse(*req.TableID)
	if err != nil {
		return "", "", Errorf(http.StatusBadRequest, InvalidArgument, "table_id %q is not a table id (a UUID)", *req.TableID)
	}
	op, err = operation(req.Operation, unknownTableOp, TableRead, TableReadWrite)
	return u.String(), op, err
}

// PathCredentialsRequest is GenerateTemporaryPathCredential; dry_run is
// Databricks' field, which its clients send: checked, nothing vended.
type PathCredentialsRequest struct {
	URL       *string `json:"url"`
	Operation *string `json:"operation"`
	DryRun    *bool   `json:"dry_run"`

	// Location is the url as a storage location: file:/p spelled
	// file:///p, as UC normalizes it, without a trailing slash.
	Location string `json:"-"`
}

// ParsePathCredentials reads generateTemporaryPathCredentials' body. The
// url must be an absolute storage location (delta.CheckLocationSyntax,
// the Delta API's rule for a path asked for credentials).
func ParsePathCredentials(body []byte) (*PathCredentialsRequest, error) {
	var req PathCredentialsRequest
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "malformed GenerateTemporaryPathCredential: %v", err)
	}
	if req.URL == nil || *req.URL == "" {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "url is required")
	}
	op, err := operation(req.Operation, unknownPathOp, PathRead, PathReadWrite, PathCreateTable)
	if err != nil {
		return nil, err
	}
	req.Operation = &op
	req.Location = strings.TrimSuffix(fileURL(*req.URL), "/")
	if err := delta.CheckLocationSyntax(req.Location); err != nil {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "url: %s", delta.AsError(err).Message)
	}
	return &req, nil
}

// Writes says the path operation lets the caller write there.
func (req *PathCredentialsRequest) Writes() bool { return *req.Operation != PathRead }

// DeltaOperation is the Delta API's operation for the same access.
func (req *PathCredentialsRequest) DeltaOperation() string {
	if req.Writes() {
		return delta.ReadWrite
	}
	return delta.Read
}

// OnFileSystem says the path is a local one: there is nothing to vend for
// it (UC answers such a path with its url alone).
func (req *PathCredentialsRequest) OnFileSystem() bool { return onFileSystem(req.Location) }

func onFileSystem(location string) bool { return strings.HasPrefix(location, fileScheme) }

// operation reads a required enum value; unknown names the enum's
// placeholder, which asks for nothing and is refused like any other.
func operation(v *string, unknown string, valid ...string) (string, error) {
	if v == nil || *v == "" {
		return "", Errorf(http.StatusBadRequest, InvalidArgument, "operation is required")
	}
	for _, ok := range valid {
		if *v == ok {
			return *v, nil
		}
	}
	return "", Errorf(http.StatusBadRequest, InvalidArgument, "operation must be one of %s, not %q",
		strings.Join(valid, ", "), *v)
}

// TemporaryCredentials is UC's answer: one cloud's credentials for url.
type TemporaryCredentials struct {
	AWS            *AWSCredentials `json:"aws_temp_credentials,omitempty"`
	Azure          *AzureSAS       `json:"azure_user_delegation_sas,omitempty"`
	GCP            *GCPToken       `json:"gcp_oauth_token,omitempty"`
	ExpirationTime int64           `json:"expiration_time"`
	URL            string          `json:"url"`
}

// AWSCredentials is UC's AwsCredentials.
type AWSCredentials struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	SessionToken    string `json:"session_token,omitempty"`
}

// AzureSAS is UC's AzureUserDelegationSAS.
type AzureSAS struct {
	SASToken string `json:"sas_token"`
}

// GCPToken is UC's GcpOauthToken.
type GCPToken struct {
	OAuthToken string `json:"oauth_token"`
}

// Credentials turns what the Delta API vended for location into UC's
// answer. Iceberg catalogs may vend several sets, each for a prefix; UC
// answers one, so the set whose prefix covers location most closely is
// taken. None (a catalog that vends nothing) is the url alone: the
// client reads the files with what it has. A local location's is an
// empty set (below). expires is when an answer without a vended set's own
// expiry is to be asked for again: clients (delta-rs) require one.
func Credentials(location string, vended []delta.StorageCredential, expires time.Time) *TemporaryCredentials {
	out := &TemporaryCredentials{URL: location, ExpirationTime: expires.UnixMilli()}
	if onFileSystem(location) {
		// No cloud's credentials open a local file (a catalog may vend its
		// object store's with every table, wherever it lies), and UC
		// answers a local path with its url alone. delta-rs 1.6.6 refuses
		// an answer without a credential set, even for a local table, so
		// the set is an empty one: a key and secret of "", which grant
		// nothing and which a local file store ignores.
		out.AWS = &AWSCredentials{}
		return out
	}
	best := -1
	for i, c := range vended {
		p := strings.TrimSuffix(c.Prefix, "/")
		if (location == p || strings.HasPrefix(location, c.Prefix)) && (best < 0 || len(c.Prefix) > len(vended[best].Prefix)) {
			best = i
		}
	}
	if best < 0 {
		return out
	}
	c := vended[best]
	cfg := c.Config
	switch {
	case cfg["s3.access-key-id"] != "":
		out.AWS = &AWSCredentials{AccessKeyID: cfg["s3.access-key-id"], SecretAccessKey: cfg["s3.secret-access-key"],
			SessionToken: cfg["s3.session-token"]}
	case cfg["azure.sas-token"] != "":
		out.Azure = &AzureSAS{SASToken: cfg["azure.sas-token"]}
	case cfg["gcs.oauth-token"] != "":
		out.GCP = &GCPToken{OAuthToken: cfg["gcs.oauth-token"]}
	default:
		return out // a set UC's model has no field for
	}
	out.ExpirationTime = c.ExpirationTimeMs
	return out
}
