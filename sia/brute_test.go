package sia

import (
	"math"

	"github.com/sia-sched/sia/ilp"
)

// bruteForce enumerates every assignment of the matrix (small instances
// only) and returns the best objective and one optimal choice. It is the
// naive twin of Solve.
func bruteForce(m *Matrix) (float64, []int) {
	n := len(m.Rows)
	choice := make([]int, n)
	best := math.Inf(1)
	if m.Sense == ilp.Maximize {
		best = math.Inf(-1)
	}
	var bestChoice []int
	used := map[string]int{}
	var rec func(i int, obj float64)
	rec = func(i int, obj float64) {
		if i == n {
			for _, q := range m.Quotas {
				used := 0
				members := q.Jobs
				if q.AllJobs { // the placement rows cover every job
					members = make([]int, n)
					for r := range members {
						members[r] = r
					}
				}
				for _, r := range members {
					if c := choice[r]; c >= 0 && q.Counts(ilp.Option{Type: m.Rows[r].Entries[c].Config.Type, GPUs: m.Rows[r].Entries[c].Config.GPUs}) {
						used += m.Rows[r].Entries[c].Config.GPUs
					}
				}
				if used > q.Limit {
					return
				}
			}
			if (m.Sense == ilp.Minimize && obj < best-1e-12) || (m.Sense == ilp.Maximize && obj > best+1e-12) {
				best = obj
				bestChoice = append([]int(nil), choice...)
			}
			return
		}
		r := &m.Rows[i]
		if r.Pin < 0 {
			choice[i] = -1
			rec(i+1, obj+r.Unallocated)
		}
		for k := range r.Entries {
			e := &r.Entries[k]
			if e.Dropped || (r.Pin >= 0 && k != r.Pin) {
				continue
			}
			t := e.Config.Type
			if used[t]+e.Config.GPUs > m.Capacity[t]-m.Reserved[t] {
				continue
			}
			used[t] += e.Config.GPUs
			choice[i] = k
			rec(i+1, obj+e.Value)
			used[t] -= e.Config.GPUs
		}
	}
	rec(0, 0)
	return best, bestChoice
}
