package ilp

import "math"

// quotaRun is what the build needs of one job's quotas while it reads the
// job's options of one type, by GPUs ascending: the quotas that count the
// type, by MinGPUs, so that the number an option counts toward
// (quotaCount) and whether it fits them alone (fitsQuotas) follow from a
// position that only moves forward, instead of a pass over the job's
// quotas for every option.
type quotaRun struct {
	p     *Problem
	order []int // the quotas, by MinGPUs ascending (typeQuotaTab)
	// fit[n] is the largest option that fits alone in the first n quotas
	// (their rows' capacity; fit[0] is unbounded)
	fit  []int
	at   int // the quotas with MinGPUs at most last
	last int // the last option's GPUs
}

// startRun readies b.run for job ji's options of type row tr.
func (b *builder) startRun(ji, tr int) {
	q := &b.run
	q.p = b.p
	q.order, q.fit = b.tq.runOf(ji, tr, b.jobQuotas, b.m.cap)
	q.at, q.last = 0, math.MinInt
}

// count returns the number of the run's quotas an option of g GPUs counts
// toward (those with MinGPUs at most g).
func (q *quotaRun) count(g int) int {
	if g < q.last {
		q.at = 0
	}
	for q.at < len(q.order) && q.p.Quotas[q.order[q.at]].MinGPUs <= g {
		q.at++
	}
	q.last = g
	return q.at
}
