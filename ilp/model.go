package ilp

import (
	"maps"
	"math"
	"slices"
)

// model is the preprocessed problem the search works on, in "profit space":
// every free (unpinned) job contributes 0 when unallocated and the profit
// p = ±(Value − Unallocated) of the option it takes; pinned jobs are folded
// into constants and removed capacity. The goal is to maximise total profit
// subject to the coupling rows (one per GPU type, one per quota).
type model struct {
	p     *Problem
	sign  float64  // +1 maximise, -1 minimise
	types []string // sorted type names; row r < len(types) is type types[r]
	nrows int      // len(types) + len(p.Quotas)
	cap   []int    // residual capacity per row after reservations and pins
	jobs  []mjob   // free jobs with at least one useful option
	pins  []int    // assignment of pinned jobs (-1 elsewhere)
	// optimisticBoxes: λ_r above ub[r] cannot improve the dual (see dualBox).
	ub []float64

	scale float64 // scan.scale
	dev   float64 // scan.dev
	// rest is the first job the model does not hold because the deadline
	// stopped building it (len(p.Jobs) when complete); restP bounds the
	// profit of the free jobs from rest on (Σ of their scan.best).
	rest      int
	restP     float64
	jobQuotas [][]int        // quotas covering each job
	typeRow   map[string]int // type row of each type
}

// mjob is one free job of the model.
type mjob struct {
	top    float64 // largest profit of its options: its term of the dual at λ = 0
	orig   int     // index in Problem.Jobs
	opts   []mopt  // useful options: positive profit, fit alone, not dominated
	groups []group // options grouped by the rows they use (= by GPU type)
	dual   []dgroup
	pts    []float64 // the hulls' points, see dgroup
}

// mopt is one useful option.
type mopt struct {
	k   int     // index in Problem.Jobs[orig].Options
	p   float64 // profit over staying unallocated
	g   int     // GPUs
	grp int     // index into mjob.groups
}

// group holds the options of one job that use the same coupling rows (all of
// one GPU type; a type's options form several groups only when a quota's
// MinGPUs threshold falls among them), and the subset on the upper concave hull of (GPUs, profit)
// with the origin, which is all the Lagrangian subproblem needs.
type group struct {
	rows []int32 // coupling rows every option of the group uses, coefficient g
	hull []int32 // indices into mjob.opts, GPUs ascending
}

// dgroup is a group as the dual function reads it (mjob.dual, parallel to
// mjob.groups): small, and its hull's points laid out flat in mjob.pts,
// so that an evaluation over thousands of jobs streams through memory.
type dgroup struct {
	off, n int32 // the hull's points are mjob.pts[2·off:2·(off+n)], (profit, GPUs) pairs
	// row is the group's only coupling row (its type's), or -1 when it
	// also counts toward quotas (its rows are then in mjob.groups)
	row int32
	// at is the hull position (-1: the origin) that maximised the
	// Lagrangian profit at the last price asked (see argmax): the dual's
	// successive multipliers are close, and the maximiser moves little.
	at int32
}

// newModel builds the model of a validated problem.
func newModel(p *Problem) *model {
	sc, _ := p.validate(nil, nil)
	return buildModel(p, sc, nil)
}

// modelNanos is about the time building the model takes per option, in
// nanoseconds, on a quiet machine.
const modelNanos = 200

// buildModel builds the model of a problem validated with scan sc. With a
// clock, it looks at the time every few thousand options and stops at the
// deadline: the model then holds the free jobs before m.rest only (see
// model.rest).
func buildModel(p *Problem, sc scan, clk *clock) *model {
	m := newModelRows(p, sc)
	b := newBuilder(m)
	b.subtractPins()
	trace("build.setup")
	work := 0
	for i := range p.Jobs {
		if p.Jobs[i].Pin >= 0 {
			continue
		}
		if clk != nil && b.buildOver(clk, i, &work) {
			m.stopAt(i, sc)
			break
		}
		// the rest of the model has at most an option, a group, a hull
		// point and two row entries per option still to come
		b.i32.rest, b.f64.rest, b.dgs.rest = 8*b.nopts, 2*b.nopts, b.nopts
		b.nopts -= len(p.Jobs[i].Options)
		if !b.candidates(i) {
			continue
		}
		mj := b.job(i)
		m.noteBounds(&mj)
		m.jobs = append(m.jobs, mj)
	}
	trace("build.jobs")
	m.jobQuotas = b.jobQuotas
	return m
}

