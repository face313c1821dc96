package ilp

import (
	"math"
	"math/bits"
	"slices"
)

// dpMaxCells caps the tables of the knapsack programs (entries of a
// (jobs+1)×(capacity+1) table, or of one row of capacity+1): a program
// whose table would be larger is skipped (a heuristic finds nothing, a
// bound falls back to the Lagrangian one), so their memory is bounded
// whatever the capacity. 2^23 entries are 64 MB of float64.
const dpMaxCells = 1 << 23

// The knapsack programs' cost per cell of their tables (jobs × capacity
// units), the thread's CPU over the cells, by which the clock sizes them
// before they start (affords): BenchmarkDPCost on the hard corpus's
// 1,000- and 1,500-job rounds (about 40 options per job), on fresh
// tables as in a solve, cold (after a collection) and warm, load 5-6.
// The largest ratio measured, rounded up: mckp (seqDP's rows) 8-13.6 ns,
// improveByType 5.6-9.8 ns, forcedBounds (its two tables) 16-38 ns, and
// the core program's backward tables with the moves they are built from
// 16-25.4 ns (coreCellNanos, coredp.go). The old 4, 4, 16 and 4 ns let a
// program start that could not end by the deadline: it then looked at
// the clock inside and returned nothing, or ran past the deadline in what
// it does not interrupt.
const (
	mckpCellNanos   = 14
	byTypeCellNanos = 10
	forcedCellNanos = 40
	coreCellNanos   = 26
)

// dpFits reports whether a table of rows × (C+1) entries stays within
// dpMaxCells (checked without overflow).
func dpFits(rows, C int) bool {
	return C >= 0 && C < dpMaxCells && rows <= dpMaxCells/(C+1)
}

// The knapsack programs index their tables by the capacity of one row in
// units of the greatest common divisor of the GPU counts that take part
// (gcdUnit): with every count a multiple of u, a table over 0..C is
// constant on each block [k·u, k·u+u−1], so the table over 0..⌊C/u⌋ with
// the counts divided by u holds the same values cell for cell, in the same
// order of operations, and yields the same optimum and the same picks. The
// programs' cost then follows the counts' ratios, not their magnitudes (14
// jobs with every count a multiple of 1,000,003 took seconds: capacity
// cliff).

// gcdUnit folds count g into the running greatest common divisor u (0:
// none yet).
func gcdUnit(u, g int) int {
	for g != 0 {
		u, g = g, u%g
	}
	return u
}

// rowUnit returns the greatest common divisor of the GPU counts of the
// free jobs' options on row t (every option for the aggregate row, t >=
// m.nrows); it stops at 1. It is 0 when no option uses the row: a table
// of one cell (capacity 0) then holds the program.
func (sr *search) rowUnit(free []int32, t int) int {
	u := 0
	for _, i := range free {
		j := &sr.m.jobs[i]
		for gi := range j.groups {
			if t < sr.m.nrows && !slices.Contains(j.groups[gi].rows, int32(t)) {
				continue
			}
			for oi := range j.opts {
				if o := &j.opts[oi]; int(o.grp) == gi {
					if u = gcdUnit(u, o.g); u == 1 {
						return 1
					}
				}
			}
		}
	}
	return u
}

// scaleCap is the capacity C in units of u (0: no count takes part, and
// one cell suffices).
func scaleCap(C, u int) int {
	if u == 0 {
		return 0
	}
	return C / u
}

