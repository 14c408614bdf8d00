package icerest

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/lakegate/lakegate/internal/strictjson"
)

// ValidateBody checks a request body against its operation's request
// schema before it leaves the gateway: one JSON object whose every field
// has the type the spec's schema gives it (schema.go), down to each
// commit update's and requirement's fields. It checks what a gateway can
// know without the table's state, not meaning (that a schema id exists is
// the backend's call). null, trailing data, invalid UTF-8, NUL, lone
// surrogate escapes and unknown update types are a 400 here; a backend may
// take them for an empty commit, or store U+FFFD in place of a surrogate.
//
// Keys are read exactly, and a body is refused unless every backend reads
// them so too (parseBody): a repeated key, or a case variant of a field
// the schema names, is a 400, since Go's encoding/json would take the
// variant for the field lakegate did not check.
//
// It also returns what the body names, read from the same parse, for the
// policy to decide on.
func ValidateBody(op string, body []byte) (Touched, error) {
	t, _, err := validateBody(op, body)
	return t, err
}

// validateBody is ValidateBody that also returns the parsed body, for
// ParseRequest to read the body's locations from rather than parse it
// again.
func validateBody(op string, body []byte) (Touched, object, error) {
	var t Touched
	rules, ok := bodyRules[op]
	if !ok {
		return t, nil, nil // no body (GET, HEAD, DELETE) or none we vet
	}
	obj, err := parseBody(op, body)
	if err == nil {
		err = rules(obj, &t)
	}
	if err == nil {
		err = checkSchema(op, obj)
	}
	if err != nil {
		return Touched{}, nil, Errorf(http.StatusBadRequest, BadRequest, "malformed %s request: %v", op, err)
	}
	return t, obj, nil
}

// Touched is what a valid write body names.
type Touched struct {
	Namespace []string // createNamespace: the namespace to be
	Name      string   // createTable, registerTable, createView, registerView
	// Identifiers are both sides of a rename (source first), or every
	// table of a transaction.
	Identifiers []Identifier
}

// Identifier is a TableIdentifier.
type Identifier struct {
	Namespace []string
	Name      string
}

// VetsBody reports whether op's request body is checked by ValidateBody.
func VetsBody(op string) bool { return bodyRules[op] != nil }

// object is a JSON object as parseBody decodes it (numbers as
// json.Number).
type object map[string]any

// bodyRules are the operations whose bodies are vetted, with what a
// policy needs read from them (Touched) and the gateway's own rules
// beyond the spec (non-empty names). Every field's type is then checked
// against the spec's schema by checkSchema.
var bodyRules = map[string]func(object, *Touched) error{
	OpCreateNamespace: func(o object, t *Touched) error {
		return all(o.required("namespace", namespaceLevels(&t.Namespace)), o.optional("properties", stringMap))
	},
	OpUpdateProperties: func(o object, _ *Touched) error {
		return all(o.optional("removals", stringArray), o.optional("updates", stringMap))
	},
	OpCreateTable: func(o object, t *Touched) error {
		return all(o.required("name", nonEmptyString(&t.Name)), o.required("schema", isObject),
			o.optional("location", isString), o.optional("partition-spec", isObject),
			o.optional("write-order", isObject), o.optional("stage-create", isBool),
			o.optional("properties", stringMap))
	},
	OpRegisterTable: func(o object, t *Touched) error {
		return all(o.required("name", nonEmptyString(&t.Name)), o.required("metadata-location", nonEmptyString(nil)),
			o.optional("overwrite", isBool))
	},
	OpRegisterView: func(o object, t *Touched) error {
		return all(o.required("name", nonEmptyString(&t.Name)), o.required("metadata-location", nonEmptyString(nil)))
	},
	OpUpdateTable: func(o object, _ *Touched) error { return tableCommit(o, nil) },
	OpCommitTransaction: func(o object, t *Touched) error {
		return o.required("table-changes", arrayOf(func(v any) error {
			c, err := nestedObject(v)
			if err != nil {
				return err
			}
			return tableCommit(c, &t.Identifiers)
		}))
	},
	OpRenameTable: renameRequest,
	OpRenameView:  renameRequest,
	OpCreateView: func(o object, t *Touched) error {
		return all(o.required("name", nonEmptyString(&t.Name)), o.required("schema", isObject),
			o.required("view-version", isObject), o.optional("location", isString),
			o.optional("properties", stringMap))
	},
	OpReplaceView: func(o object, _ *Touched) error {
		return all(o.optional("identifier", identifier(nil)),
			o.optional("requirements", arrayOf(typed("type", viewRequirementTypes))),
			o.required("updates", arrayOf(typed("action", viewUpdateActions))))
	},
	OpReportMetrics:  func(object, *Touched) error { return nil },
	OpPlanTableScan:  func(object, *Touched) error { return nil },
	OpFetchScanTasks: func(object, *Touched) error { return nil },
}

// tableCommit is a CommitTableRequest. In a transaction (ids != nil) its
// identifier is required and collected.
func tableCommit(o object, ids *[]Identifier) error {
	id := o.optional("identifier", identifier(nil))
	if ids != nil {
		id = o.required("identifier", identifier(ids))
	}
	return all(id,
		o.required("requirements", arrayOf(typed("type", tableRequirementTypes))),
		o.required("updates", arrayOf(typed("action", tableUpdateActions))))
}

func renameRequest(o object, t *Touched) error {
	return all(o.required("source", identifier(&t.Identifiers)),
		o.required("destination", identifier(&t.Identifiers)))
}