// newModelRows returns the model's rows: one per GPU type (sorted by name)
// with its capacity less the reservation, then one per quota with its
// limit; the jobs come later.
func newModelRows(p *Problem, sc scan) *model {
	m := &model{p: p, sign: 1, scale: sc.scale, dev: sc.dev, rest: len(p.Jobs)}
	if p.Sense == Minimize {
		m.sign = -1
	}
	m.types = slices.Sorted(maps.Keys(p.Capacity))
	m.nrows = len(m.types) + len(p.Quotas)
	m.typeRow = make(map[string]int, len(m.types))
	m.cap = make([]int, m.nrows)
	total := 0 // at most MaxGPUs (Validate)
	for r, t := range m.types {
		m.typeRow[t] = r
		m.cap[r] = p.Capacity[t] - p.Reserved[t]
		total += m.cap[r]
	}
	for qi := range p.Quotas {
		// a limit above the total capacity cannot bind; clamping it keeps
		// every sum of a row's usage far from overflowing
		m.cap[len(m.types)+qi] = min(p.Quotas[qi].Limit, total)
	}
	// λ_r beyond the largest profit per GPU of any option using row r
	// cannot lower the dual function (noteBounds)
	m.ub = make([]float64, m.nrows)
	return m
}

// builder holds the scratch space and arenas of buildModel. The model's
// options, groups and row lists live in large arenas (most of the cost of
// building a model of many jobs is allocation), allocated in chunks as the
// model grows: one allocation for every option would come before the
// first look at the clock, and cost milliseconds.
type builder struct {
	m         *model
	p         *Problem
	jobQuotas [][]int // quotas covering each job
	// typeQuotas[tr] lists the quotas of job stamp[tr] (of jobQuotas) that
	// count options of type row tr, whatever their size (see quotasOf)
	typeQuotas [][]int
	stamp      []int
	rowBuf     []int32
	cands      []candOpt // candidate options of the current job
	stack      []int32   // hull's scratch
	nopts      int       // options of the free jobs not yet read: the arena's next chunk need not be larger
	opts       []mopt
	groups     []group
	i32        arena[int32]
	f64        arena[float64]
	dgs        arena[dgroup]
}

func newBuilder(m *model) *builder {
	p := m.p
	b := &builder{m: m, p: p, jobQuotas: jobQuotaLists(p), typeQuotas: make([][]int, len(m.types)), stamp: make([]int, len(m.types))}
	for tr := range b.stamp {
		b.stamp[tr] = -1
	}
	nfree := 0
	for i := range p.Jobs {
		if p.Jobs[i].Pin < 0 {
			nfree++
			b.nopts += len(p.Jobs[i].Options)
		}
	}
	m.jobs = make([]mjob, 0, nfree)
	return b
}

// quotasOf returns the quotas of job ji that count options of type row tr,
// whatever their size.
func (b *builder) quotasOf(ji, tr int) []int {
	if b.stamp[tr] != ji {
		b.stamp[tr] = ji
		b.typeQuotas[tr] = b.typeQuotas[tr][:0]
		t := b.m.types[tr]
		for _, qi := range b.jobQuotas[ji] {
			if b.p.Quotas[qi].countsType(t) {
				b.typeQuotas[tr] = append(b.typeQuotas[tr], qi)
			}
		}
	}
	return b.typeQuotas[tr]
}

// quotaCount is the number of job ji's quotas an option of g GPUs of type
// row tr counts toward: within one type, a larger option counts toward
// every quota a smaller one does, so options sorted by GPUs have the same
// rows exactly when they have the same count.
func (b *builder) quotaCount(ji, g, tr int) int {
	n := 0
	for _, qi := range b.quotasOf(ji, tr) {
		if g >= b.p.Quotas[qi].MinGPUs {
			n++
		}
	}
	return n
}

// rowsOf sets b.rowBuf to the coupling rows an option of g GPUs of type row
// tr of job ji uses: its type row first, then the quota rows it counts
// toward.
func (b *builder) rowsOf(ji, g, tr int) []int32 {
	b.rowBuf = append(b.rowBuf[:0], int32(tr))
	if len(b.jobQuotas[ji]) == 0 {
		return b.rowBuf
	}
	for _, qi := range b.quotasOf(ji, tr) {
		if g >= b.p.Quotas[qi].MinGPUs {
			b.rowBuf = append(b.rowBuf, int32(len(b.m.types)+qi))
		}
	}
	return b.rowBuf
}

// subtractPins takes the pinned jobs' options off the rows' capacities and
// records the pins.
func (b *builder) subtractPins() {
	m := b.m
	m.pins = make([]int, len(b.p.Jobs))
	for i, j := range b.p.Jobs {
		m.pins[i] = -1
		if j.Pin >= 0 {
			m.pins[i] = j.Pin
			o := j.Options[j.Pin]
			for _, r := range b.rowsOf(i, o.GPUs, m.typeRow[o.Type]) {
				m.cap[r] -= o.GPUs
			}
		}
	}
}

