package icerest

import "fmt"

// PathProperties are the table and view properties that move where files
// are written; NamespaceLocation is a namespace's default table location.
var PathProperties = []string{"write.data.path", "write.metadata.path", "write.object-storage.path", "write.folder-storage.path"}

const NamespaceLocation = "location"

// BodyLocations lists every storage location a write body names, for a
// gateway that confines a backend to allowed locations: a created table's
// or view's location and path properties, a namespace's location, a
// metadata file to register, and in commits every set-location, path
// property, snapshot manifest list and statistics file. Keys are read
// exactly, as every backend reads them once parseBody has refused
// repeated keys and case variants. A body it cannot read is an error: the
// caller refuses it rather than guess.
func BodyLocations(op string, body []byte) ([]string, error) {
	if !NamesLocations(op) {
		return nil, nil
	}
	o, err := parseBody(op, body)
	if err != nil {
		return nil, err
	}
	return objectLocations(op, o)
}

// objectLocations is BodyLocations of a parsed body.
func objectLocations(op string, o object) ([]string, error) {
	pick, ok := locationRules[op]
	if !ok {
		return nil, nil
	}
	var locs []string
	if err := pick(o, &locs); err != nil {
		return nil, fmt.Errorf("malformed %s request: %v", op, err)
	}
	return locs, nil
}

// NamesLocations reports whether op's body may name a location.
func NamesLocations(op string) bool { return locationRules[op] != nil }

var locationRules = map[string]func(object, *[]string) error{
	OpCreateNamespace:  func(o object, l *[]string) error { return o.pathProps("properties", []string{NamespaceLocation}, l) },
	OpUpdateProperties: func(o object, l *[]string) error { return o.pathProps("updates", []string{NamespaceLocation}, l) },
	OpCreateTable:      createLocations,
	OpCreateView:       createLocations,
	OpRegisterTable:    func(o object, l *[]string) error { return o.str("metadata-location", l) },
	OpRegisterView:     func(o object, l *[]string) error { return o.str("metadata-location", l) },
	OpUpdateTable:      commitLocations,
	OpReplaceView:      commitLocations,
	OpCommitTransaction: func(o object, l *[]string) error {
		return o.each("table-changes", func(c object) error { return commitLocations(c, l) })
	},
}

func createLocations(o object, l *[]string) error {
	return all(o.str("location", l), o.pathProps("properties", PathProperties, l))
}

func commitLocations(o object, l *[]string) error {
	return o.each("updates", func(u object) error {
		action, _ := u["action"].(string)
		switch action {
		case "set-location":
			return u.str("location", l)
		case "set-properties":
			return u.pathProps("updates", PathProperties, l)
		case "add-snapshot":
			return u.nested("snapshot", func(s object) error { return s.str("manifest-list", l) })
		case "set-statistics":
			return u.nested("statistics", func(s object) error { return s.str("statistics-path", l) })
		case "set-partition-statistics":
			return u.nested("partition-statistics", func(s object) error { return s.str("statistics-path", l) })
		}
		return nil
	})
}

// str appends the string field name, when present.
func (o object) str(name string, l *[]string) error {
	v := o[name]
	if v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("%q must be a string", name)
	}
	*l = append(*l, s)
	return nil
}

// pathProps appends the values of keys in the string map field name.
func (o object) pathProps(name string, keys []string, l *[]string) error {
	return o.nested(name, func(m object) error {
		for _, k := range keys {
			if err := m.str(k, l); err != nil {
				return fmt.Errorf("%q: %v", name, err)
			}
		}
		return nil
	})
}

func (o object) nested(name string, fn func(object) error) error {
	v := o[name]
	if v == nil {
		return nil
	}
	n, err := nestedObject(v)
	if err != nil {
		return fmt.Errorf("%q: %v", name, err)
	}
	return fn(n)
}

// each runs fn on every object of the array field name.
func (o object) each(name string, fn func(object) error) error {
	v := o[name]
	if v == nil {
		return nil
	}
	items, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%q must be an array", name)
	}
	for i, item := range items {
		n, err := nestedObject(item)
		if err == nil {
			err = fn(n)
		}
		if err != nil {
			return fmt.Errorf("%q item %d: %v", name, i, err)
		}
	}
	return nil
}