// improveByType is a primal heuristic: block coordinate descent over GPU
// types. For one type t at a time, every free job may keep its current
// choice if that is not of type t (no GPUs of t), stay unallocated, or take
// any of its options of type t; a knapsack dynamic program over the residual
// capacity of t picks the best combination exactly. Each step can only
// improve the profit, and the result is checked against every row (quota
// rows are not part of the program; a step that breaks one is discarded).
// choice (parallel to free) is updated in place.
//
// With repair set, choice may break the type rows (typically the Lagrangian
// maximisers): the first sweep then accepts every step, which makes each
// type row hold, and the result is feasible unless a quota row breaks
// (improveByType then returns false).
func (sr *search) improveByType(free []int32, capv []int, choice []int, maxSweeps int, repair bool) bool {
	m := sr.m
	nt := len(m.types)
	var dp, next []float64
	var from []int32
	for sweep := 0; sweep < maxSweeps; sweep++ {
		improved := false
		for t := 0; t < nt; t++ {
			C := capv[t]
			// jobs that have options on t (a job's options of one type may
			// form several groups when a quota has a MinGPUs threshold)
			type entry struct {
				k int // position in free
			}
			var es []entry
			u := 0 // the table's unit (see gcdUnit)
			for k, i := range free {
				j := &m.jobs[i]
				for gi := range j.groups {
					if int(j.groups[gi].rows[0]) == t {
						es = append(es, entry{k})
						break
					}
				}
				for oi := 0; oi < len(j.opts) && u != 1; oi++ {
					if j.onType(oi, t) {
						u = gcdUnit(u, j.opts[oi].g)
					}
				}
			}
			if len(es) == 0 || C < 0 {
				continue
			}
			C /= u
			if C >= knapSparseMin {
				ks := make([]int, len(es))
				for n, e := range es {
					ks[n] = e.k
				}
				best, picks, state := sr.typeStepSparse(free, choice, ks, t, C, u)
				switch state {
				case 0:
					if sr.acceptTypeStep(free, capv, choice, ks, picks, t, best, repair && sweep == 0) {
						improved = true
					}
					continue
				case 2:
					continue
				case 3:
					return !repair || sr.fitsAll(free, capv, choice)
				}
			}
			if !dpFits(len(es), C) || !sr.clk.affords(byTypeCellNanos*len(es)*(C+1)) {
				continue
			}
			// capacity of t used by jobs outside the program is zero: every
			// job with a t option is in it, others cannot use t
			if cap(dp) < C+1 {
				dp = make([]float64, C+1)
				next = make([]float64, C+1)
			}
			dp, next = dp[:C+1], next[:C+1]
			for c := range dp {
				dp[c] = 0
			}
			if cap(from) < len(es)*(C+1) {
				from = make([]int32, len(es)*(C+1))
			}
			from = from[:len(es)*(C+1)]
			old := 0.0 // profit of the current choices of the program's jobs
			for _, e := range es {
				if c := choice[e.k]; c >= 0 {
					old += m.jobs[free[e.k]].opts[c].p
				}
			}
			for n, e := range es {
				j := &m.jobs[free[e.k]]
				base := 0.0
				if c := choice[e.k]; c >= 0 && !j.onType(c, t) {
					base = j.opts[c].p
				}
				if sr.clk.tick(2 * (C + 1)) { // (the row's copy and reset)
					return !repair || sr.fitsAll(free, capv, choice)
				}
				fr := from[n*(C+1) : (n+1)*(C+1)]
				for c := 0; c <= C; c++ {
					next[c] = dp[c] + base
					fr[c] = -1
				}
				for oi := range j.opts {
					o := &j.opts[oi]
					if !j.onType(oi, t) || o.p <= base || o.g/u > C {
						continue // dp is non-decreasing: never better than base
					}
					if sr.clk.tick(C) {
						// out of time: the choice so far (feasible unless
						// it is still being repaired)
						return !repair || sr.fitsAll(free, capv, choice)
					}
					for g, c := o.g/u, C; c >= g; c-- {
						if v := dp[c-g] + o.p; v > next[c] {
							next[c] = v
							fr[c] = int32(oi)
						}
					}
				}
				dp, next = next, dp
			}
			force := repair && sweep == 0
			if !force && dp[C] <= old+sr.eqTol {
				continue
			}
			// backtrack into a trial choice
			trial := append([]int(nil), choice...)
			c := C
			for n := len(es) - 1; n >= 0; n-- {
				e := es[n]
				j := &m.jobs[free[e.k]]
				oi := from[n*(C+1)+c]
				if oi >= 0 {
					trial[e.k] = int(oi)
					c -= j.opts[oi].g / u
				} else if cur := choice[e.k]; cur >= 0 && j.onType(cur, t) {
					trial[e.k] = -1
				}
			}
			if force || sr.fitsAll(free, capv, trial) {
				copy(choice, trial)
				improved = true
			}
		}
		if repair && sweep == 0 && !sr.fitsAll(free, capv, choice) {
			return false
		}
		if !improved {
			break
		}
	}
	return true
}

