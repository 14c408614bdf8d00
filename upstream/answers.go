package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/lakegate/lakegate/internal/jsonscan"
	"github.com/lakegate/lakegate/internal/strictjson"
	"github.com/lakegate/lakegate/upstream/icerest"
)

// carriesTableMetadata are the operations whose success answer holds a
// table's metadata, which clients act on and the cache keeps.
var carriesTableMetadata = map[string]bool{
	icerest.OpLoadTable: true, icerest.OpCreateTable: true, icerest.OpRegisterTable: true,
	icerest.OpUpdateTable: true,
}

// A table answer is read in one pass of a strict scanner (see
// internal/jsonscan) that both checks it and reads what the cache, the
// refresher and strip_credentials need (icerest.TableAnswer). A table's
// metadata never changes once written, so most answers are the bytes of
// one seen before: the verdict is remembered per content, and a table
// that did not change costs one hash pass.
//
// The memo's key is a hash of the bytes, seeded at random per process so
// a backend cannot aim a collision, and their length.
type answerKey struct {
	sum uint64
	n   int
}

// answerMemoSize bounds the memo: an entry is a few hundred bytes (the
// location and the properties), never the answer itself.
const answerMemoSize = 4096

var (
	answerSeed = maphash.MakeSeed()
	answerMemo = func() *lru.Cache[answerKey, *icerest.TableAnswer] {
		c, err := lru.New[answerKey, *icerest.TableAnswer](answerMemoSize)
		if err != nil {
			panic(err) // only for a size < 1
		}
		return c
	}()
	// scanners are reused: a scanner's buffers grow once and stay.
	scanners = sync.Pool{New: func() any { return new(jsonscan.Scanner) }}
)

// putScanner returns s to the pool without the answer it last read: an
// idle scanner must not keep a 10 MB body alive.
func putScanner(s *jsonscan.Scanner) {
	s.Reset(nil)
	scanners.Put(s)
}

// tableVerdict is what one pass over a table answer found: syntax is set
// when the body is no (strict) JSON document, metadata when its
// "metadata" is not table metadata.
type tableVerdict struct {
	syntax, metadata error
}

func (v tableVerdict) ok() bool { return v.syntax == nil && v.metadata == nil }

// readTableAnswer checks a table answer and reads it, remembering the
// verdict of a valid one without credentials. The TableAnswer is read however the verdict
// goes, as far as the body is JSON: a backend lakegate does not check
// (the embedded catalog) still has its answers' properties read.
func readTableAnswer(body []byte) (*icerest.TableAnswer, tableVerdict) {
	key := answerKey{maphash.Bytes(answerSeed, body), len(body)}
	if a, ok := answerMemo.Get(key); ok {
		return a, tableVerdict{}
	}
	a, v := scanTableAnswer(body)
	// Answers with credentials are not remembered: vended ones differ on
	// every call, so they would only push out tables that do repeat.
	if v.ok() && !a.Credentials() {
		answerMemo.Add(key, a)
	}
	return a, v
}

// scanTableAnswer is readTableAnswer's pass, without the memo.
func scanTableAnswer(body []byte) (*icerest.TableAnswer, tableVerdict) {
	s := scanners.Get().(*jsonscan.Scanner)
	defer putScanner(s)
	s.Reset(body)
	a := &icerest.TableAnswer{}
	var v tableVerdict
	if !s.BeginObject() {
		s.Skip()
		v.metadata = errors.New("the answer is not an object")
	}
	for s.More() {
		if err := readTopMember(s, a); err != nil && v.metadata == nil {
			v.metadata = err
		}
	}
	if v.syntax = s.Finish(); v.syntax != nil {
		return &icerest.TableAnswer{}, v
	}
	if v.metadata == nil && !a.HasMetadata {
		v.metadata = errors.New(`no "metadata"`)
	}
	return a, v
}

// readTopMember reads one member of a table answer; an error is a value
// of the wrong type (the scan goes on past it).
func readTopMember(s *jsonscan.Scanner, a *icerest.TableAnswer) error {
	key := s.Key()
	switch string(key) {
	case "metadata-location":
		if v, ok := s.Str(); ok {
			a.MetadataLocation, a.HasMetadataLocation = string(v), true
			return nil
		}
		return nullOr(s, `"metadata-location" is not a string`)
	case "metadata":
		if s.BeginObject() {
			a.HasMetadata = true
			return readMetadata(s, a)
		}
		return nullOr(s, `"metadata" is not an object`)
	case "config":
		readConfig(s, a)
	case "storage-credentials":
		a.HasStorageCredentials = true
		readStorageCredentials(s, a)
	case "remote-signing-config":
		a.SignerSettings = true
		return readRemoteSigningConfig(s, a)
	default:
		err := caseVariant(key, topFolds) // before Skip reuses key's buffer
		s.Skip()
		return err
	}
	return nil
}

