package ilp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbe11JSONUnderflow: a nonzero number in the JSON problem format
// whose magnitude is below the smallest float64 (1e-400) was read as 0 by
// both decoders (encoding/json and the fast path round it silently): a
// grid of 1e-400 became "no grid", an option value of 1e-400 became 0.
// It is an error naming the line; 0, -0, 0e-400 and subnormals (5e-324)
// still read as themselves.
func TestProbe11JSONUnderflow(t *testing.T) {
	doc := func(grid, value string) string {
		return `{"sense":"max","unallocated":0,"capacity":{"a":4},"grid":` + grid + `,
"jobs":[{"id":"j","options":[{"type":"a","gpus":1,"value":` + value + `}]}]}`
	}
	for _, c := range []struct {
		grid, value string
		line        string
	}{
		{"0", "1e-400", "line 2:"},
		{"0", "-1E-400", "line 2:"},
		{"0", "0.000000000000000000000000000000000000001e-300", "line 2:"},
		{"1e-400", "1", "line 1:"},
		{"2e-324", "1", "line 1:"},
	} {
		_, _, err := ilp.ParseJSON([]byte(doc(c.grid, c.value)))
		require.ErrorIs(t, err, ilp.ErrInvalidInput, "grid %s value %s", c.grid, c.value)
		assert.Contains(t, err.Error(), "underflows", c.value)
		assert.Contains(t, err.Error(), c.line, c.value)
	}
	for _, v := range []string{"0", "-0", "0e-400", "0.0e5", "5e-324", "1e-320"} {
		p, _, err := ilp.ParseJSON([]byte(doc("0", v)))
		require.NoError(t, err, v)
		assert.NotNil(t, p, v)
	}
	_, _, err := ilp.ReadJSON(strings.NewReader(doc("0", "1e-400")))
	require.ErrorIs(t, err, ilp.ErrInvalidInput)
}