// candidates sets b.cands to the options of job i worth keeping: positive
// profit over staying unallocated, and fit alone in every row they use;
// sorted by type row, GPUs and profit (larger first). It reports whether
// there is any.
func (b *builder) candidates(i int) bool {
	m, j := b.m, &b.p.Jobs[i]
	b.cands = b.cands[:0]
	quotas := len(b.jobQuotas[i]) > 0
	lastType, lastRow := "", -1
	for k := range j.Options {
		o := &j.Options[k]
		pr := m.sign * (o.Value - j.Unallocated)
		if !(pr > 0) {
			continue
		}
		if o.Type != lastType || lastRow < 0 {
			lastType, lastRow = o.Type, m.typeRow[o.Type]
		}
		if o.GPUs > m.cap[lastRow] || quotas && !b.fitsQuotas(i, o.GPUs, lastRow) {
			continue
		}
		b.cands = append(b.cands, candOpt{mopt{k: k, p: pr, g: o.GPUs}, lastRow})
	}
	// (options usually come sorted by type and size: no sort then)
	if !slices.IsSortedFunc(b.cands, candOrder) {
		slices.SortFunc(b.cands, candOrder)
	}
	return len(b.cands) > 0
}

// fitsQuotas reports whether an option of g GPUs of type row tr of job i
// fits alone in every quota row it counts toward.
func (b *builder) fitsQuotas(i, g, tr int) bool {
	for _, qi := range b.quotasOf(i, tr) {
		if g >= b.p.Quotas[qi].MinGPUs && g > b.m.cap[len(b.m.types)+qi] {
			return false
		}
	}
	return true
}

// job builds the model job of problem job i from its candidates: per type,
// the options not dominated by a smaller one, grouped by the rows they use,
// with each group's hull and the dual's view of them.
func (b *builder) job(i int) mjob {
	ntypes := 1
	for a := 1; a < len(b.cands); a++ {
		if b.cands[a].tr != b.cands[a-1].tr {
			ntypes++
		}
	}
	mj := mjob{orig: i, opts: b.takeOpts(len(b.cands)), groups: b.takeGroups(ntypes)}
	for a := 0; a < len(b.cands); {
		tr := b.cands[a].tr
		start := len(mj.opts)
		a = b.undominated(&mj, a)
		b.groupType(&mj, i, tr, start)
	}
	layDual(&mj, &b.dgs, &b.f64)
	return mj
}

// undominated appends to j.opts the candidates from a on of a's type that
// no smaller one of that type dominates (a smaller option uses no more of
// every row: a quota with MinGPUs counts larger options only), and returns
// the first candidate of the next type.
func (b *builder) undominated(j *mjob, a int) int {
	tr := b.cands[a].tr
	best := math.Inf(-1)
	for ; a < len(b.cands) && b.cands[a].tr == tr; a++ {
		if o := b.cands[a].mopt; o.p > best {
			best = o.p
			j.opts = append(j.opts, o)
		}
	}
	return a
}

// groupType groups the options j.opts[start:] of type row tr of problem job
// i by the rows they use. Options of one type use the same rows except for
// MinGPUs thresholds, so the row sets form contiguous runs by GPUs: one
// group per run.
func (b *builder) groupType(j *mjob, i, tr, start int) {
	for x := start; x < len(j.opts); {
		rows := b.rowsOf(i, j.opts[x].g, tr)
		y := x + 1
		if len(b.jobQuotas[i]) == 0 {
			y = len(j.opts) // a type row only: one group
		}
		for y < len(j.opts) && b.quotaCount(i, j.opts[y].g, tr) == len(rows)-1 {
			y++
		}
		gi := len(j.groups)
		for z := x; z < y; z++ {
			j.opts[z].grp = gi
		}
		var h []int32
		h, b.stack = hull(j.opts[:y], x, b.stack)
		j.groups = append(j.groups, group{rows: b.i32.clone(rows, numberChunk), hull: b.i32.clone(h, numberChunk)})
		x = y
	}
}

// takeOpts returns an empty slice of capacity n from the options' arena.
func (b *builder) takeOpts(n int) []mopt {
	if len(b.opts)+n > cap(b.opts) {
		b.opts = make([]mopt, 0, max(min(optChunk, b.nopts+n), n))
	}
	k := len(b.opts)
	b.opts = b.opts[:k+n]
	return b.opts[k : k : k+n]
}