// The keys of a table answer lakegate reads, by Go's fold of each. A key
// that matches one only as Go's encoding/json matches keys (ignoring
// case) is read by a Go client (iceberg-go) and not by lakegate: a
// "Config" holding credentials would pass strip_credentials, a
// "Format-Version" escape the check. Such an answer is refused.
var (
	topFolds      = strictjson.Folds([]string{"metadata-location", "metadata", "config", "storage-credentials", "remote-signing-config"})
	metadataFolds = strictjson.Folds(append(slices.Collect(maps.Keys(metadataFields)),
		"format-version", "table-uuid", "properties"))
)

// caseVariant refuses the key just read when it is a case variant of one
// of folds' names. A key of lower-case ASCII (nearly all) is no variant
// of another lower-case name, so only other keys are folded.
func caseVariant(key []byte, folds map[string]string) error {
	for _, c := range key {
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			if name, ok := folds[strictjson.Fold(string(key))]; ok {
				return fmt.Errorf("%q is a case variant of %q", key, name)
			}
			return nil
		}
	}
	return nil
}

// nullOr reads a null, which stands for an absent optional field, or
// skips the value and returns the type error what.
func nullOr(s *jsonscan.Scanner, what string) error {
	if s.Null() {
		return nil
	}
	s.Skip()
	return errors.New(what)
}

// readConfig notes a secret or a signer setting among the config's keys; a config that is
// not a string map is the client's to refuse.
func readConfig(s *jsonscan.Scanner, a *icerest.TableAnswer) {
	if !s.BeginObject() {
		s.Skip()
		return
	}
	for s.More() {
		k := string(s.Key())
		if icerest.IsSecretConfigKey(k) {
			a.SecretConfig = true
		}
		if icerest.IsSignerConfigKey(k) {
			a.SignerSettings = true
		}
		s.Skip()
	}
}

// readStorageCredentials notes whether any credential is vended: only
// null and the empty list say none.
func readStorageCredentials(s *jsonscan.Scanner, a *icerest.TableAnswer) {
	switch {
	case s.Null():
	case s.BeginArray():
		for s.More() {
			a.VendedCredentials = true
			s.Skip()
		}
	default:
		a.VendedCredentials = true // not the spec's form: take it to hold some
		s.Skip()
	}
}

// readRemoteSigningConfig notes static signer headers: anything in
// "headers" but null or an empty object (a form other than the spec's
// object is taken to hold some, as for storage-credentials). A case
// variant of "headers" or "properties" is refused, as at the top level:
// a Go client would read it, strip_credentials would not.
func readRemoteSigningConfig(s *jsonscan.Scanner, a *icerest.TableAnswer) error {
	if !s.BeginObject() {
		s.Skip()
		return nil
	}
	var err error
	for s.More() {
		key := s.Key()
		if string(key) != "headers" {
			if e := caseVariant(key, signerFolds); e != nil && err == nil {
				err = e
			}
			s.Skip()
			continue
		}
		switch {
		case s.Null():
		case s.BeginObject():
			for s.More() {
				a.SignerHeaders = true
				s.Key()
				s.Skip()
			}
		default:
			a.SignerHeaders = true
			s.Skip()
		}
	}
	return err
}

var signerFolds = strictjson.Folds([]string{"headers", "properties"})

// metadataField is how one typed field of TableMetadata is checked.
type metadataField func(s *jsonscan.Scanner, name string) error

// metadataFields are the fields of TableMetadata lakegate checks: the
// ones the spec requires, and the types of those every client reads when
// present. format-version, table-uuid and properties are read apart.
var metadataFields = map[string]metadataField{
	"location":            optionalString,
	"last-updated-ms":     optionalInt,
	"last-column-id":      optionalInt,
	"current-schema-id":   optionalInt,
	"default-spec-id":     optionalInt,
	"current-snapshot-id": optionalInt,
	"schemas":             listOfObjects,
	"partition-specs":     listOfObjects,
	"sort-orders":         listOfObjects,
	"snapshots":           listOfObjects,
	"snapshot-log":        listOfObjects,
	"metadata-log":        listOfObjects,
	"refs":                mapOfObjects,
}

