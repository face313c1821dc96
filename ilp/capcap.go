package ilp

// capToDemand lowers each coupling row's capacity to the most its jobs
// could ever use together: the sum over the model's jobs of the largest
// option each has on the row (a type row: options of that type; a quota
// row: options the quota counts, of the jobs it covers). Capacity beyond
// that no assignment can use, so the capped model has the same feasible
// assignments, optima and bounds; but the knapsack programs' tables and
// everything else sized by a row's capacity are then bounded by the
// input's size, not by capacity × jobs (a 6-job problem on 2^22 GPUs
// allocated 285 MB).
//
// Only a complete model is capped: the late admission of the jobs a
// deadline kept out of the model (model.rest) draws on the rows' capacity
// too. The pass reads each option and each group's rows once; it looks at
// the clock by that count and, past the build's end, leaves the rows as
// they are (the sums are then incomplete).
//
// The same pass finds the greatest common divisor of the model's GPU
// counts, and a complete model is then counted in that unit (divideCounts).
func (m *model) capToDemand(clk *clock) {
	if m.rest < len(m.p.Jobs) || clk != nil && past(clk.buildEnd) {
		return
	}
	demand := make([]int, m.nrows) // Σ over jobs of the largest option on the row
	cur := make([]int, m.nrows)    // the current job's largest option on the row
	stamp := make([]int32, m.nrows)
	for r := range stamp {
		stamp[r] = -1
	}
	var tops []int // the largest option of each group of the job
	work := 0
	unit := 0 // gcd of the options' GPUs so far (0: none)
	for ji := range m.jobs {
		j := &m.jobs[ji]
		tops = groupTops(j, tops)
		for k := 0; k < len(j.opts) && unit != 1; k++ {
			unit = gcdUnit(unit, j.opts[k].g)
		}
		work += len(j.opts)
		for gi := range j.groups {
			g := tops[gi]
			for _, r := range j.groups[gi].rows {
				if stamp[r] != int32(ji) {
					stamp[r], cur[r] = int32(ji), 0
				}
				if g > cur[r] {
					demand[r] += g - cur[r]
					cur[r] = g
				}
			}
			work += len(j.groups[gi].rows)
		}
		if clk != nil && work >= tickWork {
			work = 0
			if past(clk.buildEnd) {
				return
			}
		}
	}
	for r := range m.cap {
		m.cap[r] = min(m.cap[r], demand[r])
	}
	if unit > 1 && (clk == nil || !past(clk.buildEnd)) {
		m.divideCounts(unit) // (a pass of the length of the one above)
	}
}

// divideCounts counts every GPU of a complete model in units of u, the
// greatest common divisor of its options' GPU counts: each option's count
// (and its hull point) is divided by u, each row's capacity rounded down to
// whole units (with every count a multiple of u, Σ g·x ≤ C holds exactly
// when Σ (g/u)·x ≤ ⌊C/u⌋), and the multipliers' boxes, in profit per GPU,
// multiplied by u. The model then has the same feasible assignments, values
// and bounds, and the search explores what it would on the problem with
// every count divided by u: the knapsack tables, the dual's steps and the
// cutting planes' tolerances follow the counts' ratios, not their
// magnitudes (counts all multiples of 1,000,003 made 11-17 jobs take 1-2 s
// without a deadline, with 5-11 nodes where the divided problem took one
// node and 0.1 ms). Assignments are option indices, so the answer needs no
// mapping back. The pins' usage is already out of the capacities, and
// everything that reads the problem's own counts (the warm start's check,
// the late admission) reads them against the problem, not the model.
func (m *model) divideCounts(u int) {
	for ji := range m.jobs {
		j := &m.jobs[ji]
		for k := range j.opts {
			j.opts[k].g /= u
		}
		for k := 1; k < len(j.pts); k += 2 {
			j.pts[k] /= float64(u) // exact: a multiple of u below 2^53
		}
	}
	for r := range m.cap {
		m.cap[r] /= u
		m.ub[r] *= float64(u)
	}
}

// groupTops sets buf to the GPUs of the largest option of each group of
// job j, in one pass over its options.
func groupTops(j *mjob, buf []int) []int {
	if n := len(j.groups); cap(buf) < n {
		buf = make([]int, n)
	} else {
		buf = buf[:n]
		clear(buf)
	}
	for k := range j.opts {
		o := &j.opts[k]
		buf[o.grp] = max(buf[o.grp], o.g)
	}
	return buf
}
