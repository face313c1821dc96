package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	A int `json:"a"`
	B []struct {
		C float64 `json:"c"`
	} `json:"b"`
}

type outer struct {
	Name  string           `json:"name"`
	In    *inner           `json:"in,omitempty"`
	Map   map[string]inner `json:"map"`
	Plain int
}

func TestDecode(t *testing.T) {
	var o outer
	require.NoError(t, Decode([]byte(`{"name":"x","in":{"a":1,"b":[{"c":2}]},"map":{"k":{"a":3},"K":{"a":4}},"Plain":5}`), &o))
	assert.Equal(t, 2.0, o.In.B[0].C)
	assert.Equal(t, 4, o.Map["K"].A, "map keys are data: K and k are two keys")
	for name, in := range map[string]string{
		"duplicate top":       `{"name":"x","name":"y"}`,
		"duplicate nested":    `{"in":{"a":1,"a":2}}`,
		"duplicate in array":  `{"in":{"b":[{"c":1,"c":2}]}}`,
		"duplicate map key":   `{"map":{"k":{},"k":{}}}`,
		"wrong case top":      `{"Name":"x"}`,
		"wrong case nested":   `{"in":{"A":1}}`,
		"wrong case in map":   `{"map":{"k":{"A":1}}}`,
		"wrong case untagged": `{"plain":1}`,
		"unknown":             `{"nom":"x"}`,
		"trailing":            `{"name":"x"} {}`,
		"trailing bracket":    `{"name":"x"}]`,
		"malformed":           `{"name":`,
	} {
		var o outer
		assert.Error(t, Decode([]byte(in), &o), name)
	}
}

// TestMalformedEnds: malformed JSON inside arrays and objects (a bare NaN,
// an unquoted word, a lone colon) is left to the decoder, which rejects it;
// CheckKeys returns at the bad token instead of looping on it (it looped
// for ever on `[{"stepTime":NaN}]`, a profile annotation in the kube e2e).
func TestMalformedEnds(t *testing.T) {
	for _, in := range []string{
		`[{"a":NaN}]`, `[NaN]`, `{"b":[1,NaN]}`, `{"map":{"x":{"a":Infinity}}}`, `[[[tru]]]`, `{"a"::1}`, `[1,,2]`, `{"a":1,,"b":2}`,
	} {
		assert.NoError(t, CheckKeys([]byte(in), reflect.TypeFor[*outer]()), in)
		var v outer
		assert.Error(t, Decode([]byte(in), &v), in)
	}
}

// FuzzDecode: on any input Decode returns (no hang, no panic), and what it
// accepts encoding/json with DisallowUnknownFields accepts too.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"name":"x","in":{"a":1,"b":[{"c":2}]}}`, `[{"a":NaN}]`, `{"name":"x","name":"y"}`, `{"Name":"x"}`, `{"map":{"k":{"a":1}}} 1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v outer
		if Decode(data, &v) != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var w outer
		require.NoError(t, dec.Decode(&w))
	})
}
