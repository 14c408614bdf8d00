package icerest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"
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
// It also returns what the body names, read from the same parse (exact
// keys, as backends read them), for the policy to decide on.
func ValidateBody(op string, body []byte) (Touched, error) {
	var t Touched
	rules, ok := bodyRules[op]
	if !ok {
		return t, nil // no body (GET, HEAD, DELETE) or none we vet
	}
	obj, err := decodeObject(body)
	if err == nil {
		err = rules(obj, &t)
	}
	if err == nil {
		err = checkSchema(op, body)
	}
	if err != nil {
		return Touched{}, Errorf(http.StatusBadRequest, BadRequest, "malformed %s request: %v", op, err)
	}
	return t, nil
}

// TouchedTables are the tables a rename (source, then destination) or a
// multi-table commit names, read as ValidateBody reads them: what the
// policy decides on is what the cache evicts.
func TouchedTables(op string, body []byte) ([]Identifier, error) {
	t, err := ValidateBody(op, body)
	return t.Identifiers, err
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

type object map[string]json.RawMessage

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
		return o.required("table-changes", arrayOf(func(raw json.RawMessage) error {
			c, err := nestedObject(raw)
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

// decodeObject decodes exactly one JSON object: not null, no trailing
// data, valid UTF-8 (encoding/json would quietly repair it).
func decodeObject(raw []byte) (object, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("not valid UTF-8")
	}
	if err := CheckEscapes(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var o object
	if err := dec.Decode(&o); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty body")
		}
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if o == nil {
		return nil, errors.New("not a JSON object: null")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON object")
	}
	return o, nil
}

// CheckEscapes refuses the \u escapes encoding/json would decode quietly
// into something else than was sent: a lone surrogate (stored as U+FFFD)
// and NUL (which ends a C string in some backends' storage). A raw NUL or
// control byte is not JSON at all; the decoder refuses those.
func CheckEscapes(raw []byte) error {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character: a backslash escapes the next one only
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw, i+1)
		switch {
		case !ok:
			continue // not JSON; the decoder says so
		case r == 0:
			return errors.New("NUL (\\u0000) in a string")
		case r >= 0xDC00 && r <= 0xDFFF:
			return errors.New("lone surrogate escape in a string")
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := hex4(raw, i+7); !ok || raw[i+5] != '\\' || raw[i+6] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
				return errors.New("lone surrogate escape in a string")
			}
			i += 6 // the low half is checked: skip it
		}
		i += 4
	}
	return nil
}

// hex4 reads the four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	return rune(v), err == nil
}

// checkSchema checks body (one JSON object, decodeObject passed it)
// against op's request schema from the spec.
func checkSchema(op string, body []byte) error {
	s := operationSchemas[op]
	if s == nil || s.Body == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers are checked as written: 1e999 is no long
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	return s.Body.check(v)
}

// nestedObject decodes an object inside a body decodeObject accepted
// (so already one valid JSON value).
func nestedObject(raw json.RawMessage) (object, error) {
	var o object
	if kind(raw) != '{' || json.Unmarshal(raw, &o) != nil {
		return nil, errors.New("must be an object")
	}
	return o, nil
}

type check func(json.RawMessage) error

// required and optional check one field; a JSON null counts as absent.
func (o object) required(name string, c check) error {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return fmt.Errorf("%q is required", name)
	}
	return field(name, c(raw))
}

func (o object) optional(name string, c check) error {
	raw, ok := o[name]
	if !ok || isNull(raw) {
		return nil
	}
	return field(name, c(raw))
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

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func kind(raw json.RawMessage) byte {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

func isObject(raw json.RawMessage) error {
	if kind(raw) != '{' {
		return errors.New("must be an object")
	}
	return nil
}

func isString(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return errors.New("must be a string")
	}
	return nil
}

// nonEmptyString checks a non-empty string and keeps it in dst (when
// not nil).
func nonEmptyString(dst *string) check {
	return func(raw json.RawMessage) error {
		var s string
		if json.Unmarshal(raw, &s) != nil || s == "" {
			return errors.New("must be a non-empty string")
		}
		if dst != nil {
			*dst = s
		}
		return nil
	}
}

func isBool(raw json.RawMessage) error {
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return errors.New("must be true or false")
	}
	return nil
}

func stringArray(raw json.RawMessage) error {
	var a []string
	if kind(raw) != '[' || json.Unmarshal(raw, &a) != nil {
		return errors.New("must be an array of strings")
	}
	return nil
}

func stringMap(raw json.RawMessage) error {
	var m map[string]string
	if kind(raw) != '{' || json.Unmarshal(raw, &m) != nil {
		return errors.New("must be an object of string values")
	}
	return nil
}

// namespaceLevels is a namespace: a non-empty array of non-empty strings,
// kept in dst.
func namespaceLevels(dst *[]string) check {
	return func(raw json.RawMessage) error {
		var a []string
		if kind(raw) != '[' || json.Unmarshal(raw, &a) != nil || len(a) == 0 {
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
	return func(raw json.RawMessage) error {
		o, err := nestedObject(raw)
		if err != nil {
			return err
		}
		var id Identifier
		if err := all(o.required("namespace", stringArray), o.required("name", nonEmptyString(&id.Name))); err != nil {
			return err
		}
		_ = json.Unmarshal(o["namespace"], &id.Namespace) // checked just above
		if dst != nil {
			*dst = append(*dst, id)
		}
		return nil
	}
}

func arrayOf(each check) check {
	return func(raw json.RawMessage) error {
		var items []json.RawMessage
		if kind(raw) != '[' || json.Unmarshal(raw, &items) != nil {
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
// Only the discriminator is decoded: the rest of the item is the backend's
// to read (commits are the hot write path).
func typed(discriminator string, known map[string]bool) check {
	return func(raw json.RawMessage) error {
		if kind(raw) != '{' {
			return errors.New("must be an object")
		}
		var d struct {
			Type   *string `json:"type"`
			Action *string `json:"action"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("must be an object with a string %q", discriminator)
		}
		var t string
		switch {
		case discriminator == "type" && d.Type != nil:
			t = *d.Type
		case discriminator == "action" && d.Action != nil:
			t = *d.Action
		}
		if t == "" {
			return fmt.Errorf("%q is required", discriminator)
		}
		if !known[t] {
			return fmt.Errorf("unknown %s %q", discriminator, t)
		}
		return nil
	}
}
