// Package strictjson decodes JSON as encoding/json does with
// DisallowUnknownFields, and also rejects what encoding/json would silently
// misread: a key given twice in one object (it keeps the last value), a key
// whose case differs from the field's JSON name (it matches keys
// case-insensitively) and data after the value.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
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
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// maxDepth bounds the nesting CheckKeys follows; deeper input is left to
// the decoder.
const maxDepth = 32

// CheckKeys walks the JSON value data along the Go type t it decodes into
// and rejects duplicate keys in any object and, in objects decoded into a
// struct, keys that match a field's JSON name only case-insensitively.
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
	var walk func(t reflect.Type, depth int) error
	walk = func(t reflect.Type, depth int) error {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		tok, err := dec.Token()
		if err != nil {
			return errMalformed
		}
		if depth > maxDepth {
			return nil
		}
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			elem = t.Elem()
		}
		switch tok {
		case json.Delim('['):
			for dec.More() {
				if err := walk(elem, depth+1); err != nil {
					return err
				}
			}
			_, _ = dec.Token()
		case json.Delim('{'):
			names := fieldNames(t)
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return errMalformed
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("key %q given twice", k)
				}
				seen[k] = true
				child := elem
				if names != nil {
					ft, ok := names[k]
					if !ok {
						for n := range names {
							if strings.EqualFold(n, k) {
								return fmt.Errorf("key %q must be spelled %q (keys are case-sensitive)", k, n)
							}
						}
					}
					child = ft
				}
				if err := walk(child, depth+1); err != nil {
					return err
				}
			}
			_, _ = dec.Token()
		}
		return nil
	}
	return walk(t, 0)
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
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			if f.Anonymous && f.Type.Kind() == reflect.Struct && tag == "" {
				for n, ft := range fieldNames(f.Type) {
					names[n] = ft
				}
				continue
			}
			name = f.Name
		}
		names[name] = f.Type
	}
	return names
}