// takeGroups returns an empty slice of capacity n from the groups' arena.
func (b *builder) takeGroups(n int) []group {
	if len(b.groups)+n > cap(b.groups) {
		b.groups = make([]group, 0, max(min(1<<10, b.nopts+n), n))
	}
	k := len(b.groups)
	b.groups = b.groups[:k+n]
	return b.groups[k : k : k+n]
}

// noteBounds records job j's largest profit (its term of the dual at λ = 0)
// and raises the multipliers' upper bounds to its options' profits per GPU.
func (m *model) noteBounds(j *mjob) {
	for _, o := range j.opts {
		j.top = math.Max(j.top, o.p)
		for _, r := range j.groups[o.grp].rows {
			m.ub[r] = math.Max(m.ub[r], o.p/float64(o.g))
		}
	}
}

// chunkOf is the size of an arena's next chunk: size, or rest when it is
// positive and smaller.
func chunkOf(size, rest int) int {
	if rest > 0 {
		return min(size, rest)
	}
	return size
}

// optChunk is the number of options of the model's arena allocated at a
// time (1 MB).
const optChunk = 1 << 15

// candOpt is a candidate option of a job while its model is built, with
// its type row.
type candOpt struct {
	mopt
	tr int
}

// candOrder orders candidates by type row, GPUs, profit (larger first) and
// index.
func candOrder(a, b candOpt) int {
	switch {
	case a.tr != b.tr:
		return a.tr - b.tr
	case a.g != b.g:
		return a.g - b.g
	case a.p != b.p:
		if a.p > b.p {
			return -1
		}
		return 1
	}
	return a.k - b.k
}

// stopAt records that the model holds the free jobs before i only.
func (m *model) stopAt(i int, sc scan) {
	m.rest = i
	for k := i; k < len(m.p.Jobs); k++ {
		if m.p.Jobs[k].Pin < 0 {
			m.restP += sc.best[k]
		}
	}
}

// allJobs lists every model job, the free set of the root.
func (m *model) allJobs() []int32 {
	free := make([]int32, len(m.jobs))
	for i := range free {
		free[i] = int32(i)
	}
	return free
}

// arena hands out slices of T from large shared chunks.
type arena[T any] struct {
	buf []T
	// rest, when positive, bounds what is still to come: a chunk is no
	// larger than it (a small model allocates little)
	rest int
}

// The arenas' chunk sizes, in elements (see chunkOf): a dgroup is larger
// than a number.
const (
	numberChunk = 1 << 14 // the int32 and float64 arenas
	dgroupChunk = 1 << 12
)

// take returns n zeroed Ts of the arena, starting a new chunk of size
// elements (see chunkOf; n if more) when the current one has no room.
func (a *arena[T]) take(n, size int) []T {
	if len(a.buf)+n > cap(a.buf) {
		a.buf = make([]T, 0, max(chunkOf(size, a.rest), n))
	}
	k := len(a.buf)
	a.buf = a.buf[:k+n]
	return a.buf[k : k+n : k+n]
}

// clone returns a copy of s in the arena (nil for an empty s), as take.
func (a *arena[T]) clone(s []T, size int) []T {
	if len(s) == 0 {
		return nil
	}
	c := a.take(len(s), size)
	copy(c, s)
	return c
}

// layDual lays out the dual's view of j's groups (j.dual, j.pts) in the
// arenas.
func layDual(j *mjob, dgs *arena[dgroup], f64 *arena[float64]) {
	n := 0
	for gi := range j.groups {
		n += len(j.groups[gi].hull)
	}
	j.pts = f64.take(2*n, numberChunk)
	j.dual = dgs.take(len(j.groups), dgroupChunk)
	off := 0
	for gi := range j.groups {
		g := &j.groups[gi]
		d := &j.dual[gi]
		d.off, d.n, d.at, d.row = int32(off), int32(len(g.hull)), -1, -1
		if len(g.rows) == 1 {
			d.row = g.rows[0]
		}
		for _, oi := range g.hull {
			j.pts[2*off], j.pts[2*off+1] = j.opts[oi].p, float64(j.opts[oi].g)
			off++
		}
	}
}

// argmax returns the position in group d's hull (-1: the origin, profit 0)
// of largest Lagrangian profit p − pi·g, the earliest of equal ones, and
// that profit. The hull is concave with strictly decreasing slopes, so the
// profits along it rise to their maximum and then fall: the search climbs
// from the position of the previous call (a few steps when the price moved
// a little) instead of reading every point.
func (d *dgroup) argmax(pts []float64, pi float64) (int, float64) {
	pts = pts[2*d.off : 2*(d.off+d.n)]
	k := int(d.at)
	v := 0.0
	if k >= 0 {
		v = pts[2*k] - pi*pts[2*k+1]
	}
	for 2*k+3 < len(pts) {
		w := pts[2*k+2] - pi*pts[2*k+3]
		if !(w > v) {
			break
		}
		k, v = k+1, w
	}
	for k >= 0 {
		w := 0.0
		if k > 0 {
			w = pts[2*k-2] - pi*pts[2*k-1]
		}
		if !(w >= v) {
			break
		}
		k, v = k-1, w
	}
	d.at = int32(k)
	return k, v
}

