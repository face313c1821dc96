package ilp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbeJSONNullCounts: a null capacity or reservation was read as 0
// (encoding/json's zero for a null map value), silently removing a type's
// GPUs; like a null option value it is an error naming the line and key.
func TestProbeJSONNullCounts(t *testing.T) {
	const ok = `{"sense":"max","unallocated":-1,"capacity":{"a":4},"jobs":[{"id":"j","options":[{"type":"a","gpus":2,"value":1}]}]}`
	for name, c := range map[string]struct{ in, want string }{
		"capacity null":        {strings.Replace(ok, `{"a":4}`, `{"a":null}`, 1), `line 1:45: key "a" is null`},
		"second type null":     {strings.Replace(ok, `{"a":4}`, `{"a":4,"b": null}`, 1), `key "b" is null`},
		"reserved null":        {strings.Replace(ok, `"capacity"`, `"reserved":{"a":null},"capacity"`, 1), `key "a" is null`},
		"capacity null line 3": {strings.Replace(ok, `{"a":4}`, "{\n\"a\":4,\n\"b\"\t:\r\nnull}", 1), `line 3:1: key "b" is null`},
	} {
		t.Run(name, func(t *testing.T) {
			p, _, err := ilp.ParseJSON([]byte(c.in))
			require.ErrorIs(t, err, ilp.ErrInvalidInput, "accepted %+v", p)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
