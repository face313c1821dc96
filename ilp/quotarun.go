package ilp

import (
	"math"
	"slices"
)

// quotaRun is what the build needs of one job's quotas while it reads the
// job's options of one type, by GPUs ascending: the quotas that count the
// type, by MinGPUs, so that the number an option counts toward
// (quotaCount) and whether it fits them alone (fitsQuotas) follow from a
// position that only moves forward, instead of a pass over the job's
// quotas for every option.
type quotaRun struct {
	min []int // the quotas' MinGPUs, ascending
	// fit[n] is the largest option that fits alone in the first n quotas
	// (their rows' capacity; fit[0] is unbounded)
	fit   []int
	at    int // the quotas with MinGPUs at most last
	last  int // the last option's GPUs
	order []int
}

// startRun readies b.run for job ji's options of type row tr.
func (b *builder) startRun(ji, tr int) {
	q := &b.run
	qs := b.quotasOf(ji, tr)
	q.order = append(q.order[:0], qs...)
	slices.SortStableFunc(q.order, func(x, y int) int { return b.p.Quotas[x].MinGPUs - b.p.Quotas[y].MinGPUs })
	q.min, q.fit = q.min[:0], append(q.fit[:0], math.MaxInt)
	nt := len(b.m.types)
	for _, qi := range q.order {
		q.min = append(q.min, b.p.Quotas[qi].MinGPUs)
		q.fit = append(q.fit, min(q.fit[len(q.fit)-1], b.m.cap[nt+qi]))
	}
	q.at, q.last = 0, math.MinInt
}

// count returns the number of the run's quotas an option of g GPUs counts
// toward (those with MinGPUs at most g).
func (q *quotaRun) count(g int) int {
	if g < q.last {
		q.at = 0
	}
	for q.at < len(q.min) && q.min[q.at] <= g {
		q.at++
	}
	q.last = g
	return q.at
}
