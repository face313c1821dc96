// Package strictjson decodes JSON as encoding/json does with
// DisallowUnknownFields, and also rejects what encoding/json would silently
// misread: a key given twice in one object (it keeps the last value), a key
// whose case differs from the field's JSON name (it matches keys
// case-insensitively), a nonzero number that underflows to 0 (it reads
// "1e-400" as 0) and data after the value.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/sia-sched/sia/internal/errtext"
	"github.com/sia-sched/sia/internal/numtext"
)

// Decode decodes the single JSON value data into out (a pointer), with no
// unknown, duplicate or wrong-case keys and nothing after the value. Types
// that implement json.Unmarshaler decode their own part as they do; its
// keys are checked for duplicates only.
func Decode(data []byte, out any) error {
	if err := CheckKeys(data, reflect.TypeOf(out)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fmt.Errorf("%s: %w", errtext.LineCol(data, se.Offset), err)
		case errors.As(err, &te):
			return fmt.Errorf("%s: %w", errtext.LineCol(data, te.Offset), err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return err
		}
		// an unknown field: the decoder stops at the end of its object
		return fmt.Errorf("%s: %w", errtext.LineCol(data, dec.InputOffset()), err)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: unexpected data after the JSON value", at(data, end, ""))
	}
	return nil
}

// at names where a key is: its line and column and its path from the
// top-level value (e.g. `spec.Limits["a100"]`).
func at(data []byte, off int64, path string) string {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	if path == "" {
		return errtext.LineCol(data, off)
	}
	return errtext.LineCol(data, off) + ", " + path
}

// maxDepth bounds the nesting CheckKeys follows; deeper input is left to
// the decoder.
const maxDepth = 32

// CheckKeys walks the JSON value data along the Go type t it decodes into
// and rejects duplicate keys in any object and, in objects decoded into a
// struct, keys that match a field's JSON name only case-insensitively and
// unknown keys, a nonzero number that underflows to 0 (1e-400, which
// encoding/json reads as 0; the error wraps numtext.ErrUnderflow), and null where the Go type holds no null (a number, string,
// bool, struct or array, which encoding/json would leave at its zero value).
// Its errors name the key's line and column and its path
// (e.g. `line 3:5, spec.Limits["a100"]: key "Min" given twice`).
// Malformed JSON is left to the decoder (CheckKeys returns nil).
func CheckKeys(data []byte, t reflect.Type) error {
	if err := checkKeys(data, t); !errors.Is(err, errMalformed) {
		return err
	}
	return nil
}

// errMalformed stops CheckKeys's walk at the first token the decoder cannot
// read: the decoder does not move past it, so a walk that went on would
// loop on it for ever.
var errMalformed = errors.New("malformed JSON")

func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var unknown error // the first unknown key
	var null error    // the first null where the Go type holds no null
	var walk func(t reflect.Type, depth int, path string) error
	walk = func(t reflect.Type, depth int, path string) error {
		declared := t
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return errMalformed
		}
		if depth > maxDepth {
			return nil
		}
		if n, ok := tok.(json.Number); ok {
			if err := numtext.Check(string(n)); err != nil {
				return fmt.Errorf("%s: number %s %w", at(data, off, path), n, err)
			}
		}
		if tok == nil && !nullable(declared) && null == nil {
			// reported unless the JSON turns out malformed
			null = fmt.Errorf("%s: null for a %v (want a value)", at(data, off, path), declared)
		}
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			elem = t.Elem()
		}
		switch tok {
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(elem, depth+1, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, _ = dec.Token()
		case json.Delim('{'):
			names := fieldNames(t)
			seen := map[string]bool{}
			for dec.More() {
				off := dec.InputOffset()
				kt, err := dec.Token()
				if err != nil {
					return errMalformed
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("%s: key %q given twice", at(data, off, path), k)
				}
				seen[k] = true
				child := elem
				if names != nil {
					ft, ok := names[k]
					if !ok {
						for n := range names {
							if strings.EqualFold(n, k) {
								return fmt.Errorf("%s: key %q must be spelled %q (keys are case-sensitive)", at(data, off, path), k, n)
							}
						}
						if unknown == nil {
							// reported unless the JSON turns out malformed
							unknown = fmt.Errorf("%s: unknown key %q", at(data, off, path), k)
						}
					}
					child = ft
				}
				sub := fmt.Sprintf("%s[%q]", path, k) // a map's key
				if names != nil {
					sub = k
					if path != "" {
						sub = path + "." + k
					}
				}
				if err := walk(child, depth+1, sub); err != nil {
					return err
				}
			}
			_, _ = dec.Token()
		}
		return nil
	}
	if err := walk(t, 0, ""); err != nil {
		return err
	}
	if unknown != nil {
		return unknown
	}
	return null
}

// nullable reports whether JSON null means something for a value of type t
// (nil for pointers, slices, maps and interfaces; a type's own
// UnmarshalJSON decides for itself; nil t: not checked). encoding/json
// leaves any other value unchanged on null, so {"syncTime":null} would read
// as a sync time of 0.
func nullable(t reflect.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	}
	return t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler)
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// fieldNames returns the JSON names of a struct type's fields and their
// types, or nil when t is not a struct decoded field by field.
func fieldNames(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	names := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" && f.Anonymous {
			// encoding/json promotes the fields of an embedded struct (or
			// pointer to one), exported or not
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				sub := fieldNames(et)
				if sub == nil {
					return nil // an embedded Unmarshaler: keys unknown here
				}
				for n, ft := range sub {
					names[n] = ft
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = f.Type
	}
	return names
}

// CheckNumbers rejects a nonzero number anywhere in the JSON value data
// that underflows to 0 (1e-400, which encoding/json reads as 0), with its
// line, column and path; the error wraps numtext.ErrUnderflow. It checks
// nothing else, for readers that take encoding/json's other rules as they
// are. Call it on data the decoder accepted: on malformed JSON it stops at
// the first token it cannot read and returns nil.
func CheckNumbers(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(depth int, path string) error
	walk = func(depth int, path string) error {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil || depth > maxDepth {
			return errMalformed
		}
		switch tok := tok.(type) {
		case json.Number:
			if err := numtext.Check(string(tok)); err != nil {
				return fmt.Errorf("%s: number %s %w", at(data, off, path), tok, err)
			}
		case json.Delim:
			for i := 0; dec.More(); i++ {
				sub := fmt.Sprintf("%s[%d]", path, i)
				if tok == '{' {
					kt, err := dec.Token()
					if err != nil {
						return errMalformed
					}
					k, _ := kt.(string)
					sub = k
					if path != "" {
						sub = path + "." + k
					}
				}
				if err := walk(depth+1, sub); err != nil {
					return err
				}
			}
			_, _ = dec.Token()
		}
		return nil
	}
	if err := walk(0, ""); !errors.Is(err, errMalformed) {
		return err
	}
	return nil
}