// fitsAll reports whether a choice for the free jobs fits capv in every row.
func (sr *search) fitsAll(free []int32, capv []int, choice []int) bool {
	left := append([]int(nil), capv...)
	for k, i := range free {
		if c := choice[k]; c >= 0 {
			j := &sr.m.jobs[i]
			apply(left, j, c, 1)
		}
	}
	for _, v := range left {
		if v < 0 {
			return false
		}
	}
	return true
}

// priced returns option o's profit less the prices lam of every coupling
// row it uses except row t (which is kept exact), and whether it uses row t.
//
// t may also be the aggregate row (t >= len(lam), see keptRow), which every
// option uses.
func priced(j *mjob, o *mopt, lam []float64, t int) (v float64, usesT bool) {
	usesT = t >= len(lam)
	pi := 0.0
	for _, r := range j.groups[o.grp].rows {
		if int(r) == t {
			usesT = true
		} else {
			pi += lam[r]
		}
	}
	return o.p - pi*float64(o.g), usesT
}

// rowItem is a free job's option on row t in rowBound's knapsack: its
// count in the table's units and its Lagrangian profit for the other rows.
type rowItem struct {
	g    int
	gain float64
}

// rowItems appends to items free job k's (j's) options on row t that fit C
// units of u GPUs (only those listed in allowed[k], when allowed is not
// nil), and returns the job's best Lagrangian profit among its options off
// row t (0: none).
func rowItems(items []rowItem, j *mjob, allowed [][]cand, k int, lam []float64, t, C, u int) ([]rowItem, float64) {
	off := 0.0
	each := func(oi int) {
		o := &j.opts[oi]
		v, usesT := priced(j, o, lam, t)
		if !usesT {
			off = math.Max(off, v)
		} else if o.g/u <= C {
			items = append(items, rowItem{o.g / u, v})
		}
	}
	if allowed != nil {
		for _, c := range allowed[k] {
			if c.o >= 0 {
				each(c.o)
			}
		}
	} else {
		for oi := range j.opts {
			each(oi)
		}
	}
	return items, off
}

// rowBound returns the partial-Lagrangian bound that keeps coupling row t
// (a type row) exact and prices every other row at lam: Σ_{r≠t} λ_r·cap_r +
// the optimum of a multiple-choice knapsack over row t in which each free
// job takes its best choice: an option using row t at its Lagrangian profit
// for the other rows, an option not using t at its Lagrangian profit, or
// none. Only the options listed in allowed (per free job; nil = all) count.
// The bound is never weaker than the Lagrangian bound at lam and holds for
// every assignment of the free jobs that uses allowed options only. It is
// +Inf (no bound) when the row's table would exceed dpMaxCells or the time
// is up.
func (sr *search) rowBound(free []int32, capv []int, lam []float64, t int, allowed [][]cand) float64 {
	m := sr.m
	C := capv[t]
	if C < 0 {
		return math.Inf(-1)
	}
	u := sr.rowUnit(free, t) // the table's unit (see gcdUnit)
	C = scaleCap(C, u)
	base := 0.0
	for r := range capv {
		if r != t {
			base += lam[r] * float64(capv[r])
		}
	}
	if C >= sparseMinCap {
		// on the breakpoints while they stay few against the table
		limit := dpMaxCells
		if dpFits(1, C) {
			limit = (C + 1) / 64 // (sorting the breakpoints costs about 20 cells each)
		}
		if b, ok := sr.rowBoundSparse(free, lam, t, allowed, C, u, base, limit); ok {
			return b
		}
	}
	if !dpFits(1, C) {
		return math.Inf(1) // no bound from this row
	}
	if cap(sr.dpA) < C+1 {
		sr.dpA = make([]float64, C+1)
		sr.dpB = make([]float64, C+1)
	}
	dp, next := sr.dpA[:C+1], sr.dpB[:C+1]
	for c := range dp {
		dp[c] = 0
	}
	var items []rowItem
	for k, i := range free {
		var off float64
		items, off = rowItems(items[:0], &m.jobs[i], allowed, k, lam, t, C, u)
		base += off
		any := false
		for _, it := range items {
			if it.gain > off {
				any = true
			}
		}
		if !any {
			continue
		}
		copy(next, dp)
		for _, it := range items {
			gain := it.gain - off
			if gain <= 0 {
				continue
			}
			if sr.clk.tick(C) {
				return math.Inf(1) // out of time: no bound from this row
			}
			for c := it.g; c <= C; c++ {
				if v := dp[c-it.g] + gain; v > next[c] {
					next[c] = v
				}
			}
		}
		dp, next = next, dp
	}
	return base + dp[C]
}

