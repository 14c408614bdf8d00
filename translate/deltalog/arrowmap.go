package deltalog

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// strPtrMap reads a map<string,string> whose values may be null (partition
// values).
func (r *row) strPtrMap(name string) map[string]*string {
	f := r.field(name)
	if f == nil {
		return nil
	}
	m, ok := f.(*array.Map)
	if !ok {
		r.keep(errType(r.path+"."+name, f.DataType()))
		return nil
	}
	start, end, err := span(m.ValueOffsets(r.i))(m.Keys().Len())
	if err != nil {
		r.keep(fmt.Errorf("%s.%s: %w", r.path, name, err))
		return nil
	}
	out := make(map[string]*string, end-start)
	for j := start; j < end; j++ {
		k, err := strAt(m.Keys(), j)
		if err != nil {
			r.keep(fmt.Errorf("%s.%s key: %w", r.path, name, err))
			return nil
		}
		out[k] = nil
		if m.Items().IsValid(j) {
			v, err := strAt(m.Items(), j)
			if err != nil {
				r.keep(fmt.Errorf("%s.%s value: %w", r.path, name, err))
				return nil
			}
			out[k] = &v
		}
	}
	return out
}

// strMap reads a map<string,string>; a null value reads as "".
func (r *row) strMap(name string) map[string]string {
	pm := r.strPtrMap(name)
	if pm == nil {
		return nil
	}
	out := make(map[string]string, len(pm))
	for k, v := range pm {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// strList reads an array<string>.
func (r *row) strList(name string) []string {
	f := r.field(name)
	if f == nil {
		return nil
	}
	l, ok := f.(*array.List)
	if !ok {
		r.keep(errType(r.path+"."+name, f.DataType()))
		return nil
	}
	start, end, err := span(l.ValueOffsets(r.i))(l.ListValues().Len())
	if err != nil {
		r.keep(fmt.Errorf("%s.%s: %w", r.path, name, err))
		return nil
	}
	out := make([]string, 0, end-start)
	for j := start; j < end; j++ {
		s, err := strAt(l.ListValues(), j)
		if err != nil {
			r.keep(fmt.Errorf("%s.%s: %w", r.path, name, err))
			return nil
		}
		out = append(out, s)
	}
	return out
}

// span checks list offsets against the values they index: a corrupt file
// must not index out of range.
func span(start, end int64) func(n int) (int, int, error) {
	return func(n int) (int, int, error) {
		if start < 0 || end < start || end > int64(n) {
			return 0, 0, fmt.Errorf("list offsets %d..%d outside %d values", start, end, n)
		}
		return int(start), int(end), nil
	}
}
