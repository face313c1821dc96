package sia

import (
	"math"

	"github.com/sia-sched/sia/ilp"
)

// bruteForce enumerates every assignment of the matrix (small instances
// only) and returns the best objective and one optimal choice. It is the
// naive twin of Solve.
func bruteForce(m *goodputMatrix) (float64, []int) {
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
					if c := choice[r]; c >= 0 && q.Counts(ilp.Option{Type: m.Rows[r].Entries[c].Config.Pool(), GPUs: m.Rows[r].Entries[c].charge()}) {
						used += m.Rows[r].Entries[c].charge()
					}
				}
				if used > q.Limit {
					return
				}
			}
			// reservations: per GPU type, over its pools
			for t, res := range m.Reserved {
				sum := 0
				ps := m.Pools[t]
				if ps == nil {
					ps = []string{t}
				}
				for _, p := range ps {
					sum += used[p]
				}
				if res > 0 && sum > m.TypeCapacity(t)-res {
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
			t, g := e.Config.Pool(), e.charge()
			if used[t]+g > m.Capacity[t] {
				continue
			}
			used[t] += g
			choice[i] = k
			rec(i+1, obj+e.Value)
			used[t] -= g
		}
	}
	rec(0, 0)
	return best, bestChoice
}
