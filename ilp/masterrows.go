package ilp

import (
	"cmp"
	"slices"
)

// masterMaxRows is the most multipliers the cutting-plane method's master
// program moves (minimizeFn). The master is a dense simplex tableau of
// (cuts + rows) × (2 rows + cuts) entries, built whole at every iteration
// before it looks at the clock: with 5,000 quota rows (one per job) that
// was tens of MB per iteration and 30-45 ms past a 10-20 ms deadline.
// Sia's rounds have a few types and quotas, far fewer.
const masterMaxRows = 128

// masterRows returns the masterMaxRows rows of act whose subgradient sg is
// the most negative (the rows most over-used at the first multipliers;
// ties in row order), in row order. The other multipliers keep their
// starting values: any multipliers give a valid bound, so the dual stays a
// bound, only a weaker one.
func masterRows(act []int, sg []float64) []int {
	if len(act) <= masterMaxRows {
		return act
	}
	sel := slices.Clone(act)
	slices.SortStableFunc(sel, func(a, b int) int { return cmp.Compare(sg[a], sg[b]) })
	sel = sel[:masterMaxRows]
	slices.Sort(sel)
	return sel
}
