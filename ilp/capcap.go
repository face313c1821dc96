package ilp

import (
	"math"
	"math/bits"
)

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
	top := make([]int, m.nrows) // the largest option on the row
	var tops []int              // the largest option of each group of the job
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
					top[r] = max(top[r], g)
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
		for r := range top {
			top[r] /= unit
		}
	}
	m.rowScale = rowScales(top)
}

// rowScaleMin is the largest count on a row from which the dual's
// cutting-plane method works on the row's multiplier times a power of two
// (rowScales): below it, on every row of ordinary problems, the method is
// unchanged.
const rowScaleMin = 1 << 16

// rowScales returns, for the largest count on each row (top, in the
// model's units), the power of two 2^k that brings it into [16, 32) when
// it is at least rowScaleMin, else 1; nil when every scale is 1. With
// counts of very different magnitudes and no common factor (10^12 GPUs of
// one type beside single GPUs of another), the multipliers of the large
// rows are 10^12 times smaller than the others, below the cutting-plane
// method's absolute floors and its master program's pivot tolerances, and
// the dual took up to 11 nodes where the problem in small counts takes one.
// In μ_r = λ_r·2^k each row looks like a row counted in small units; as
// powers of two, the scales change no float.
func rowScales(top []int) []float64 {
	var w []float64
	for r, g := range top {
		if g < rowScaleMin {
			continue
		}
		if w == nil {
			w = make([]float64, len(top))
			for k := range w {
				w[k] = 1
			}
		}
		w[r] = math.Ldexp(1, bits.Len(uint(g))-5)
	}
	return w
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
