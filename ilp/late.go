package ilp

import (
	"math"
)

// This file holds what Solve does when its deadline leaves no time for the
// whole input: the plan of a solve whose validation was cut short, and the
// admission of the jobs a model cut short does not hold.

// fallback is the Solution of a solve whose deadline passed before p was
// validated (sc.checked < len(p.Jobs)): the pins, the warm start where it
// fits, and queued jobs admitted greedily on the capacity left until the
// clock's greedyEnd (validating each job's options as it is considered).
// Its Bound is infinite: nothing is known of the options not read.
func fallback(p *Problem, warm []int, sc scan, clk *clock) (Solution, error) {
	assign := make([]int, len(p.Jobs))
	for i, j := range p.Jobs {
		assign[i] = j.Pin
	}
	if _, err := admitLate(p, assign, 0, warm, sc.checked, clk, nil); err != nil {
		return unsolved, err
	}
	trace("fallback.admit")
	bound := math.Inf(1)
	if p.Sense == Minimize {
		bound = math.Inf(-1)
	}
	return Solution{Status: Feasible, Assignment: assign, Objective: p.Objective(assign), Bound: bound}, nil
}

// admitLate completes assign, a feasible assignment, for the free jobs from
// index from on that it leaves unallocated: first each one's warm-start
// option (warm, one entry per job, else ignored) where it is better than
// staying unallocated and fits what assign leaves, in job order (all at
// once when they fit together: see admitWarm); then, until the clock's
// greedyEnd (no limit with a nil clock), each remaining job's most
// profitable option that fits, in job order. Options of jobs from checked
// on have not been validated: each job's are before it is considered, and
// the first invalid one is returned as the error. It returns the profit
// (±(Value − Unallocated)) the admitted jobs add. rows, when non-nil, is
// the model's rows and the capacity assign leaves on each (nil: computed
// here).
func admitLate(p *Problem, assign []int, from int, warm []int, checked int, clk *clock, rows *lateRows) (float64, error) {
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	if rows == nil {
		rows = newLateRows(p, assign)
	}
	trace("admit.setup")
	var budget lateBudget
	gain := 0.0
	if len(warm) == len(p.Jobs) {
		gain = admitWarm(p, assign, from, warm, clk, rows, &budget)
	}
	trace("admit.warm")
	if !rows.lists(p, clk) {
		// no time for the per-job lists of the listed quotas (millions
		// of entries): no option can be tested
		return gain, nil
	}
	take := func(i, k int) float64 {
		o := p.Jobs[i].Options[k]
		rows.take(p, i, o)
		assign[i] = k
		return sign * (o.Value - p.Jobs[i].Unallocated)
	}
	for i := from; i < len(p.Jobs); i++ {
		j := &p.Jobs[i]
		// the jobs already placed (pinned, or kept by the warm start) and
		// those with nothing to offer cost nothing and count toward no
		// budget: a round out of time considers its first greedyMinJobs
		// jobs that may be admitted, wherever they stand among the others
		if j.Pin >= 0 || assign[i] >= 0 || len(j.Options) == 0 {
			continue
		}
		if budget.job(clk) {
			break
		}
		bk, bp, stop := -1, 0.0, false
		for k, o := range j.Options {
			if i >= checked {
				if err := p.optionError(i, k); err != nil {
					return gain, err
				}
			}
			work := 1
			pr := sign * (o.Value - j.Unallocated)
			if (pr > bp || pr == bp && bk >= 0 && o.GPUs < j.Options[bk].GPUs) && pr > 0 {
				ok, w := rows.fits(p, i, o)
				if ok {
					bk, bp = k, pr
				}
				work += w
			}
			// out of time within a job (of 10^5 options, or under
			// thousands of quotas): the best option tested so far
			if stop = budget.spend(clk, work); stop {
				break
			}
		}
		if bk >= 0 {
			gain += take(i, bk)
		}
		if stop {
			break
		}
	}
	trace("admit.greedy")
	return gain, nil
}

// admitWarm gives each free job from index from on that assign leaves
// unallocated its warm-start option where it is better than staying
// unallocated and fits, in job order, and returns the profit they add.
// When all those options fit together on what assign leaves (the warm
// start is feasible), they are kept at once: checking that is linear in
// the jobs and the quotas' entries (lateRows.usage), whatever the clock.
// Otherwise each is tested in turn until the clock's greedyEnd (budget).
func admitWarm(p *Problem, assign []int, from int, warm []int, clk *clock, rows *lateRows, budget *lateBudget) float64 {
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	keep := func(i int) int {
		j := &p.Jobs[i]
		k := warmOf(warm, i, len(j.Options))
		if i < from || j.Pin >= 0 || k < 0 || assign[i] >= 0 || !(sign*(j.Options[k].Value-j.Unallocated) > 0) {
			return -1
		}
		return k
	}
	used := rows.usage(p, len(p.Jobs), keep)
	all := true
	for r, u := range used {
		if u > rows.left[r] {
			all = false
			break
		}
	}
	gain := 0.0
	if !all && !rows.lists(p, clk) {
		return 0
	}
	if all {
		for i := from; i < len(p.Jobs); i++ {
			if k := keep(i); k >= 0 {
				assign[i] = k
				gain += sign * (p.Jobs[i].Options[k].Value - p.Jobs[i].Unallocated)
			}
		}
		for r, u := range used {
			rows.left[r] -= u
		}
		return gain
	}
	for i := from; i < len(p.Jobs); i++ {
		k := keep(i)
		if k < 0 {
			continue
		}
		o := p.Jobs[i].Options[k]
		ok, w := rows.fits(p, i, o)
		if ok {
			rows.take(p, i, o)
			assign[i] = k
			gain += sign * (o.Value - p.Jobs[i].Unallocated)
		}
		if budget.spend(clk, w) {
			break
		}
	}
	return gain
}
