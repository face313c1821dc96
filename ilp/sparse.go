package ilp

import (
	"math"
	"slices"
)

// The knapsack programs of improveByType, mckp and forcedBounds on their
// tables' breakpoints: with counts of very different magnitudes on one row
// and no common factor (10^6 GPUs beside single GPUs), a table has
// millions of cells where a few hundred sums are reachable. From
// sparseMinCap units on, each program runs on the breakpoints first and
// gives them up for the table when they grow past a share of it.
//
// A stage of the table (one job) is the cellwise best of its candidates
// in a fixed order: the job's default (the previous row, plus a constant
// base) and then each of its items (the previous row shifted by the
// item's units, plus its value), a later candidate winning only when
// strictly better. Each candidate is a step function that changes only at
// the previous row's breakpoints (shifted), so the stage is evaluated at
// their union, with the same float sums, in the same order, as the cells:
// the values and the winners (the backtracking's picks) are the table's
// to the bit.

// knapItem is a candidate of a stage: g units, value p added to the
// previous row at c−g, id the pick it stands for.
type knapItem struct {
	g  int
	p  float64
	id int32
}

// knapFront is a knapsack program on breakpoints: the value of the last
// stage (val: points where it steps up, from 0) and, when picks are kept,
// each stage's winners (points where the winner changes, flat, stage n at
// pw[po[n]:po[n+1]]).
type knapFront struct {
	val, nv []frontPt
	pos     []int
	pw      []int
	pid     []int32
	po      []int
	picks   bool
	size    int // points held (every stage's winners and the value)
}

// newKnapFront starts a program whose table is 0 everywhere.
func newKnapFront(picks bool) *knapFront {
	kf := &knapFront{val: []frontPt{{0, 0}}, picks: picks}
	if picks {
		kf.po = []int{0}
	}
	return kf
}

// at returns the value of the row pts at capacity c (the last point at or
// below it; pts starts at 0).
func at(pts []frontPt, c int) float64 {
	k, _ := slices.BinarySearchFunc(pts, c+1, func(p frontPt, w int) int { return p.w - w })
	return pts[k-1].v
}

// stage adds one job: the default (the previous value, plus base when
// addBase) then items in their order, within C units. It reports false
// when the points held could pass limit or the clock cannot afford the
// stage (the program is then given up), or the clock stops (stopped).
func (kf *knapFront) stage(items []knapItem, base float64, addBase bool, C, limit int, clk *clock) (ok, stopped bool) {
	front := kf.val
	// sized before it starts: at most len(front) positions per candidate,
	// a sort and a pass over them per candidate
	work := len(front) * (len(items) + 1)
	if kf.size+2*work > limit {
		return false, false
	}
	if clk != nil && clk.tick(work*(len(items)+1)) {
		return false, true
	}
	if clk != nil && !clk.affords(20*work*(len(items)+2)) {
		return false, false // (as a table the clock cannot afford)
	}
	pos := kf.pos[:0]
	for _, p := range front {
		pos = append(pos, p.w)
	}
	for _, it := range items {
		for _, p := range front {
			if p.w+it.g > C {
				break
			}
			pos = append(pos, p.w+it.g)
		}
	}
	kf.pos = pos
	slices.Sort(pos)
	pos = slices.Compact(pos)
	idx := make([]int, len(items)+1) // each candidate's point of the previous row
	nv := kf.nv[:0]
	var lastID int32 = math.MinInt32
	for _, x := range pos {
		for idx[0]+1 < len(front) && front[idx[0]+1].w <= x {
			idx[0]++
		}
		best, id := front[idx[0]].v, int32(-1)
		if addBase {
			best = front[idx[0]].v + base
		}
		for k, it := range items {
			if x < it.g {
				continue
			}
			i := idx[k+1]
			for i+1 < len(front) && front[i+1].w+it.g <= x {
				i++
			}
			idx[k+1] = i
			if v := front[i].v + it.p; v > best {
				best, id = v, it.id
			}
		}
		if n := len(nv); n == 0 || best > nv[n-1].v {
			nv = append(nv, frontPt{x, best})
		}
		if kf.picks && id != lastID {
			kf.pw = append(kf.pw, x)
			kf.pid = append(kf.pid, id)
			lastID = id
		}
	}
	if kf.picks {
		kf.po = append(kf.po, len(kf.pw))
	}
	kf.val, kf.nv = nv, front
	kf.size = len(nv)
	if kf.picks {
		kf.size += len(kf.pw)
	}
	return true, false
}

// pick returns the winner of stage n at capacity c.
func (kf *knapFront) pick(n, c int) int32 {
	ws := kf.pw[kf.po[n]:kf.po[n+1]]
	k, _ := slices.BinarySearch(ws, c+1)
	return kf.pid[kf.po[n]+k-1]
}

// sparseLimit is the most points a program on breakpoints may hold for a
// table of rows × (C+1) cells: a 64th of the table when the table fits
// (a point costs about as much as 20 cells), else a quarter of dpMaxCells.
func sparseLimit(rows, C int) int {
	if dpFits(rows, C) && !sparseUnlimited {
		return max(rows*(C+1)/64, 1)
	}
	return dpMaxCells / 4
}

// knapSparseMin is the capacity, in units, from which improveByType, mckp
// and forcedBounds try their programs on breakpoints (sparseMinCap; the
// twin tests lower it), and sparseUnlimited, set by tests only, keeps them
// on the breakpoints whatever their number.
var (
	knapSparseMin   = sparseMinCap
	sparseUnlimited = false
)

