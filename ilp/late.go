package ilp

import (
	"maps"
	"math"
	"slices"
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
// staying unallocated and fits what assign leaves, in job order; then,
// until the clock's greedyEnd (no limit with a nil clock), each remaining
// job's most profitable option that fits, in job order. Options of jobs
// from checked on have not been validated: each job's are before it is
// considered, and the first invalid one is returned as the error. It
// returns the profit (±(Value − Unallocated)) the admitted jobs add.
// rows, when non-nil, is the model's: the rows each job uses and the
// capacity assign leaves on each (nil: computed here).
func admitLate(p *Problem, assign []int, from int, warm []int, checked int, clk *clock, rows *lateRows) (float64, error) {
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	if rows == nil {
		rows = newLateRows(p, assign)
	}
	typeRow, left, jobQuotas := rows.typeRow, rows.left, rows.jobQuotas
	nt := len(typeRow)
	var buf []int
	rowsOf := func(i int, o Option) []int {
		buf = append(buf[:0], typeRow[o.Type])
		for _, qi := range jobQuotas[i] {
			if p.Quotas[qi].Counts(o) {
				buf = append(buf, nt+qi)
			}
		}
		return buf
	}
	fits := func(i int, o Option) bool {
		for _, r := range rowsOf(i, o) {
			if o.GPUs > left[r] {
				return false
			}
		}
		return true
	}
	take := func(i, k int) float64 {
		o := p.Jobs[i].Options[k]
		for _, r := range rowsOf(i, o) {
			left[r] -= o.GPUs
		}
		assign[i] = k
		return sign * (o.Value - p.Jobs[i].Unallocated)
	}
	trace("admit.setup")
	gain := 0.0
	if len(warm) == len(p.Jobs) {
		for i := from; i < len(p.Jobs); i++ {
			j := &p.Jobs[i]
			k := warmOf(warm, i, len(j.Options))
			if j.Pin < 0 && k >= 0 && assign[i] < 0 && sign*(j.Options[k].Value-j.Unallocated) > 0 && fits(i, j.Options[k]) {
				gain += take(i, k)
			}
		}
	}
	var budget lateBudget
	for i := from; i < len(p.Jobs); i++ {
		j := &p.Jobs[i]
		// the jobs already placed (pinned, or kept by the warm start) and
		// those with nothing to offer cost nothing and count toward no
		// budget: a round out of time considers its first greedyMinJobs
		// jobs that may be admitted, wherever they stand among the others
		if j.Pin >= 0 || assign[i] >= 0 || len(j.Options) == 0 {
			continue
		}
		if budget.over(clk, 1+len(j.Options)*(1+len(jobQuotas[i]))) {
			break
		}
		bk, bp := -1, 0.0
		for k, o := range j.Options {
			if i >= checked {
				if err := p.optionError(i, k); err != nil {
					return gain, err
				}
			}
			pr := sign * (o.Value - j.Unallocated)
			if (pr > bp || pr == bp && bk >= 0 && o.GPUs < j.Options[bk].GPUs) && pr > 0 && fits(i, o) {
				bk, bp = k, pr
			}
		}
		if bk >= 0 {
			gain += take(i, bk)
		}
	}
	trace("admit.greedy")
	return gain, nil
}

// lateRows is what admitLate needs of the coupling rows: the row of each
// GPU type (types sorted, then one row per quota), the quotas covering
// each job and the capacity left on each row.
type lateRows struct {
	typeRow   map[string]int
	jobQuotas [][]int
	left      []int
}

// newLateRows computes the rows of p and the capacity assign leaves.
func newLateRows(p *Problem, assign []int) *lateRows {
	types := slices.Sorted(maps.Keys(p.Capacity))
	rows := &lateRows{typeRow: make(map[string]int, len(types)), jobQuotas: jobQuotaLists(p), left: make([]int, len(types)+len(p.Quotas))}
	for r, t := range types {
		rows.typeRow[t] = r
		rows.left[r] = p.Capacity[t] - p.Reserved[t]
	}
	for qi := range p.Quotas {
		rows.left[len(types)+qi] = p.Quotas[qi].Limit
	}
	for i, k := range assign {
		if k < 0 {
			continue
		}
		o := p.Jobs[i].Options[k]
		rows.left[rows.typeRow[o.Type]] -= o.GPUs
		for _, qi := range rows.jobQuotas[i] {
			if p.Quotas[qi].Counts(o) {
				rows.left[len(types)+qi] -= o.GPUs
			}
		}
	}
	return rows
}
