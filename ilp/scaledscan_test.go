package ilp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScaledScanTwin: the scan Solve derives for the scaled copy of a
// problem whose values are far from 1 (scaledScan) is the scan a second
// validation of that copy returns (its naive twin), on random problems with
// and without a grid, values multiplied by factors from 2^-300 to 2^300 and
// odd multiples of those.
func TestScaledScanTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	scaledCases := 0
	for c := range 400 {
		p := randomProblem(rng, 1+rng.IntN(40), 6)
		if rng.IntN(3) == 0 {
			p.Grid = 0
		}
		f := math.Ldexp(1+float64(rng.IntN(3))*0.5, rng.IntN(601)-300)
		if p.Grid > 0 && f != math.Trunc(f) && f > 1 {
			f = math.Trunc(f)
		}
		p.Grid *= f
		for i := range p.Jobs {
			p.Jobs[i].Unallocated *= f
			for k := range p.Jobs[i].Options {
				p.Jobs[i].Options[k].Value *= f
			}
		}
		sc, err := p.validate(nil, nil)
		if err != nil {
			continue // off the grid after the multiplication: not this test's concern
		}
		e, top := valueExponent(p, sc)
		if e == 0 {
			continue
		}
		q, _ := scaled(p, &Settings{}, -e)
		if q == nil {
			continue
		}
		want, err := q.validate(nil, nil)
		require.NoError(t, err, "case %d", c)
		require.Equal(t, want, scaledScan(sc, top, -e), fmt.Sprintf("case %d: factor %g, exponent %d", c, f, e))
		scaledCases++
	}
	require.Greater(t, scaledCases, 200, "too few problems took the scaled path")
}