// The spec's discriminator values (TableRequirement, ViewRequirement,
// BaseUpdate).
var (
	tableRequirementTypes = set("assert-create", "assert-table-uuid", "assert-ref-snapshot-id",
		"assert-last-assigned-field-id", "assert-current-schema-id", "assert-last-assigned-partition-id",
		"assert-default-spec-id", "assert-default-sort-order-id")
	viewRequirementTypes = set("assert-view-uuid")
	tableUpdateActions   = set("assign-uuid", "upgrade-format-version", "add-schema", "set-current-schema",
		"add-spec", "set-default-spec", "add-sort-order", "set-default-sort-order", "add-snapshot",
		"set-snapshot-ref", "remove-snapshots", "remove-snapshot-ref", "set-location", "set-properties",
		"remove-properties", "set-statistics", "remove-statistics", "set-partition-statistics",
		"remove-partition-statistics", "remove-partition-specs", "remove-schemas", "add-encryption-key",
		"remove-encryption-key")
	viewUpdateActions = set("assign-uuid", "upgrade-format-version", "add-schema", "set-location",
		"set-properties", "remove-properties", "add-view-version", "set-current-view-version")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// parseBody parses a body as exactly one JSON object that every JSON
// decoder reads as lakegate does (strictjson, against the operation's
// schema): not null, no trailing data, valid UTF-8, no repeated keys, no
// case variant of a field. It is the one parse of a vetted body; the rules,
// the schema check and BodyLocations all read its value.
func parseBody(op string, raw []byte) (object, error) {
	var sh strictjson.Shape
	if s := operationSchemas[op]; s != nil && s.Body != nil {
		sh = shapeOf(s.Body)
	}
	v, err := strictjson.Decode(raw, sh)
	var syntax *strictjson.SyntaxError
	if errors.As(err, &syntax) {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if err != nil {
		return nil, err
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %s", jsonKind(v))
	}
	return o, nil
}

// checkSchema checks a body parseBody accepted against op's request
// schema from the spec.
func checkSchema(op string, body object) error {
	s := operationSchemas[op]
	if s == nil || s.Body == nil {
		return nil
	}
	return s.Body.check(map[string]any(body))
}

type check func(any) error

// nestedObject is an object inside a parsed body.
func nestedObject(v any) (object, error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("must be an object")
	}
	return o, nil
}

// required and optional check one field; a JSON null counts as absent.
func (o object) required(name string, c check) error {
	v := o[name]
	if v == nil {
		return fmt.Errorf("%q is required", name)
	}
	return field(name, c(v))
}

func (o object) optional(name string, c check) error {
	v := o[name]
	if v == nil {
		return nil
	}
	return field(name, c(v))
}

func field(name string, err error) error {
	if err != nil {
		return fmt.Errorf("%q: %v", name, err)
	}
	return nil
}

func all(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// jsonKind names a parsed value's JSON type, for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func isObject(v any) error {
	_, err := nestedObject(v)
	return err
}

func isString(v any) error {
	if _, ok := v.(string); !ok {
		return errors.New("must be a string")
	}
	return nil
}

// nonEmptyString checks a non-empty string and keeps it in dst (when
// not nil).
func nonEmptyString(dst *string) check {
	return func(v any) error {
		s, _ := v.(string)
		if s == "" {
			return errors.New("must be a non-empty string")
		}
		if dst != nil {
			*dst = s
		}
		return nil
	}
}

func isBool(v any) error {
	if _, ok := v.(bool); !ok {
		return errors.New("must be true or false")
	}
	return nil
}

// strings reads an array of strings.
func stringsOf(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, item := range a {
		if out[i], ok = item.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func stringArray(v any) error {
	if _, ok := stringsOf(v); !ok {
		return errors.New("must be an array of strings")
	}
	return nil
}

func stringMap(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return errors.New("must be an object of string values")
	}
	for _, val := range m {
		if _, ok := val.(string); !ok {
			return errors.New("must be an object of string values")
		}
	}
	return nil
}

// namespaceLevels is a namespace: a non-empty array of non-empty strings,
// kept in dst.
func namespaceLevels(dst *[]string) check {
	return func(v any) error {
		a, ok := stringsOf(v)
		if !ok || len(a) == 0 {
			return errors.New("must be a non-empty array of names")
		}
		if slices.Contains(a, "") {
			return errors.New("must not hold an empty name")
		}
		*dst = a
		return nil
	}
}

// identifier is a TableIdentifier, {"namespace": [...], "name": "..."},
// appended to dst (when not nil).
func identifier(dst *[]Identifier) check {
	return func(v any) error {
		o, err := nestedObject(v)
		if err != nil {
			return err
		}
		var id Identifier
		if err := all(o.required("namespace", stringArray), o.required("name", nonEmptyString(&id.Name))); err != nil {
			return err
		}
		id.Namespace, _ = stringsOf(o["namespace"]) // checked just above
		if dst != nil {
			*dst = append(*dst, id)
		}
		return nil
	}
}

func arrayOf(each check) check {
	return func(v any) error {
		items, ok := v.([]any)
		if !ok {
			return errors.New("must be an array")
		}
		for i, item := range items {
			if err := each(item); err != nil {
				return fmt.Errorf("item %d: %v", i, err)
			}
		}
		return nil
	}
}

// typed is an object whose discriminator field names one of known.
func typed(discriminator string, known map[string]bool) check {
	return func(v any) error {
		o, err := nestedObject(v)
		if err != nil {
			return err
		}
		t, _ := o[discriminator].(string)
		if t == "" {
			return fmt.Errorf("%q is required", discriminator)
		}
		if !known[t] {
			return fmt.Errorf("unknown %s %q", discriminator, t)
		}
		return nil
	}
}
