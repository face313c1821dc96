package strictjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type Embedded struct {
	E int `json:"e"`
}

type hidden struct {
	H int `json:"h"`
}

type withEmbedded struct {
	*Embedded
	hidden
	Name string `json:"name"`
}

// TestProbeErrorsNameWhere: every rejection names where the bad key is (line
// and column, and its path below the top-level value); before, a duplicate
// said only `key "Min" given twice` and an unknown key `json: unknown field
// "x"`, with nothing to find it by in a saved state of thousands of lines.
func TestProbeErrorsNameWhere(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"duplicate top":          {`{"name":"x",` + "\n" + `"name":"y"}`, `line 2:1: key "name" given twice`},
		"duplicate nested":       {`{"in":{"a":1, "a":2}}`, `line 1:15, in: key "a" given twice`},
		"duplicate in array":     {`{"in":{"b":[{"c":1},{"c":1,"c":2}]}}`, `line 1:28, in.b[1]: key "c" given twice`},
		"duplicate map key":      {`{"map":{"k":{},"k":{}}}`, `line 1:16, map: key "k" given twice`},
		"wrong case in map elem": {`{"map":{"k":{"A":1}}}`, `line 1:14, map["k"]: key "A" must be spelled "a"`},
		"unknown nested":         {`{"in":{"a":1,` + "\r\n" + `  "x":2}}`, `line 2:3, in: unknown key "x"`},
		"unknown top":            {`{"nom":"x"}`, `line 1:2: unknown key "nom"`},
		"trailing":               {`{"name":"x"}` + "\n" + ` {}`, `line 2:2: unexpected data`},
		"wrong type":             {`{"in":{"a":"one"}}`, `line 1:`},
		"out of range":           {`{"in":{"a":1e30}}`, `line 1:`},
	} {
		t.Run(name, func(t *testing.T) {
			var o outer
			err := Decode([]byte(c.in), &o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestProbeEmbedded: fields promoted from embedded structs (a pointer to
// one, an unexported one) are known keys, as they are to encoding/json.
func TestProbeEmbedded(t *testing.T) {
	var w withEmbedded
	require.NoError(t, Decode([]byte(`{"e":1,"h":2,"name":"n"}`), &w))
	assert.Equal(t, 1, w.E)
	assert.Equal(t, 2, w.H)
	assert.Error(t, Decode([]byte(`{"e":1,"e":2}`), &w))
	assert.ErrorContains(t, Decode([]byte(`{"E":1}`), &w), `must be spelled "e"`)
	assert.ErrorContains(t, Decode([]byte(`{"z":1}`), &w), `unknown key "z"`)
}

// TestProbeNullValues: null where the Go type holds no null (a number, a
// string, a struct, a map's struct value) was left at the zero value by
// encoding/json, so {"c":null} read as 0; it is an error naming where.
// Null stays the absence of a pointer, slice or map.
func TestProbeNullValues(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":null}`:                     `line 1:9, name: null for a string`,
		`{"in":{"a":null}}`:                 `line 1:12, in.a: null for a int`,
		`{"in":{"b":[{"c":1},{"c":null}]}}`: `in.b[1].c: null for a float64`,
		`{"map":{"k":null}}`:                `map["k"]: null for a strictjson.inner`,
		`{"in":{"b":[null]}}`:               `in.b[0]: null for a struct`,
		`{"Plain":null,"name":"x"}`:         `Plain: null for a int`,
	} {
		var o outer
		err := Decode([]byte(in), &o)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
	for _, in := range []string{`{"in":null}`, `{"map":null}`, `{"in":{"b":null}}`, `null`, `{"name":"x","in":{"a":1,"b":[]}}`} {
		var o outer
		assert.NoError(t, Decode([]byte(in), &o), in)
	}
}
