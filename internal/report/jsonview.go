package report

import (
	"reflect"
	"time"
	"unicode"
)

// JSONView returns v as the report writes it, in the report's one naming
// style (snake_case, units in the names): a struct becomes an object keyed
// by its field names in snake_case (InFlight: in_flight, P99: p99, ID: id),
// embedded structs flattened; a time.Duration field, and a number field
// tagged unit:"ns", becomes microseconds under its name plus _us; slices,
// arrays, maps and pointers are followed; other values stay as they are.
// The policies' and hedgers' statistics (tailroute.HostStats, Hedging, ...) go through it, so a
// counter added to them is named in the same style without a second list.
func JSONView(v any) any {
	if v == nil {
		return nil
	}
	return view(reflect.ValueOf(v))
}

var durationType = reflect.TypeOf(time.Duration(0))

func view(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return view(v.Elem())
	case reflect.Struct:
		out := map[string]any{}
		addFields(out, v)
		return out
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = view(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]any{}
		it := v.MapRange()
		for it.Next() {
			out[keyString(it.Key())] = view(it.Value())
		}
		return out
	}
	if v.Type() == durationType {
		return float64(v.Int()) / 1e3
	}
	return v.Interface()
}

func keyString(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	return reflect.ValueOf(k.Interface()).String()
}

// addFields puts v's exported fields into out (embedded structs flattened).
func addFields(out map[string]any, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && fv.Kind() == reflect.Struct {
			addFields(out, fv)
			continue
		}
		name := snake(f.Name)
		switch {
		case f.Type == durationType:
			out[name+"_us"] = float64(fv.Int()) / 1e3
		case f.Tag.Get("unit") == "ns" && fv.CanFloat():
			out[name+"_us"] = fv.Float() / 1e3
		default:
			out[name] = view(fv)
		}
	}
}

// snake converts a Go identifier to snake_case: InFlight in_flight,
// P99 p99, ID id, HTTPServer http_server.
func snake(s string) string {
	r := []rune(s)
	var out []rune
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]))
			acronymEnd := i > 0 && unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || acronymEnd {
				out = append(out, '_')
			}
			c = unicode.ToLower(c)
		}
		out = append(out, c)
	}
	return string(out)
}
