package ilp

import (
	"time"
)

// SteppedSolve runs Solve on a clock that advances by step at every look
// (the solver's now), with a deadline d after the call on that clock (d <=
// 0: an expired one). A step of the order of the allowance stands for a
// process descheduled between two looks at the clock: every step of a
// solve can be cut at every point, deterministically, whatever the load.
// It also returns how many times the solver looked at the clock.
func SteppedSolve(p *Problem, d, step time.Duration, s *Settings) (Solution, int, error) {
	base := time.Unix(1e9, 0)
	t, looks := base, 0
	clock := func() time.Time {
		looks++
		t = t.Add(step)
		return t
	}
	now = clock
	defer func() { now = time.Now }()
	sol, err := Solve(&cpuContext{deadline: base.Add(d), now: clock}, p, s)
	return sol, looks, err
}
