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

// shapeOf is n's shape, or nil (any value) when n names nothing. A
// node's shape is its precomputed alts, handed out by pointer so that a
// walk boxes no slices.
func shapeOf(n *node) strictjson.Shape {
	if n == nil || len(n.alts) == 0 {
		return nil
	}
	return &n.alts
}

// expand adds n, resolved, and its alternatives to s (loadSchemas keeps
// each node's in alts, so a walk does not expand them again).
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
func (s *shape) Field(key string) (strictjson.Shape, string) {
	var u unionOf
	var folded string
	for _, n := range *s {
		if p := n.Props[key]; p != nil {
			u.add(p)
			continue
		}
		if folded == "" {
			folded = strictjson.Fold(key)
		}
		if f := n.folds[folded]; f != "" {
			return nil, f
		}
		u.add(n.Extra)
	}
	return u.shape(), ""
}

// Item is the union of the alternatives' item schemas.
func (s *shape) Item() strictjson.Shape {
	var u unionOf
	for _, n := range *s {
		u.add(n.Items)
	}
	return u.shape()
}

// unionOf gathers the shapes of several schemas; one alone (the usual
// case) is shared, not copied.
type unionOf struct {
	one    *shape
	merged shape
}

func (u *unionOf) add(n *node) {
	switch {
	case n == nil || u.one == &n.alts:
	case u.one == nil && u.merged == nil:
		u.one = &n.alts
	default:
		if u.merged == nil {
			u.merged = slices.Clone(*u.one)
		}
		for _, a := range n.alts {
			if !slices.Contains(u.merged, a) {
				u.merged = append(u.merged, a)
			}
		}
	}
}

func (u *unionOf) shape() strictjson.Shape {
	switch {
	case u.merged != nil:
		return &u.merged
	case u.one != nil:
		return u.one
	}
	return nil
}

// Number passes: checkSchema checks each number against its field's
// type, on the same parse.
func (*shape) Number(string) error { return nil }