// hull returns the indices (>= start) of opts[start:] on the upper concave
// hull of {(0,0)} ∪ {(g, p)}; opts[start:] is sorted by g with p increasing.
// The result aliases buf (scratch, returned for reuse).
func hull(opts []mopt, start int, buf []int32) (h, scratch []int32) {
	// points with the origin as implicit first point
	px := func(i int32) (float64, float64) {
		if i < 0 {
			return 0, 0
		}
		return float64(opts[i].g), opts[i].p
	}
	stack := append(buf[:0], -1)
	for i := start; i < len(opts); i++ {
		x3, y3 := px(int32(i))
		for len(stack) >= 2 {
			x1, y1 := px(stack[len(stack)-2])
			x2, y2 := px(stack[len(stack)-1])
			// remove middle point if it is on or below the chord 1-3
			if (y2-y1)*(x3-x1) <= (y3-y1)*(x2-x1) {
				stack = stack[:len(stack)-1]
			} else {
				break
			}
		}
		stack = append(stack, int32(i))
	}
	return stack[1:], stack
}

// onType reports whether option oi of j uses type row t.
func (j *mjob) onType(oi, t int) bool {
	return int(j.groups[j.opts[oi].grp].rows[0]) == t
}

// price returns the Lagrangian price per GPU of group g at multipliers lam.
func (g *group) price(lam []float64) float64 {
	var s float64
	for _, r := range g.rows {
		s += lam[r]
	}
	return s
}

// best returns the largest Lagrangian profit max(0, p − π·g) of job j at lam
// and the option index achieving it (-1 for none). Ties keep the earliest
// option. Only the hull points can be maximisers; each group's is found by
// climbing its hull from the last call's (dgroup.argmax).
func (j *mjob) best(lam []float64) (float64, int) {
	bv, bo := 0.0, -1
	for gi := range j.dual {
		d := &j.dual[gi]
		var pi float64
		if d.row >= 0 {
			pi = lam[d.row]
		} else {
			pi = j.groups[gi].price(lam)
		}
		if k, v := d.argmax(j.pts, pi); k >= 0 && v > bv {
			bv, bo = v, int(j.groups[gi].hull[k])
		}
	}
	return bv, bo
}

// lagChoice returns the option maximising the Lagrangian profit of job j at
// lam (-1 for none), breaking ties within 1e-12 towards fewer GPUs.
func (j *mjob) lagChoice(lam []float64) int {
	bv, bo := 0.0, -1
	for oi := range j.opts {
		o := &j.opts[oi]
		v := o.p - j.groups[o.grp].price(lam)*float64(o.g)
		if v > bv+1e-12 || (v > bv-1e-12 && bo >= 0 && o.g < j.opts[bo].g) {
			bv, bo = v, oi
		}
	}
	return bo
}

// dual evaluates the Lagrangian dual function at lam over the given jobs with
// row capacities capv: f = λ·cap + Σ_j max(0, max_o p_o − π_o g_o). It returns
// f and writes the subgradient (cap minus the rows used by the maximisers)
// into sg.
func (m *model) dual(jobs []int32, capv []int, lam []float64, sg []float64) float64 {
	f, _ := m.dualUntil(jobs, capv, lam, sg, nil)
	return f
}

// dualChunk is the number of jobs dualUntil evaluates between two looks
// at its stop function: some tens of microseconds.
const dualChunk = 128

// dualUntil is dual that gives up (ok false, f meaningless) as soon as stop
// (when non-nil) reports true, looking at it every dualChunk jobs: one
// evaluation over thousands of jobs takes milliseconds.
func (m *model) dualUntil(jobs []int32, capv []int, lam []float64, sg []float64, stop func() bool) (f float64, ok bool) {
	for r := range sg {
		sg[r] = float64(capv[r])
		f += lam[r] * float64(capv[r])
	}
	for x, ji := range jobs {
		if stop != nil && x%dualChunk == dualChunk-1 && stop() {
			return f, false
		}
		j := &m.jobs[ji]
		v, oi := j.best(lam)
		f += v
		if oi >= 0 {
			o := &j.opts[oi]
			for _, r := range j.groups[o.grp].rows {
				sg[r] -= float64(o.g)
			}
		}
	}
	return f, true
}

