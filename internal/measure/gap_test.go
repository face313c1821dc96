package measure

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRelGap: the gap is ≥ 0 for a valid bound in either sense, with
// negative objectives too (p < 0 minimises sums of negative powers), and
// negative only for a bound on the wrong side; no bound is +Inf.
func TestRelGap(t *testing.T) {
	for _, c := range []struct {
		name       string
		obj, bound float64
		minimize   bool
		want       float64
	}{
		{"max positive", 99, 100, false, 0.01},
		{"max negative values", -101, -100, false, 0.01},
		{"min positive", 101, 100, true, 0.01},
		{"min negative values", -99, -100, true, 0.01},
		{"min bound above objective: invalid", 100, 101, true, -1.0 / 101},
		{"max bound below objective: invalid", 101, 100, false, -0.01},
		{"equal", -3, -3, true, 0},
		{"both zero", 0, 0, false, 0},
		{"no bound (max)", 5, math.Inf(1), false, math.Inf(1)},
		{"no bound (min)", 5, math.Inf(-1), true, math.Inf(1)},
		{"NaN", math.NaN(), 1, true, math.Inf(1)},
	} {
		assert.InDelta(t, c.want, RelGap(c.obj, c.bound, c.minimize), 1e-12, c.name)
	}
}
