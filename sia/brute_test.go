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
					if c := choice[r]; c >= 0 {
						used += quotaUse(&q, usesOf(&m.Rows[r].Entries[c], c == m.Rows[r].Pin))
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
			uses := usesOf(e, k == r.Pin) // spanning entries use several pools
			fits := true
			for _, u := range uses {
				fits = fits && used[u.Type]+u.GPUs <= m.Capacity[u.Type]
			}
			if !fits {
				continue
			}
			for _, u := range uses {
				used[u.Type] += u.GPUs
			}
			choice[i] = k
			rec(i+1, obj+e.Value)
			for _, u := range uses {
				used[u.Type] -= u.GPUs
			}
		}
	}
	rec(0, 0)
	return best, bestChoice
}