// sparseMinCap is the capacity, in units (see gcdUnit), from which rowBound
// runs its program on the table's breakpoints (rowBoundSparse) instead of
// the table: with counts of very different magnitudes on one row (10^6
// GPUs beside single GPUs), the table has millions of cells at every node
// where a few hundred sums are reachable.
const sparseMinCap = 1 << 16

// sparseSortNanos is what rowBoundSparse's sort of n breakpoints costs per
// point and per halving (n·log2 n of them), by which the clock sizes it:
// a conservative estimate (a comparison sort of 16-byte points, about
// 1-3 ns each on this machine), not a measure of this program.
const sparseSortNanos = 4

// frontPt is a breakpoint of a knapsack table: the best gain v within w
// units, where the table steps up.
type frontPt struct {
	w int
	v float64
}

// rowBoundSparse is rowBound's program on the breakpoints of its table,
// for a capacity C of at least sparseMinCap units (counts divided by u),
// base being the bound's constant part. The table's value at each capacity
// is the value of the last breakpoint at or below it, and each breakpoint
// is the same sum of gains, in the same order, as the table's cell, so the
// bound is the table's to the bit; its cost follows the reachable sums, not
// the capacity. It gives up (ok false) when the breakpoints, old and new,
// would exceed limit and limit is below dpMaxCells (the table is then
// cheaper); it is +Inf (no bound) past dpMaxCells or when the time is up.
func (sr *search) rowBoundSparse(free []int32, lam []float64, t int, allowed [][]cand, C, u int, base float64, limit int) (float64, bool) {
	m := sr.m
	front := []frontPt{{0, 0}}
	var next, grown []frontPt
	var items []rowItem
	for k, i := range free {
		var off float64
		items, off = rowItems(items[:0], &m.jobs[i], allowed, k, lam, t, C, u)
		base += off
		grown = grown[:0]
		for _, it := range items {
			gain := it.gain - off
			if gain <= 0 {
				continue
			}
			if sr.clk.tick(len(front)) {
				return math.Inf(1), true // out of time: no bound from this row
			}
			if len(front)+len(grown)+len(front) > limit {
				return math.Inf(1), limit == dpMaxCells // as large as the table
			}
			for _, p := range front {
				if p.w+it.g > C {
					break
				}
				grown = append(grown, frontPt{p.w + it.g, p.v + gain})
			}
		}
		if len(grown) == 0 {
			continue
		}
		// (the sort does not look at the clock: sized before it starts,
		// sparseSortNanos per point and halving)
		if n := len(grown); n > 1<<12 && !sr.clk.affords(sparseSortNanos*n*bits.Len(uint(n))) {
			return math.Inf(1), true // out of time: no bound from this row
		}
		slices.SortFunc(grown, func(a, b frontPt) int { return a.w - b.w })
		// merge: at each capacity the best of the old table and the
		// grown points, kept where it steps up
		next = next[:0]
		a, b := 0, 0
		for a < len(front) || b < len(grown) {
			var p frontPt
			if b == len(grown) || a < len(front) && front[a].w <= grown[b].w {
				p, a = front[a], a+1
			} else {
				p, b = grown[b], b+1
			}
			if n := len(next); n > 0 && next[n-1].w == p.w {
				next[n-1].v = math.Max(next[n-1].v, p.v) // (above the point before it)
				continue
			}
			if n := len(next); n == 0 || p.v > next[n-1].v {
				next = append(next, p)
			}
		}
		front, next = next, front
	}
	return base + front[len(front)-1].v, true
}

