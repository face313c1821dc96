package ilp

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMasterRowsTwin: masterRows selects the rows a stable sort by
// subgradient would keep first (ties in row order), returned in row
// order, on random active rows with ties, zeros of both signs, infinities
// and NaN.
func TestMasterRowsTwin(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	rng := rand.New(rand.NewPCG(11, 3))
	for c := range 300 {
		n := rng.IntN(3 * masterMaxRows)
		if c%30 == 0 {
			n = 5002
		}
		sg := make([]float64, n)
		var act []int
		for r := range sg {
			sg[r] = float64(rng.IntN(1+rng.IntN(40))) - 20
			if rng.IntN(25) == 0 {
				sg[r] = special[rng.IntN(len(special))]
			}
			if rng.IntN(5) > 0 {
				act = append(act, r)
			}
		}
		want := slices.Clone(act)
		if len(want) > masterMaxRows {
			slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(sg[a], sg[b]) })
			want = want[:masterMaxRows]
			slices.Sort(want)
		}
		require.Equal(t, want, masterRows(slices.Clone(act), sg), "case %d: %d rows, %d active", c, n, len(act))
	}
}