// aggregatePrice returns starting multipliers for the root's dual: every
// type row priced at μ, the price of the aggregate row (all type rows
// summed, capacity Σ_t capv[t]) in its LP relaxation, and the quota rows
// at 0. With one row the LP is solved by handing out the capacity along
// the jobs' upper concave hulls of (GPUs, profit), steepest segment first;
// μ is the slope of the segment that exhausts it (0 when every job gets
// its largest hull point). It is exact for one type and, with several,
// far closer to the dual's minimiser than λ = 0, from which the box-step
// method needs tens of evaluations to move. It returns nil when tick
// (accounting for the work, see clock.tick) stops it.
func (m *model) aggregatePrice(jobs []int32, capv []int, tick func(n int) bool) []float64 {
	nt := len(m.types)
	capTotal := 0
	for t := 0; t < nt; t++ {
		capTotal += capv[t]
	}
	n := 0
	for _, ji := range jobs {
		n += len(m.jobs[ji].pts) / 2
	}
	segs := make([]aggSeg, 0, n)
	var pts, tmp []aggPt
	var stack []int
	for _, ji := range jobs {
		j := &m.jobs[ji]
		if tick(64 * len(j.pts)) {
			return nil
		}
		// the upper hull from the origin of the job's options: its
		// segments have decreasing slopes
		pts, tmp, stack = unionHull(j, pts, tmp, stack)
		x0, y0 := 0.0, 0.0
		for _, q := range pts {
			if q.p > y0 && q.g > x0 {
				segs = append(segs, aggSeg{(q.p - y0) / (q.g - x0), int(q.g - x0)})
				x0, y0 = q.g, q.p
			}
		}
	}
	if tick(64 * len(segs)) {
		return nil
	}
	lam := make([]float64, m.nrows)
	if mu, ok := crossingSlope(segs, capTotal); ok {
		for t := 0; t < nt; t++ {
			lam[t] = math.Min(mu, m.ub[t])
		}
	}
	return lam
}

// unionHull sets pts to the upper concave hull (origin left out, GPUs
// ascending) of the hull points of every group of j, merging the groups'
// hulls one at a time into the hull so far (a point below a group's hull
// is below the union's), with tmp and stack as scratch.
func unionHull(j *mjob, pts, tmp []aggPt, stack []int) ([]aggPt, []aggPt, []int) {
	pts = pts[:0]
	for gi := range j.dual {
		d := &j.dual[gi]
		gp := j.pts[2*d.off : 2*(d.off+d.n)]
		// merge by GPUs ascending, profit descending
		tmp = tmp[:0]
		x, y := 0, 0
		for x < len(pts) || y < len(gp) {
			if y >= len(gp) || x < len(pts) && (pts[x].g < gp[y+1] || pts[x].g == gp[y+1] && pts[x].p >= gp[y]) {
				tmp = append(tmp, pts[x])
				x++
			} else {
				tmp = append(tmp, aggPt{g: gp[y+1], p: gp[y]})
				y += 2
			}
		}
		stack = upperHull(tmp, stack)
		pts = pts[:0]
		for _, k := range stack {
			pts = append(pts, tmp[k])
		}
	}
	return pts, tmp, stack
}

// aggPt is a point (GPUs, profit) of aggregatePrice's hulls.
type aggPt struct{ g, p float64 }

// aggSeg is a segment of a job's hull: its slope and width in GPUs.
type aggSeg struct {
	slope float64
	g     int
}

// upperHull returns the indices into pts (sorted by GPUs, profit
// descending) of the upper concave hull of the origin and pts, the origin
// left out, GPUs ascending; points on a chord are dropped. It reuses buf.
func upperHull(pts []aggPt, buf []int) []int {
	st := buf[:0]
	at := func(x int) aggPt {
		if x < 0 {
			return aggPt{}
		}
		return pts[x]
	}
	for i := range pts {
		p3 := pts[i]
		for len(st) >= 1 {
			p1 := aggPt{}
			if len(st) >= 2 {
				p1 = at(st[len(st)-2])
			}
			p2 := at(st[len(st)-1])
			// drop the middle point when on or below the chord 1-3
			if (p2.p-p1.p)*(p3.g-p1.g) <= (p3.p-p1.p)*(p2.g-p1.g) {
				st = st[:len(st)-1]
			} else {
				break
			}
		}
		st = append(st, i)
	}
	return st
}

