package pollux

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDedupMatchesMap checks the duplicate set against a map of the states'
// bytes, through resets and growth beyond the announced size.
func TestDedupMatchesMap(t *testing.T) {
	r := &wyrand{s: 11}
	var d dedup
	for trial := 0; trial < 50; trial++ {
		n := r.intN(300)
		size := 1 + r.intN(40)
		d.reset(r.intN(n + 1)) // sometimes far too small: the table grows
		want := map[string]bool{}
		for i := 0; i < n; i++ {
			x := make([]int8, size)
			for k := range x {
				x[k] = int8(r.intN(2)) // few distinct states: many duplicates
			}
			key := string(int8Bytes(x))
			require.Equal(t, !want[key], d.add(x), "trial %d, state %d", trial, i)
			want[key] = true
		}
		require.Len(t, d.keys, len(want), "trial %d", trial)
	}
}
