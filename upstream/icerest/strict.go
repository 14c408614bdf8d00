package icerest

import (
	"maps"
	"slices"

	"github.com/lakegate/lakegate/internal/strictjson"
)

// shape is the set of schema nodes a JSON value may be an instance of:
// where the spec has a union (anyOf, a discriminator's cases) the value is
// checked against every alternative, so that a key is refused when it is
// a case variant of a field of any of them (strictjson.Shape).
type shape []*node

// shapeOf is n's shape, or nil (any value) when n names nothing.
func shapeOf(n *node) strictjson.Shape {
	if s := expand(nil, n); len(s) > 0 {
		return s
	}
	return nil
}

// expand adds n, resolved, and its alternatives to s.
func expand(s shape, n *node) shape {
	for n != nil && n.target != nil {
		n = n.target
	}
	if n == nil || slices.Contains(s, n) {
		return s
	}
	s = append(s, n)
	for _, alt := range n.AnyOf {
		s = expand(s, alt)
	}
	for _, name := range slices.Sorted(maps.Keys(n.Cases)) {
		s = expand(s, n.Cases[name])
	}
	return s
}

// Field is the shape of key's value: the union of the fields key names,
// or of the map values where an alternative is a map. A key that names no
// field of one alternative but is a case variant of one of its fields is
// refused, whatever the others say: a Go backend decoding into that
// alternative would take it for the field.
func (s shape) Field(key string) (strictjson.Shape, string) {
	var child shape
	for _, n := range s {
		if p := n.Props[key]; p != nil {
			child = expand(child, p)
			continue
		}
		if f := n.folds[strictjson.Fold(key)]; f != "" {
			return nil, f
		}
		if n.Extra != nil {
			child = expand(child, n.Extra)
		}
	}
	if len(child) == 0 {
		return nil, ""
	}
	return child, ""
}

// Item is the union of the alternatives' item schemas.
func (s shape) Item() strictjson.Shape {
	var items shape
	for _, n := range s {
		if n.Items != nil {
			items = expand(items, n.Items)
		}
	}
	if len(items) == 0 {
		return nil
	}
	return items
}

// Number passes: checkSchema checks each number against its field's
// type, on the same parse.
func (shape) Number(string) error { return nil }