// crossingSlope returns the slope of the segment at which the segments,
// taken in decreasing slope, first hold more than capTotal GPUs in all (ok
// false when they never do): the price of the aggregate row in its LP. It
// selects it in expected linear time, partitioning around pivots, instead
// of sorting; segs is reordered.
func crossingSlope(segs []aggSeg, capTotal int) (float64, bool) {
	acc := 0 // GPUs of the segments steeper than every one of segs
	for len(segs) > 0 {
		pv := medianOf3(segs[0].slope, segs[len(segs)/2].slope, segs[len(segs)-1].slope)
		// [0,gt) steeper than pv, [gt,eq) equal, [eq,len) less steep
		gt, eq := 0, 0
		wg, we := 0, 0
		for x := range segs {
			switch sl := segs[x].slope; {
			case sl > pv:
				wg = addCount(wg, segs[x].g)
				segs[x], segs[eq] = segs[eq], segs[x]
				segs[eq], segs[gt] = segs[gt], segs[eq]
				gt++
				eq++
			case sl == pv:
				we = addCount(we, segs[x].g)
				segs[x], segs[eq] = segs[eq], segs[x]
				eq++
			}
		}
		// (sums saturate: no row's capacity is near MaxInt)
		switch {
		case addCount(acc, wg) > capTotal:
			segs = segs[:gt]
		case addCount(addCount(acc, wg), we) > capTotal:
			return pv, true
		default:
			acc = addCount(addCount(acc, wg), we)
			segs = segs[eq:]
		}
	}
	return 0, false
}

// medianOf3 returns the median of a, b and c.
func medianOf3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = c
	}
	return max(a, b)
}

// zeroDual is the dual function at λ = 0 over jobs, Σ_j max_o p_o: a
// valid bound that costs no evaluation.
func (m *model) zeroDual(jobs []int32) float64 {
	f := 0.0
	for _, ji := range jobs {
		f += m.jobs[ji].top
	}
	return f
}

// minimizeDual approximately minimises the Lagrangian dual over λ in the box
// [0, ub] with a box-step cutting-plane method started at lam0 (nil = 0). Any
// returned λ gives a valid upper bound f(λ) on the profit of every integer
// (indeed every fractional) solution; the method stops when the cutting-plane
// model proves f(λ) within tol of the minimum, or after maxIter evaluations.
func (m *model) minimizeDual(jobs []int32, capv []int, lam0 []float64, tol float64, maxIter int) ([]float64, float64) {
	return m.minimizeDualUntil(jobs, capv, lam0, tol, maxIter, nil)
}

// minimizeDualUntil is minimizeDual that also stops, with the best λ so
// far, as soon as stop (when non-nil) reports true, also in the middle of
// an evaluation of the dual or of the master program. It evaluates the
// dual at least once unless first (when non-nil) stops the first
// evaluation, which then returns λ = 0 and its value without an
// evaluation (zeroDual; lam0 is then ignored).
func (m *model) minimizeDualUntil(jobs []int32, capv []int, lam0 []float64, tol float64, maxIter int, stop func() bool) ([]float64, float64) {
	return m.minimizeDualFirst(jobs, capv, lam0, tol, maxIter, stop, nil, 0)
}

// minimizeDualFirst is minimizeDualUntil with a separate stop function for
// the first evaluation (see minimizeDualUntil), and a stall test: with
// stall > 0 it also stops when the best value found has improved by less
// than stall times its magnitude over the last stallEvals iterations.
func (m *model) minimizeDualFirst(jobs []int32, capv []int, lam0 []float64, tol float64, maxIter int, stop, first func() bool, stall float64) ([]float64, float64) {
	var act []int
	for r := 0; r < m.nrows; r++ {
		if m.ub[r] > 0 {
			act = append(act, r)
		}
	}
	evals := 0
	eval := func(lam, sg []float64) (float64, bool) {
		s := stop
		if evals++; evals == 1 {
			s = first
		}
		return m.dualUntil(jobs, capv, lam, sg, s)
	}
	lam, f, ok := m.minimizeFn(eval, act, lam0, tol, maxIter, stop, stall)
	if !ok {
		return make([]float64, m.nrows), m.zeroDual(jobs)
	}
	return lam, f
}

// stallEvals is the window of the dual's stall test (minimizeDualFirst).
const stallEvals = 10