// mcItem is one option in a multiple-choice knapsack: it uses g units and
// gains gain over the job's default.
type mcItem struct {
	g    int
	gain float64
	opt  int // option index in the job
}

// mckp solves max Σ gains with at most one item per group and total size at
// most C exactly by dynamic programming and returns, per group, the index of
// the chosen item in its group (-1 for none). It picks nothing when its
// table would exceed dpMaxCells or the time is up.
func (sr *search) mckp(groups [][]mcItem, C int) []int {
	picks := make([]int, len(groups))
	for k := range picks {
		picks[k] = -1
	}
	if C < 0 {
		return picks
	}
	var rows []int // groups that take part
	u := 0         // the table's unit (see gcdUnit)
	for k, g := range groups {
		if len(g) > 0 {
			rows = append(rows, k)
		}
		for k := 0; k < len(g) && u != 1; k++ {
			u = gcdUnit(u, g[k].g)
		}
	}
	if u == 0 {
		return picks // no item
	}
	C /= u
	if C >= knapSparseMin && sr.mckpSparse(groups, rows, C, u, picks) {
		return picks
	}
	if !dpFits(len(rows), C) || !sr.clk.affords(mckpCellNanos*len(rows)*(C+1)) {
		return picks
	}
	if cap(sr.dpA) < C+1 {
		sr.dpA = make([]float64, C+1)
		sr.dpB = make([]float64, C+1)
	}
	dp, next := sr.dpA[:C+1], sr.dpB[:C+1]
	for c := range dp {
		dp[c] = 0
	}
	need := len(rows) * (C + 1)
	if cap(sr.from) < need {
		sr.from = make([]int32, need)
	}
	from := sr.from[:need]
	for n, k := range rows {
		// (the row's copy and its picks' reset count too: with a few
		// items per row they are most of the work)
		if sr.clk.tick(2 * (C + 1)) {
			return picks // out of time: nothing picked
		}
		fr := from[n*(C+1) : (n+1)*(C+1)]
		copy(next, dp)
		for c := range fr {
			fr[c] = -1
		}
		for ii, it := range groups[k] {
			if sr.clk.tick(C + 1) {
				return picks // out of time: nothing picked
			}
			for g, c := it.g/u, it.g/u; c <= C; c++ {
				if v := dp[c-g] + it.gain; v > next[c] {
					next[c] = v
					fr[c] = int32(ii)
				}
			}
		}
		dp, next = next, dp
	}
	c := C
	for n := len(rows) - 1; n >= 0; n-- {
		if ii := from[n*(C+1)+c]; ii >= 0 {
			picks[rows[n]] = int(ii)
			c -= groups[rows[n]][ii].g / u
		}
	}
	return picks
}