// mckpSparse is mckp's program on breakpoints over the groups listed in
// rows (counts divided by u, capacity C units): it sets picks and reports
// true, or reports false when the points grow past sparseLimit and the
// table fits (mckp then runs the table). Out of time, or past the limit
// when the table does not fit either, it picks nothing.
func (sr *search) mckpSparse(groups [][]mcItem, rows []int, C, u int, picks []int) bool {
	limit := sparseLimit(len(rows), C)
	kf := newKnapFront(true)
	var items []knapItem
	for _, k := range rows {
		items = items[:0]
		for ii, it := range groups[k] {
			if g := it.g / u; g <= C {
				items = append(items, knapItem{g, it.gain, int32(ii)})
			}
		}
		ok, stopped := kf.stage(items, 0, false, C, limit, sr.clk)
		if stopped {
			return true // out of time: nothing picked
		}
		if !ok {
			return !dpFits(len(rows), C)
		}
	}
	c := C
	for n := len(rows) - 1; n >= 0; n-- {
		if ii := kf.pick(n, c); ii >= 0 {
			picks[rows[n]] = int(ii)
			c -= groups[rows[n]][ii].g / u
		}
	}
	return true
}

// typeStepSparse is improveByType's program for type t on breakpoints:
// the jobs at positions es of free keep their choice off t (base) or take
// an option of t, within C units of u GPUs. It returns the best profit and
// the picks per entry (an option, or −1 for the default), and state 0
// (done), 1 (too many points: run the table), 2 (too many points and the
// table does not fit: skip the type) or 3 (out of time).
func (sr *search) typeStepSparse(free []int32, choice []int, es []int, t, C, u int) (float64, []int32, int) {
	m := sr.m
	limit := sparseLimit(len(es), C)
	kf := newKnapFront(true)
	var items []knapItem
	for _, k := range es {
		j := &m.jobs[free[k]]
		base := 0.0
		if c := choice[k]; c >= 0 && !j.onType(c, t) {
			base = j.opts[c].p
		}
		items = items[:0]
		for oi := range j.opts {
			o := &j.opts[oi]
			if !j.onType(oi, t) || o.p <= base || o.g/u > C {
				continue
			}
			items = append(items, knapItem{o.g / u, o.p, int32(oi)})
		}
		ok, stopped := kf.stage(items, base, true, C, limit, sr.clk)
		if stopped {
			return 0, nil, 3
		}
		if !ok {
			if dpFits(len(es), C) {
				return 0, nil, 1
			}
			return 0, nil, 2
		}
	}
	picks := make([]int32, len(es))
	c := C
	for n := len(es) - 1; n >= 0; n-- {
		oi := kf.pick(n, c)
		picks[n] = oi
		if oi >= 0 {
			c -= m.jobs[free[es[n]]].opts[oi].g / u
		}
	}
	return kf.val[len(kf.val)-1].v, picks, 0
}

// forcedFronts is forcedBounds' pair of programs on breakpoints: the
// value of the jobs before k (F[k]) and after k (B[k]) for every k, each
// job's items given by items(k). It reports false when the points grow
// past sparseLimit (stopped: the clock stopped first).
func (sr *search) forcedFronts(n, C int, items func(k int, buf []knapItem) []knapItem) (F, B [][]frontPt, ok, stopped bool) {
	limit := sparseLimit(2*(n+1), C)
	F = make([][]frontPt, n+1)
	B = make([][]frontPt, n+1)
	F[0] = []frontPt{{0, 0}}
	B[n] = []frontPt{{0, 0}}
	held := 2
	var buf []knapItem
	run := func(from []frontPt, k int) []frontPt {
		buf = items(k, buf[:0])
		if len(buf) == 0 {
			return from // (the stage is the previous row)
		}
		kf := &knapFront{val: from}
		if ok, stopped = kf.stage(buf, 0, false, C, limit-held, sr.clk); !ok {
			return nil
		}
		held += len(kf.val)
		return kf.val
	}
	for k := 0; k < n; k++ {
		if F[k+1] = run(F[k], k); F[k+1] == nil {
			return nil, nil, false, stopped
		}
	}
	for k := n - 1; k >= 0; k-- {
		if B[k] = run(B[k+1], k); B[k] == nil {
			return nil, nil, false, stopped
		}
	}
	return F, B, true, false
}

// joinFronts is the best of f and b together within c units: the best
// over f's points at or below c of their value plus b's at the rest (the
// table's max over every split, as f is constant between its points and
// b non-decreasing).
func joinFronts(f, b []frontPt, c int) float64 {
	best := math.Inf(-1)
	for _, p := range f {
		if p.w > c {
			break
		}
		if v := p.v + at(b, c-p.w); v > best {
			best = v
		}
	}
	return best
}

// acceptTypeStep is improveByType's step for type t from a program's
// result: best, the program's profit, and picks per entry of ks (positions
// in free; an option of t, or −1 for the job's choice off t, or none). The
// step is taken when forced or when it improves the profit of the
// current choices beyond eqTol and fits every row; it reports whether it
// was taken.
func (sr *search) acceptTypeStep(free []int32, capv []int, choice []int, ks []int, picks []int32, t int, best float64, force bool) bool {
	m := sr.m
	old := 0.0 // profit of the current choices of the program's jobs
	for _, k := range ks {
		if c := choice[k]; c >= 0 {
			old += m.jobs[free[k]].opts[c].p
		}
	}
	if !force && best <= old+sr.eqTol {
		return false
	}
	trial := append([]int(nil), choice...)
	for n, k := range ks {
		j := &m.jobs[free[k]]
		if oi := picks[n]; oi >= 0 {
			trial[k] = int(oi)
		} else if cur := choice[k]; cur >= 0 && j.onType(cur, t) {
			trial[k] = -1
		}
	}
	if force || sr.fitsAll(free, capv, trial) {
		copy(choice, trial)
		return true
	}
	return false
}
