package ilp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbe5JSONRejects: inputs of the classes issue 10 names (duplicate
// keys, keys in another case or spelled through escapes and Unicode case
// folding, data after the object, numbers out of range, values of the wrong
// JSON type, a byte-order mark) are each an ErrInvalidInput naming the place
// (line and column, or the field), on the fast path and on encoding/json's
// alike; none is read as another value.
func TestProbe5JSONRejects(t *testing.T) {
	const ok = `{"sense":"max","unallocated":-1,"capacity":{"a":4},"jobs":[{"id":"j","options":[{"type":"a","gpus":2,"value":1}]}],"quotas":[{"name":"q","jobs":["j"],"limit":4}]}`
	_, _, err := ilp.ParseJSON([]byte(ok))
	require.NoError(t, err)
	rep := func(old, new string) string {
		require.Contains(t, ok, old)
		return strings.Replace(ok, old, new, 1)
	}
	cases := []struct{ name, in, want string }{
		{"dup top key", rep(`"sense":"max"`, `"sense":"max","sense":"min"`), `duplicate key "sense"`},
		{"dup id", rep(`"id":"j"`, `"id":"j","id":"k"`), `duplicate key "id"`},
		{"dup gpus", rep(`"gpus":2`, `"gpus":2,"gpus":4`), `duplicate key "gpus"`},
		{"dup limit", rep(`"limit":4`, `"limit":4,"limit":0`), `duplicate key "limit"`},
		{"dup capacity type", rep(`{"a":4}`, `{"a":4,"a":0}`), `duplicate key "a"`},
		{"dup through escape", rep(`"sense":"max"`, `"sense":"max","\u0073ense":"min"`), `duplicate key "sense"`},
		{"dup key in quota", rep(`"name":"q"`, `"name":"q","name":"r"`), `duplicate key "name"`},
		{"wrong case top", rep(`"sense"`, `"Sense"`), `"Sense" must be spelled "sense"`},
		{"wrong case option", rep(`"gpus"`, `"GPUs"`), `must be spelled "gpus"`},
		{"wrong case quota", rep(`"limit"`, `"Limit"`), `must be spelled "limit"`},
		{"long s folds to s", rep(`"sense"`, `"ſense"`), `must be spelled "sense"`},
		{"long s in a quota key", rep(`"limit":4`, `"limit":4,"min_gpuſ":1`), `must be spelled "min_gpus"`},
		{"kelvin sign folds to k", strings.Replace(ok, `"gpus":2`, `"gpus":2,"\u212a":1`, 1), `"K"`},
		{"unknown key", rep(`"limit":4`, `"limit":4,"max":3`), `"max"`},
		{"trailing object", ok + `{}`, `after the JSON object`},
		{"trailing garbage", ok + ` x`, `line 1:`},
		{"trailing bracket", ok + `]`, `line 1:`},
		{"two objects on two lines", ok + "\n" + ok, `line 2:`},
		{"BOM", "\ufeff" + ok, `line 1:`},
		{"gpus above int", rep(`"gpus":2`, `"gpus":9223372036854775808`), `gpus`},
		{"gpus fraction", rep(`"gpus":2`, `"gpus":2.5`), `gpus`},
		{"gpus exponent", rep(`"gpus":2`, `"gpus":2e0`), `gpus`},
		{"gpus string", rep(`"gpus":2`, `"gpus":"2"`), `gpus`},
		{"gpus negative", rep(`"gpus":2`, `"gpus":-2`), `gpus`},
		{"gpus zero", rep(`"gpus":2`, `"gpus":0`), `gpus`},
		{"value overflows float", rep(`"value":1`, `"value":1e309`), `value`},
		{"value huge", rep(`"value":1`, `"value":1e300`), `value`},
		{"unallocated overflows", rep(`"unallocated":-1`, `"unallocated":-1e400`), `unallocated`},
		{"capacity above MaxGPUs", rep(`{"a":4}`, `{"a":1125899906842625}`), `capacity`},
		{"capacity sum overflows", rep(`{"a":4}`, `{"a":4,"b":9223372036854775807,"c":9223372036854775807}`), `capacity`},
		{"capacity negative", rep(`{"a":4}`, `{"a":-4}`), `capacity`},
		{"reserved above capacity", rep(`"capacity"`, `"reserved":{"a":5},"capacity"`), `reserved`},
		{"limit above int", rep(`"limit":4`, `"limit":1e20`), `limit`},
		{"limit negative", rep(`"limit":4`, `"limit":-1`), `limit`},
		{"min_gpus negative", rep(`"limit":4`, `"limit":4,"min_gpus":-1`), `min_gpus`},
		{"pin above int", rep(`"id":"j"`, `"id":"j","pin":9223372036854775808`), `pin`},
		{"pin out of options", rep(`"id":"j"`, `"id":"j","pin":1`), `pin`},
		{"pin negative", rep(`"id":"j"`, `"id":"j","pin":-1`), `pin`},
		{"grid negative", rep(`"sense"`, `"grid":-0.5,"sense"`), `grid`},
		{"grid overflow", rep(`"sense"`, `"grid":1e999,"sense"`), `grid`},
		{"grid NaN string", rep(`"sense"`, `"grid":"NaN","sense"`), `grid`},
		{"optimum overflow", rep(`"sense"`, `"optimum":1e999,"sense"`), `optimum`},
		{"sense wrong case value", rep(`"sense":"max"`, `"sense":"MAX"`), `sense`},
		{"all_jobs and jobs", rep(`"limit":4`, `"limit":4,"all_jobs":true`), `quotas[0]`},
		{"quota unknown job", rep(`"jobs":["j"]`, `"jobs":["k"]`), `unknown job "k"`},
		{"quota job twice", rep(`"jobs":["j"]`, `"jobs":["j","j"]`), `quotas[0]`},
		{"quota type unknown", rep(`"limit":4`, `"limit":4,"type":"b"`), `quotas[0]`},
		{"option type unknown", rep(`"type":"a"`, `"type":"A"`), `"A"`},
		{"empty id", rep(`"id":"j"`, `"id":""`), `unknown job "j"`},
		{"id null", strings.Replace(rep(`"id":"j"`, `"id":null`), `"jobs":["j"]`, `"all_jobs":true`, 1), `jobs[0]`},
		{"options object", rep(`"options":[{"type":"a","gpus":2,"value":1}]`, `"options":{"type":"a","gpus":2,"value":1}`), `options`},
		{"jobs object", `{"sense":"max","unallocated":-1,"capacity":{"a":4},"jobs":{}}`, `jobs`},
		{"top array", `[` + ok + `]`, `top level`},
		{"empty", ``, `empty`},
		{"only spaces", " \n\t ", `empty`},
		{"truncated", ok[:len(ok)-5], `truncated`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _, err := ilp.ParseJSON([]byte(c.in))
			require.ErrorIs(t, err, ilp.ErrInvalidInput, "accepted %+v", p)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			p2, _, err2 := ilp.ReadJSON(strings.NewReader(c.in))
			require.Error(t, err2, "ReadJSON accepted %+v", p2)
			assert.Equal(t, err.Error(), err2.Error())
		})
	}
}
