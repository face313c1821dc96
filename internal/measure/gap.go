package measure

import "math"

// RelGap is the relative gap of a solution with the given objective to a
// bound of the optimum, signed so that it is ≥ 0 whenever the bound is
// valid: (bound − objective)/|bound| when maximising (the bound is above),
// (objective − bound)/|bound| when minimising (the bound is below). A
// negative gap means a bound on the wrong side of the objective: a bug.
// It is +Inf when the bound is infinite or not a number (no bound: e.g. a
// goodput matrix cut short by the deadline bounds nothing) and 0 when
// objective and bound are equal (both zero included).
func RelGap(objective, bound float64, minimize bool) float64 {
	if math.IsInf(bound, 0) || math.IsNaN(bound) || math.IsNaN(objective) {
		return math.Inf(1)
	}
	d := bound - objective
	if minimize {
		d = -d
	}
	if d == 0 {
		return 0
	}
	return d / math.Abs(bound)
}