// seqDP is a primal heuristic: it settles the type rows one at a time in the
// given order. For row t, every undecided job may take an option of type t
// (its profit, minus the Lagrangian price of any quota row) or keep its best
// Lagrangian profit on the rows not yet settled; a knapsack program over the
// residual capacity of t decides which jobs take t and with which option.
// Jobs left over after the last row stay unallocated, and a final pass gives
// them (and everyone) any upgrade that still fits. The result (parallel to
// free) may break a quota row; callers check.
func (sr *search) seqDP(free []int32, capv []int, lam []float64, order []int) []int {
	m := sr.m
	nt := len(m.types)
	choice := make([]int, len(free))
	for k := range choice {
		choice[k] = -1
	}
	decided := make([]bool, len(free))
	settled := make([]bool, nt)
	left := append([]int(nil), capv...)
	groups := make([][]mcItem, len(free))
	for _, t := range order {
		// out of time: the rows settled so far hold (each program fits
		// its row's capacity), the jobs left stay unallocated
		if sr.clk.expired() {
			break
		}
		for k, i := range free {
			groups[k] = groups[k][:0]
			if decided[k] {
				continue
			}
			j := &m.jobs[i]
			if sr.clk.tick(4 * len(j.opts)) {
				break // (mckp below sees the clock stopped)
			}
			off := 0.0
			for oi := range j.opts {
				o := &j.opts[oi]
				g := &j.groups[o.grp]
				tr := int(g.rows[0])
				if settled[tr] {
					continue
				}
				pi := 0.0
				for _, r := range g.rows[1:] {
					pi += lam[r]
				}
				if tr == t {
					if o.g <= left[t] {
						groups[k] = append(groups[k], mcItem{g: o.g, gain: o.p - pi*float64(o.g), opt: oi})
					}
				} else {
					off = math.Max(off, o.p-(pi+lam[tr])*float64(o.g))
				}
			}
			items := groups[k][:0]
			for _, it := range groups[k] {
				if it.gain-off > 0 {
					it.gain -= off
					items = append(items, it)
				}
			}
			groups[k] = items
		}
		picks := sr.mckp(groups, left[t])
		for k, pk := range picks {
			if pk >= 0 {
				oi := groups[k][pk].opt
				choice[k] = oi
				decided[k] = true
				apply(left, &m.jobs[free[k]], oi, 1)
			}
		}
		settled[t] = true
	}
	// upgrades that still fit (capacity left on any row)
	for k, i := range free {
		if sr.clk.tick(4 * len(m.jobs[i].opts)) {
			break
		}
		choice[k] = sr.upgrade(left, &m.jobs[i], choice[k])
	}
	return choice
}