// readMetadata checks the metadata object whose '{' was read, and reads
// its properties into a.
func readMetadata(s *jsonscan.Scanner, a *icerest.TableAnswer) error {
	var first error
	note := func(err error) {
		if first == nil {
			first = err
		}
	}
	version, tableUUID := false, false
	for s.More() {
		key := s.Key()
		switch string(key) {
		case "format-version":
			if s.Peek() != jsonscan.Number {
				s.Skip()
				continue
			}
			v, ok := s.Int()
			version = ok && v >= 1 && v <= 3
		case "table-uuid":
			ok, err := readUUID(s)
			tableUUID = ok
			if err != nil {
				note(err)
			}
		case "properties":
			note(readProperties(s, a))
		default:
			if check, ok := metadataFields[string(key)]; ok {
				note(check(s, string(key)))
			} else {
				note(caseVariant(key, metadataFolds))
				s.Skip()
			}
		}
	}
	switch {
	case first != nil:
		return first
	case !version:
		return errors.New(`"format-version" is not 1, 2 or 3`)
	case !tableUUID:
		return errors.New(`no "table-uuid"`)
	}
	return nil
}

// readUUID reads table-uuid: ok when it is a UUID (in any form
// uuid.Parse takes); null is no table-uuid.
func readUUID(s *jsonscan.Scanner) (ok bool, err error) {
	v, isStr := s.Str()
	if !isStr {
		return false, nullOr(s, `"table-uuid" is not of its type`)
	}
	if _, perr := uuid.ParseBytes(v); perr != nil {
		return false, errors.New(`"table-uuid" is not a UUID`)
	}
	return true, nil
}

// readProperties reads the metadata's properties, a string map.
func readProperties(s *jsonscan.Scanner, a *icerest.TableAnswer) error {
	if !s.BeginObject() {
		return nullOr(s, `"properties" is not of its type`)
	}
	var bad error
	for s.More() {
		k := string(s.Key())
		v, ok := s.Str()
		switch {
		case ok:
			if a.Properties == nil {
				a.Properties = map[string]string{}
			}
			a.Properties[k] = string(v)
		case s.Null(): // encoding/json left such a key out; so does lakegate
		default:
			s.Skip()
			bad = errors.New(`"properties" is not of its type`)
		}
	}
	return bad
}

func optionalString(s *jsonscan.Scanner, name string) error {
	if _, ok := s.Str(); ok {
		return nil
	}
	return nullOr(s, `"`+name+`" is not of its type`)
}

func optionalInt(s *jsonscan.Scanner, name string) error {
	if s.Peek() == jsonscan.Number {
		if _, ok := s.Int(); ok {
			return nil
		}
		return errors.New(`"` + name + `" is not of its type`)
	}
	return nullOr(s, `"`+name+`" is not of its type`)
}

// listOfObjects checks an array whose items are objects (or null, which
// encoding/json took as an empty one).
func listOfObjects(s *jsonscan.Scanner, name string) error {
	if !s.BeginArray() {
		return nullOr(s, `"`+name+`" is not of its type`)
	}
	var bad error
	for s.More() {
		if !objectOrNull(s) && bad == nil {
			bad = errors.New(`"` + name + `" is not a list of objects`)
		}
	}
	return bad
}

// mapOfObjects checks an object whose values are objects (or null).
func mapOfObjects(s *jsonscan.Scanner, name string) error {
	if !s.BeginObject() {
		return nullOr(s, `"`+name+`" is not of its type`)
	}
	var bad error
	for s.More() {
		s.Key()
		if !objectOrNull(s) && bad == nil {
			bad = errors.New(`"` + name + `" is not a map of objects`)
		}
	}
	return bad
}

// objectOrNull reads the next value and reports whether it was an object
// or null.
func objectOrNull(s *jsonscan.Scanner) bool {
	if s.Null() {
		return true
	}
	ok := s.Peek() == jsonscan.Object
	s.Skip()
	return ok
}

// nullListsAsEmpty rewrites the named top-level fields from null to []:
// a backend that answers "updated": null means it updated nothing, and
// clients that parse the spec's form fail on null.
func nullListsAsEmpty(body []byte, fields ...string) []byte {
	if !bytes.Contains(body, []byte("null")) {
		return body
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body // checkSuccess says what is wrong with it
	}
	changed := false
	for _, f := range fields {
		if v, ok := top[f]; ok && string(bytes.TrimSpace(v)) == "null" {
			top[f], changed = json.RawMessage("[]"), true
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}