// minimizeFn minimises a convex piecewise-linear function of the
// multipliers (given with a subgradient by eval) over the rows in act, within
// [0, ub]; the other multipliers stay at their lam0 values (0 when lam0 is
// nil). It is the box-step cutting-plane method described at minimizeDual;
// stop (when non-nil) ends it early, and so does a stall (see
// minimizeDualFirst; 0: never). eval reports false when it was
// interrupted: minimizeFn then stops with the best λ so far, and reports
// ok false when the first evaluation (at lam0) was.
func (m *model) minimizeFn(eval func(lam, sg []float64) (float64, bool), act []int, lam0 []float64, tol float64, maxIter int, stop func() bool, stall float64) (lam []float64, fc float64, ok bool) {
	n := m.nrows
	center := make([]float64, n)
	if lam0 != nil {
		copy(center, lam0)
	}
	for r := range center {
		center[r] = math.Min(math.Max(center[r], 0), m.ub[r])
	}
	sg := make([]float64, n)
	fc, ok = eval(center, sg)
	if !ok {
		return center, math.Inf(1), false
	}
	if len(act) == 0 {
		return center, fc, true
	}
	type cut struct {
		alpha float64   // f(λk) − g·λk
		g     []float64 // subgradient
	}
	mkCut := func(lam, g []float64, f float64) cut {
		c := cut{g: append([]float64(nil), g...)}
		c.alpha = f
		for r := range g {
			c.alpha -= g[r] * lam[r]
		}
		return c
	}
	cuts := []cut{mkCut(center, sg, fc)}
	delta := make([]float64, n)
	for _, r := range act {
		delta[r] = math.Max(m.ub[r]/4, 1e-9)
		if center[r] > 0 {
			delta[r] = math.Max(center[r]/2, delta[r]/8)
		}
	}
	lam = make([]float64, n)
	lo := make([]float64, n)
	hi := make([]float64, n)
	na := len(act)
	var hist [stallEvals]float64 // fc at the start of the last iterations
	for it := 0; it < maxIter; it++ {
		if stop != nil && stop() {
			break
		}
		if stall > 0 {
			if it >= stallEvals && hist[it%stallEvals]-fc < stall*math.Abs(fc) {
				break
			}
			hist[it%stallEvals] = fc
		}
		// master: variables y_a = λ_a − lo_a (a in act) and t = θ − θlo
		thLo := math.Inf(-1)
		for r := range lo {
			lo[r], hi[r] = center[r], center[r]
		}
		for _, r := range act {
			lo[r] = math.Max(0, center[r]-delta[r])
			hi[r] = math.Min(m.ub[r], center[r]+delta[r])
		}
		for _, c := range cuts {
			v := c.alpha
			for r := range c.g {
				v += math.Min(c.g[r]*lo[r], c.g[r]*hi[r])
			}
			thLo = math.Max(thLo, v)
		}
		A := make([][]float64, 0, len(cuts)+na)
		b := make([]float64, 0, len(cuts)+na)
		for _, c := range cuts {
			row := make([]float64, na+1)
			rh := thLo - c.alpha
			for r := range c.g {
				rh -= c.g[r] * lo[r]
			}
			for a, r := range act {
				row[a] = c.g[r]
			}
			row[na] = -1
			A = append(A, row)
			b = append(b, rh)
		}
		for a, r := range act {
			row := make([]float64, na+1)
			row[a] = 1
			A = append(A, row)
			b = append(b, hi[r]-lo[r])
		}
		obj := make([]float64, na+1)
		obj[na] = -1
		x, val, solved := denseLPUntil(A, b, obj, stop)
		if !solved {
			break
		}
		theta := thLo - val
		copy(lam, center)
		atEdge := false
		for a, r := range act {
			lam[r] = math.Min(math.Max(lo[r]+x[a], 0), m.ub[r])
			eps := 1e-9 * (1 + delta[r])
			if (lo[r] > 0 && lam[r]-lo[r] < eps) || (hi[r] < m.ub[r] && hi[r]-lam[r] < eps) {
				atEdge = true
			}
		}
		if fc-theta <= tol {
			if !atEdge {
				break // the model's minimum is inside the box: center is tol-optimal
			}
			for _, r := range act {
				delta[r] *= 4
			}
			continue
		}
		f, done := eval(lam, sg)
		if !done {
			break // interrupted
		}
		cuts = append(cuts, mkCut(lam, sg, f))
		if f < fc-0.1*(fc-theta) {
			copy(center, lam)
			fc = f
			if atEdge {
				for _, r := range act {
					delta[r] *= 2
				}
			}
		} else if f > fc+0.5*(fc-theta) {
			for _, r := range act {
				delta[r] *= 0.5
			}
		}
		if len(cuts) > 60 {
			// drop the oldest cuts that are slack at the center, keep the newest
			keep := cuts[:0:0]
			for ci, c := range cuts {
				v := c.alpha
				for r := range c.g {
					v += c.g[r] * center[r]
				}
				if ci >= len(cuts)-30 || fc-v < 1e-9*(1+math.Abs(fc)) {
					keep = append(keep, c)
				}
			}
			cuts = keep
		}
	}
	return center, fc, true
}
