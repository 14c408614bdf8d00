package duration

import (
	"fmt"
	"reflect"
	"strings"
)

// CheckNonNegative reports the first negative Duration in v (a config
// struct, or a pointer, slice or map of them), named by its JSON path
// below path. A negative lifetime, age or timeout is always a mistake
// ("max_age -5s" would otherwise validate and then serve nothing from
// cache); the few options where a negative value means something (the
// policy's reload_interval, "off") are simply not passed here.
func CheckNonNegative(path string, v any) error {
	return check(path, reflect.ValueOf(v))
}

var durationType = reflect.TypeFor[Duration]()

func check(path string, v reflect.Value) error {
	switch {
	case !v.IsValid():
		return nil
	case v.Type() == durationType:
		if d := Duration(v.Int()); d < 0 {
			return fmt.Errorf("%s: %s is negative", path, d)
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return check(path, v.Elem())
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := check(fmt.Sprintf("%s[%d]", path, i), v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := check(fmt.Sprintf("%s[%v]", path, it.Key()), it.Value()); err != nil {
				return err
			}
		}
	case reflect.Struct:
		return checkFields(path, v)
	}
	return nil
}

func checkFields(path string, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if err := check(path+"."+name, v.Field(i)); err != nil {
			return err
		}
	}
	return nil
}