// forcedBounds extends rowBound: for every free job k and every candidate
// allowed[k][ci] it returns the same partial-Lagrangian bound with job k
// forced onto that candidate (an option or none). It runs the knapsack
// program forwards and backwards over the jobs and joins the two halves
// around each job. The bounds exclude the profit of jobs outside free. They
// are +Inf (no bound) when the tables would exceed dpMaxCells, the clock
// cannot afford building them or the time is up.
func (sr *search) forcedBounds(free []int32, capv []int, lam []float64, t int, allowed [][]cand) [][]float64 {
	m := sr.m
	n := len(free)
	C := capv[t]
	out := make([][]float64, n)
	if C < 0 {
		for k := range out {
			out[k] = make([]float64, len(allowed[k]))
			for ci := range out[k] {
				out[k][ci] = math.Inf(-1)
			}
		}
		return out
	}
	base := 0.0
	for r := range capv {
		if r != t {
			base += lam[r] * float64(capv[r])
		}
	}
	// per job: value of each candidate and whether it uses row t
	type cv struct {
		v    float64
		g    int // GPUs on row t, 0 if the candidate does not use t
		useT bool
	}
	vals := make([][]cv, n)
	offs := make([]float64, n)
	sumOff := 0.0
	for k, i := range free {
		j := &m.jobs[i]
		vals[k] = make([]cv, len(allowed[k]))
		sr.clk.tick(8 * len(allowed[k])) // (the tables are sized below)
		off := 0.0
		for ci, c := range allowed[k] {
			if c.o < 0 {
				continue // none: value 0, uses nothing
			}
			o := &j.opts[c.o]
			v, useT := priced(j, o, lam, t)
			if useT {
				vals[k][ci] = cv{v: v, g: o.g, useT: true}
			} else {
				vals[k][ci] = cv{v: v}
				off = math.Max(off, v)
			}
		}
		offs[k] = off
		sumOff += off
	}
	u := 0 // the tables' unit (see gcdUnit)
	for k := 0; k < len(vals) && u != 1; k++ {
		for ci := range vals[k] {
			if x := &vals[k][ci]; x.useT {
				u = gcdUnit(u, x.g)
			}
		}
	}
	for k := 0; k < len(vals) && u > 1; k++ {
		for ci := range vals[k] {
			vals[k][ci].g /= u
		}
	}
	C = scaleCap(C, u)
	noBound := func() [][]float64 {
		for k := range out {
			out[k] = make([]float64, len(allowed[k]))
			for ci := range out[k] {
				out[k][ci] = math.Inf(1)
			}
		}
		return out
	}
	items := func(k int, buf []knapItem) []knapItem { // job k's on row t
		for _, x := range vals[k] {
			if !x.useT || x.g > C {
				continue
			}
			if gain := x.v - offs[k]; gain > 0 {
				buf = append(buf, knapItem{x.g, gain, 0})
			}
		}
		return buf
	}
	var join func(k, c int) float64 // best of jobs ≠ k within c units
	var joinWork func(k int) int    // its cost
	if C >= knapSparseMin && !sr.clk.expired() {
		// on the tables' breakpoints (see knapFront)
		F, B, ok, stopped := sr.forcedFronts(n, C, items)
		switch {
		case ok:
			join = func(k, c int) float64 { return joinFronts(F[k], B[k+1], c) }
			joinWork = func(k int) int { return len(allowed[k]) * len(F[k]) }
		case stopped || !dpFits(2*(n+1), C):
			return noBound() // out of time, or the table is larger still
		}
	}
	if join == nil {
		if !dpFits(2*(n+1), C) || !sr.clk.affords(forcedCellNanos*(n+1)*(C+1)) || sr.clk.expired() {
			// the tables would be too large: no bound beyond the caller's
			return noBound()
		}
		if join = sr.forcedTables(n, C, items); join == nil {
			return noBound() // out of time: the tables are incomplete
		}
		joinWork = func(k int) int { return len(allowed[k]) * (C + 1) }
	}
	stopped := false
	for k := range free {
		out[k] = make([]float64, len(allowed[k]))
		if stopped = stopped || sr.clk.tick(joinWork(k)); stopped {
			for ci := range out[k] {
				out[k][ci] = math.Inf(1) // out of time: no bound
			}
			continue
		}
		rest := base + sumOff - offs[k]
		atC := math.NaN()
		for ci, c := range allowed[k] {
			x := vals[k][ci]
			switch {
			case c.o < 0 || !x.useT:
				if math.IsNaN(atC) {
					atC = join(k, C)
				}
				out[k][ci] = rest + x.v + atC
			case x.g > C:
				out[k][ci] = math.Inf(-1)
			default:
				out[k][ci] = rest + x.v + join(k, C-x.g)
			}
		}
	}
	return out
}

// forcedTables is forcedBounds' pair of tables over 0..C units, forwards
// and backwards over the n jobs (job k's items from items), and returns
// the join of the two halves around a job, or nil when the time is up.
func (sr *search) forcedTables(n, C int, items func(k int, buf []knapItem) []knapItem) func(k, c int) float64 {
	W := C + 1
	if cap(sr.fwd) < (n+1)*W {
		sr.fwd = make([]float64, (n+1)*W)
		sr.bwd = make([]float64, (n+1)*W)
	}
	F := sr.fwd[:(n+1)*W] // F[k] over jobs < k
	Bk := sr.bwd[:(n+1)*W]
	clear(F[:W])
	clear(Bk[n*W:])
	stopped := false
	var buf []knapItem
	step := func(dst, src []float64, k int) {
		copy(dst, src)
		buf = items(k, buf[:0])
		for _, x := range buf {
			if stopped = stopped || sr.clk.tick(C); stopped {
				return
			}
			for c := x.g; c <= C; c++ {
				if v := src[c-x.g] + x.p; v > dst[c] {
					dst[c] = v
				}
			}
		}
	}
	for k := 0; k < n; k++ {
		step(F[(k+1)*W:(k+2)*W], F[k*W:(k+1)*W], k)
	}
	for k := n - 1; k >= 0; k-- {
		step(Bk[k*W:(k+1)*W], Bk[(k+1)*W:(k+2)*W], k)
	}
	if stopped {
		return nil
	}
	return func(k, c int) float64 {
		f, b := F[k*W:(k+1)*W], Bk[(k+1)*W:(k+2)*W]
		best := math.Inf(-1)
		for a := 0; a <= c; a++ {
			if v := f[a] + b[c-a]; v > best {
				best = v
			}
		}
		return best
	}
}

