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
// bound, only a weaker one. act is in row order. The rows are selected
// with a heap of the masterMaxRows kept (the last of them on top), in time
// linear in act: a stable sort of 5,000 quota rows took 0.3-0.5 ms that
// nothing interrupts.
func masterRows(act []int, sg []float64) []int {
	if len(act) <= masterMaxRows {
		return act
	}
	// after reports whether row a comes after row b: sg larger (cmp.Compare's
	// order, NaN first), or equal and a later row
	after := func(a, b int) bool { return cmp.Less(sg[b], sg[a]) || !cmp.Less(sg[a], sg[b]) && a > b }
	top := make([]int, 0, masterMaxRows)
	for _, r := range act {
		if len(top) < masterMaxRows {
			top = append(top, r)
			for i := len(top) - 1; i > 0; { // up
				p := (i - 1) / 2
				if !after(top[i], top[p]) {
					break
				}
				top[i], top[p] = top[p], top[i]
				i = p
			}
			continue
		}
		if !after(top[0], r) {
			continue // no better than the last kept
		}
		top[0] = r
		for i := 0; ; { // down
			c := 2*i + 1
			if c >= len(top) {
				break
			}
			if d := c + 1; d < len(top) && after(top[d], top[c]) {
				c = d
			}
			if !after(top[c], top[i]) {
				break
			}
			top[i], top[c] = top[c], top[i]
			i = c
		}
	}
	slices.Sort(top)
	return top
}
