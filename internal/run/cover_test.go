package run

import (
	"reflect"
	"testing"
	"unsafe"
)

// A layer laid over another keeps every field of the higher one that is
// not a row's (TestCoverIsOver in internal/settings holds the rows): with
// each such field of hi filled and nothing below, cover must give hi
// whole. A field added to Settings and not to cover fails here.
func TestCoverTakesEveryField(t *testing.T) {
	t.Parallel()
	var hi Settings
	v := reflect.ValueOf(&hi).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Name == "Values" {
			continue
		}
		fill(settable(v.Field(i)), 0)
	}
	var s Settings
	s.cover(&hi)
	got := reflect.ValueOf(&s).Elem()
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		if name == "Values" {
			continue
		}
		if !reflect.DeepEqual(settable(got.Field(i)).Interface(), settable(v.Field(i)).Interface()) {
			t.Errorf("cover left out %s, which the higher layer gave", name)
		}
	}
}

// settable is f, an addressable field, unexported or not, as a value the
// test may set and read.
func settable(f reflect.Value) reflect.Value {
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// fill gives v a value that is not its zero.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("higher")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if depth < 3 {
			fill(settable(s.Index(0)), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if depth < 3 {
				fill(settable(v.Field(i)), depth+1)
			}
		}
	}
}