// keptRows lists the rows the knapsack bounds may keep exact at lam: every
// type row with a positive multiplier, then the aggregate row (index
// m.nrows, see keptRow) when there are several type rows and all their
// multipliers are positive.
func (sr *search) keptRows(lam []float64) []int {
	nt := len(sr.m.types)
	rows := make([]int, 0, nt+1)
	agg := nt > 1
	for t := 0; t < nt; t++ {
		if lam[t] > 0 {
			rows = append(rows, t)
		} else {
			agg = false
		}
	}
	if agg {
		rows = append(rows, sr.m.nrows)
	}
	return rows
}

// keptRow returns the capacities and multipliers with which rowBound and
// forcedBounds keep row t exact. For a type row they are capv and lam. For
// the aggregate row t = m.nrows they describe the relaxation that adds the
// redundant row Σ_types GPUs ≤ Σ_types capacity, keeps it exact and prices
// each type row at λ_t − μ, where μ = min over type rows of λ_t: the
// Lagrangian relaxation of the type rows at these prices, with the aggregate
// row kept, is exactly the problem the knapsack programs solve. Its bound is
// never weaker than the Lagrangian bound at lam (pricing the aggregate row at
// μ gives it back), and it sees what no single type row does: when every
// cheap change of the Lagrangian choice moves an even number of GPUs between
// or onto types, an odd shortfall of the total must be paid for by a job's
// expensive move or by idle GPUs.
func (sr *search) keptRow(capv []int, lam []float64, t int) ([]int, []float64) {
	m := sr.m
	if t < m.nrows {
		return capv, lam
	}
	nt := len(m.types)
	mu := math.Inf(1)
	total := 0
	for r := 0; r < nt; r++ {
		mu = math.Min(mu, lam[r])
		total += capv[r]
	}
	lamx := append([]float64(nil), lam...)
	for r := 0; r < nt; r++ {
		lamx[r] -= mu
	}
	capx := make([]int, m.nrows+1)
	copy(capx, capv)
	capx[m.nrows] = total
	return capx, lamx
}

// aggregateChoice is the maximiser of the aggregate row's relaxation (see
// keptRow) over the free jobs: a choice (parallel to free) that fits the
// total capacity but may break single type rows, for improveByType to
// repair. It returns nil when the aggregate row is not kept at lam.
func (sr *search) aggregateChoice(free []int32, capv []int, lam []float64) []int {
	agg := sr.m.nrows
	if !slices.Contains(sr.keptRows(lam), agg) {
		return nil
	}
	cx, lx := sr.keptRow(capv, lam, agg)
	groups := make([][]mcItem, len(free))
	for k, i := range free {
		j := &sr.m.jobs[i]
		for oi := range j.opts {
			o := &j.opts[oi]
			if v, _ := priced(j, o, lx, agg); v > 0 && o.g <= cx[agg] {
				groups[k] = append(groups[k], mcItem{g: o.g, gain: v, opt: oi})
			}
		}
	}
	choice := make([]int, len(free))
	for k, pk := range sr.mckp(groups, cx[agg]) {
		choice[k] = -1
		if pk >= 0 {
			choice[k] = groups[k][pk].opt
		}
	}
	return choice
}
