package unity

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// UpdateSchema is updateSchema's body.
type UpdateSchema struct {
	Comment    *string           `json:"comment"`
	Properties map[string]string `json:"properties"`
	NewName    *string           `json:"new_name"`
}

// The namespace properties behind SchemaInfo's own fields: comment is
// set through its field, and storage_root is fixed at create (UC's
// UpdateSchema has no field for it).
const (
	commentProperty  = "comment"
	locationProperty = "location"
)

// ParseUpdateSchema reads updateSchema's body. A new_name other than the
// schema's own is refused: Iceberg REST has no namespace rename, so no
// backend lakegate fronts could do it (UC renames the schema).
func ParseUpdateSchema(body []byte, current string) (*UpdateSchema, error) {
	var req UpdateSchema
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return nil, Errorf(http.StatusBadRequest, InvalidArgument, "malformed UpdateSchema: %v", err)
	}
	if req.NewName != nil && *req.NewName != "" && *req.NewName != current {
		if p := icerest.NameProblem(*req.NewName); p != "" || strings.Contains(*req.NewName, ".") {
			return nil, Errorf(http.StatusBadRequest, InvalidArgument, "invalid new_name %q", *req.NewName)
		}
		return nil, Errorf(http.StatusNotImplemented, Unimplemented,
			"cannot rename schema %s to %s: Iceberg REST catalogs have no namespace rename", current, *req.NewName)
	}
	return &req, nil
}

// UpdateSchema answers updateSchema as UC does: comment sets the comment;
// non-empty properties replace the schema's properties (empty ones change
// nothing). It is one Iceberg updateProperties: the keys the new set no
// longer has are removed, except the comment and the storage root, which
// have fields of their own. properties may name those two only with the
// values they have (a client sending back what getSchema answered).
func (s *Service) UpdateSchema(ctx context.Context, catalog, name string, req *UpdateSchema) (*SchemaInfo, error) {
	cur, err := s.Schema(ctx, catalog, name)
	if err != nil {
		return nil, err
	}
	updates, removals := map[string]string{}, []string{}
	if len(req.Properties) > 0 {
		for _, k := range []string{commentProperty, locationProperty} {
			if v, ok := req.Properties[k]; ok && v != cur.Properties[k] {
				return nil, Errorf(http.StatusBadRequest, InvalidArgument,
					"properties may not change %q: it is the schema's %s", k, map[string]string{
						commentProperty: "comment (set the comment field)", locationProperty: "storage_root, fixed when it was created"}[k])
			}
		}
		for k, v := range req.Properties {
			if k != commentProperty && k != locationProperty && cur.Properties[k] != v {
				updates[k] = v
			}
		}
		for k := range cur.Properties {
			if _, kept := req.Properties[k]; !kept && k != commentProperty && k != locationProperty {
				removals = append(removals, k)
			}
		}
	}
	if req.Comment != nil {
		updates[commentProperty] = *req.Comment
	}
	if len(updates) == 0 && len(removals) == 0 {
		return cur, nil
	}
	slices.Sort(removals)
	c, err := s.client(ctx, catalog)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"updates": updates, "removals": removals}
	rt := icerest.Route{Operation: icerest.OpUpdateProperties, Namespace: []string{name}}
	if err := call(ctx, c, rt, nil, body, nil); err != nil {
		return nil, schemaNotFound(err, catalog, name)
	}
	return s.Schema(ctx, catalog, name)
}
