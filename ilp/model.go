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
	// rowScale, nil on rows of small counts, is per row the power of two
	// by which the dual's cutting-plane method multiplies the row's
	// multiplier (see rowScales).
	rowScale []float64

	scale float64 // scan.scale
	dev   float64 // scan.dev
	// rest is the first job the model does not hold because the deadline
	// stopped building it (len(p.Jobs) when complete); restP bounds the
	// profit of the free jobs from rest on (Σ of their scan.best).
	rest      int
	restP     float64
	jobQuotas [][]int        // quotas covering each job
	typeRow   map[string]int // type row of each type
	tq        *typeQuotas    // the quotas of each job that count each type (quotasOfType)
	lateIdx   *lateRows      // the late path's quota index, built on first use (see lateIndex)
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

// mopt is one useful option: 24 bytes (a model holds most of its
// problem's options, 203,000 on the 5,000-job corpus instances).
type mopt struct {
	k   int32   // index in Problem.Jobs[orig].Options
	grp int32   // index into mjob.groups
	p   float64 // profit over staying unallocated
	g   int     // GPUs
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
	// row is the group's type row (its first coupling row), and q its
	// only other row when it counts toward one quota (-1: none; -2: two
	// or more, whose rows are then read in mjob.groups): the price of a
	// group of one or two rows is read here, without a cache miss on its
	// row list (group.price)
	row, q int32
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
	b.buildJobs(0, sc, clk)
	b.finish()
	return m
}

// finish hands the builder's quota lists to the model.
func (b *builder) finish() {
	m := b.m
	m.jobQuotas, m.tq = b.jobQuotas, b.tq
	if m.lateIdx.listed == nil {
		m.lateIdx.useJobQuotas(b.p, m.jobQuotas) // (the index was built by subtractPins, before the lists)
	}
}

// buildJobs builds the model's jobs from problem job from on (see
// buildModel).
func (b *builder) buildJobs(from int, sc scan, clk *clock) {
	p, m := b.p, b.m
	work, off := 0, 0
	for i := range from {
		off += len(p.Jobs[i].Options)
	}
	recorded := len(sc.rows) == b.nall
	for i := from; i < len(p.Jobs); i++ {
		n := len(p.Jobs[i].Options)
		if off += n; p.Jobs[i].Pin >= 0 {
			continue
		}
		var rows []uint8
		if recorded {
			rows = sc.rows[off-n : off]
		}
		if clk != nil && b.buildOver(clk, i, &work) {
			m.stopAt(i, sc)
			break
		}
		b.add(i, rows)
	}
	trace("build.jobs")
}

// add builds the model job of problem job i (rows: its options' type
// rows, or nil) and adds it to the model when it has options worth
// keeping.
func (b *builder) add(i int, rows []uint8) {
	// the rest of the model has at most an option, a group, a hull
	// point and two row entries per option still to come
	b.i32.rest, b.f64.rest, b.dgs.rest = 8*b.nopts, 2*b.nopts, b.nopts
	b.nopts -= len(b.p.Jobs[i].Options)
	if mj, ok := b.job(i, rows); ok {
		b.m.jobs = append(b.m.jobs, mj)
	}
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
	jobQuotas [][]int     // quotas covering each job
	tq        *typeQuotas // the quotas of each job that count each type (see quotasOf)
	rowBuf    []int32
	cands     []candOpt // candidate options of the current job (when not in order)
	spans     []span    // the current job's groups (see keep)
	hulls     []int32   // the current job's hulls, one after the other
	runTr     int       // keep's current type row (-1: none yet)
	best      float64   // keep's largest profit of the current type row
	nq        int       // the number of quotas the current group counts toward
	rowOnly   [][]int32 // rowOnly[tr] = {tr}: the rows of a group of type row tr that counts toward no quota
	nopts     int       // options of the free jobs not yet read: the arena's next chunk need not be larger
	nall      int       // options of every job
	run       quotaRun  // the current job's quotas over its current type (keepInOrder)
	opts      []mopt
	groups    []group
	i32       arena[int32]
	f64       arena[float64]
	dgs       arena[dgroup]
}

func newBuilder(m *model) *builder {
	p := m.p
	b := &builder{m: m, p: p, jobQuotas: jobQuotaLists(p)}
	b.tq = newTypeQuotas(p, m.types, b.jobQuotas)
	only := make([]int32, len(m.types))
	b.rowOnly = make([][]int32, len(m.types))
	for tr := range only {
		only[tr] = int32(tr)
		b.rowOnly[tr] = only[tr : tr+1 : tr+1]
	}
	nfree := 0
	for i := range p.Jobs {
		b.nall += len(p.Jobs[i].Options)
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
	return b.tq.quotasOf(ji, tr, b.jobQuotas)
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
		m.pins[i] = j.Pin
	}
	// every row's usage by the pins, by the late path's quota index
	// (lateindex.go; kept for the warm start's check and the late
	// admission): linear in the pins and the quotas' entries, where each
	// pin's rows cost pins × quotas over every job (28 ms past a deadline)
	used := m.lateIndex().usage(b.p, len(m.pins), func(i int) int { return m.pins[i] })
	for r := range m.cap {
		m.cap[r] -= used[r]
	}
}

// job builds the model job of problem job i (false when none of its
// options is worth keeping; rows: its options' type rows, or nil): its useful options, grouped by the rows they
// use, each group with its hull (keepInOrder or keepSorted, then
// groupOptions), and the dual's view of them (layDual).
func (b *builder) job(i int, rows []uint8) (mjob, bool) {
	mj := mjob{orig: i}
	if !b.keepInOrder(&mj, i, rows) {
		b.keepSorted(&mj, i)
	}
	if len(mj.opts) == 0 {
		return mj, false
	}
	b.groupOptions(&mj)
	layDual(&mj, &b.dgs, &b.f64)
	return mj, true
}

// keepInOrder is the build's single pass over job i's options, for the
// common case of options in candidate order (candOrder: by type row, GPUs
// and profit): it keeps the useful ones as it reads them (candidate and
// keep, the former inline). It reports false, with j.opts empty, as soon
// as two candidates are out of order: keepSorted then sorts them first.
// rows, when not nil, holds the options' type rows (scan.rows); the job's
// quotas are read once per type (quotaRun), not once per option.
func (b *builder) keepInOrder(j *mjob, i int, rows []uint8) bool {
	m, pj := b.m, &b.p.Jobs[i]
	quotas := len(b.jobQuotas[i]) > 0
	j.opts = b.reserveOpts(len(pj.Options))
	b.startJob()
	sign, un := m.sign, pj.Unallocated
	lastType, tr, trCap := "", -1, 0
	prevTr, prevG, prevP := -1, 0, 0.0 // the previous candidate
	run := &b.run
	for k := range pj.Options {
		o := &pj.Options[k]
		pr := sign * (o.Value - un)
		if !(pr > 0) {
			continue
		}
		r := tr
		if rows != nil {
			r = int(rows[k])
		} else if !sameString(o.Type, lastType) || tr < 0 {
			lastType, r = o.Type, m.typeRow[o.Type]
		}
		if r != tr {
			tr, trCap = r, m.cap[r]
			if quotas {
				b.startRun(i, tr)
			}
		}
		g := o.GPUs
		nq := 0
		if g > trCap {
			continue
		}
		if quotas {
			if nq = run.count(g); g > run.fit[nq] {
				continue
			}
		}
		// (candOrder(c, previous) < 0: out of order)
		if tr < prevTr || tr == prevTr && (g < prevG || g == prevG && pr > prevP) {
			j.opts = nil
			return false
		}
		prevTr, prevG, prevP = tr, g, pr
		if tr != b.runTr || pr > b.best {
			b.keep(j, i, candOpt{mopt{k: int32(k), p: pr, g: g}, tr}, nq)
		}
	}
	b.commitOpts(j)
	return true
}

// keepSorted is keepInOrder for options out of candidate order: it
// gathers job i's candidates, sorts them and keeps the useful ones.
func (b *builder) keepSorted(j *mjob, i int) {
	opts := b.p.Jobs[i].Options
	b.cands = b.cands[:0]
	lastType, lastRow := "", -1
	for k := range opts {
		if o := &opts[k]; o.Type != lastType || lastRow < 0 {
			lastType, lastRow = o.Type, b.m.typeRow[o.Type]
		}
		if c, ok := b.candidate(i, k, lastRow); ok {
			b.cands = append(b.cands, c)
		}
	}
	slices.SortFunc(b.cands, candOrder)
	j.opts = b.reserveOpts(len(b.cands))
	b.startJob()
	quotas := len(b.jobQuotas[i]) > 0
	for _, c := range b.cands {
		nq := 0
		if quotas {
			nq = b.quotaCount(i, c.g, c.tr)
		}
		b.keep(j, i, c, nq)
	}
	b.commitOpts(j)
}

// candidate returns option k (of type row tr) of job i as a candidate,
// false when it is not worth keeping: no positive profit over staying
// unallocated, or too large to fit alone in a row it uses.
func (b *builder) candidate(i, k, tr int) (candOpt, bool) {
	j := &b.p.Jobs[i]
	o := &j.Options[k]
	pr := b.m.sign * (o.Value - j.Unallocated)
	if !(pr > 0) || o.GPUs > b.m.cap[tr] || len(b.jobQuotas[i]) > 0 && !b.fitsQuotas(i, o.GPUs, tr) {
		return candOpt{}, false
	}
	return candOpt{mopt{k: int32(k), p: pr, g: o.GPUs}, tr}, true
}

// startJob readies keep for the next job.
func (b *builder) startJob() {
	b.runTr, b.spans, b.hulls = -1, b.spans[:0], b.hulls[:0]
}

// keep appends candidate c of job i (candidates come in candidate order)
// (counted toward nq of the job's quotas, quotaCount) to j.opts unless a
// smaller candidate of its type dominates it (a smaller
// option uses no more of every row: a quota with MinGPUs counts larger
// options only), and adds it to its group's hull. Options of one type use
// the same rows except for MinGPUs thresholds, so the row sets form
// contiguous runs by GPUs: a group starts at each new type and wherever
// the number of quotas an option counts toward changes (one group per type
// for a job no quota covers).
func (b *builder) keep(j *mjob, i int, c candOpt, nq int) {
	first := c.tr != b.runTr
	if first {
		b.runTr, b.best = c.tr, math.Inf(-1)
	}
	if !(c.p > b.best) {
		return
	}
	b.best = c.p
	x := len(j.opts)
	if first || nq != b.nq {
		b.nq = nq
		rows := b.rowOnly[c.tr]
		if nq > 0 {
			rows = b.i32.clone(b.rowsOf(i, c.g, c.tr), numberChunk)
		}
		b.spans = append(b.spans, span{x: x, rows: rows, hull: len(b.hulls)})
	}
	s := len(b.spans) - 1
	sp := &b.spans[s]
	c.grp = int32(s)
	j.opts = append(j.opts, c.mopt)
	// the group's largest profit and profit per GPU so far (noteBounds)
	sp.top, sp.ratio = max(sp.top, c.p), max(sp.ratio, c.p/float64(c.g))
	b.hulls = pushHull(b.hulls, sp.hull, j.opts, x)
}

// pushHull adds point x of opts to the upper concave hull h[from:] (with
// the origin as implicit first point) of the points before it, which come
// by GPUs ascending with profits increasing: it drops the points on or
// below the chord to it (see hull) and appends it.
func pushHull(h []int32, from int, opts []mopt, x int) []int32 {
	x3, y3 := float64(opts[x].g), opts[x].p
	for len(h) > from {
		x1, y1 := 0.0, 0.0
		if len(h) >= from+2 {
			o := &opts[h[len(h)-2]]
			x1, y1 = float64(o.g), o.p
		}
		o := &opts[h[len(h)-1]]
		x2, y2 := float64(o.g), o.p
		if (y2-y1)*(x3-x1) > (y3-y1)*(x2-x1) {
			break
		}
		h = h[:len(h)-1]
	}
	return append(h, int32(x))
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

// span is one group of the current job while it is built: the options
// j.opts[x:y], their rows, and their hull, builder.hulls[hull:hull+nh].
type span struct {
	x, y       int
	rows       []int32
	hull, nh   int
	top, ratio float64 // the largest profit and profit per GPU of its options (0 for none)
}

// groupOptions lays out j's groups as keep found them (keep numbers the
// options' groups), with their hulls, and raises the model's bounds
// (noteBounds) from them.
func (b *builder) groupOptions(j *mjob) {
	hulls := b.i32.take(len(b.hulls), numberChunk)
	copy(hulls, b.hulls)
	n := len(b.spans)
	j.groups = b.takeGroups(n)[:n]
	for s := range b.spans {
		sp := &b.spans[s]
		sp.y, sp.nh = len(j.opts), len(hulls)-sp.hull
		if s+1 < n {
			sp.y, sp.nh = b.spans[s+1].x, b.spans[s+1].hull-sp.hull
		}
		j.groups[s] = group{rows: sp.rows, hull: hulls[sp.hull : sp.hull+sp.nh : sp.hull+sp.nh]}
	}
	b.m.noteBounds(j, b.spans)
}

// reserveOpts returns an empty slice of capacity n from the options'
// arena, which commitOpts takes out of it once filled.
func (b *builder) reserveOpts(n int) []mopt {
	if len(b.opts)+n > cap(b.opts) {
		b.opts = make([]mopt, 0, max(min(optChunk, b.nopts+n), n))
	}
	k := len(b.opts)
	return b.opts[k : k : k+n]
}

// commitOpts takes j.opts, filled from reserveOpts, out of the options'
// arena, and caps it at its length.
func (b *builder) commitOpts(j *mjob) {
	n := len(j.opts)
	b.opts = b.opts[:len(b.opts)+n]
	j.opts = j.opts[:n:n]
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
// and raises the multipliers' upper bounds to its options' profits per
// GPU, group by group (spans, as keep and groupOptions set them).
func (m *model) noteBounds(j *mjob, spans []span) {
	// (the built-in max: math.Max's result, without a call)
	top := j.top
	for _, sp := range spans {
		top = max(top, sp.top)
		for _, r := range sp.rows {
			m.ub[r] = max(m.ub[r], sp.ratio)
		}
	}
	j.top = top
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
	return int(a.k - b.k)
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
		d.off, d.n, d.at = int32(off), int32(len(g.hull)), -1
		d.row, d.q = dualRows(g.rows)
		for _, oi := range g.hull {
			j.pts[2*off], j.pts[2*off+1] = j.opts[oi].p, float64(j.opts[oi].g)
			off++
		}
	}
}

// dualRows returns a group's type row and its quota row as dgroup holds
// them (see dgroup.q).
func dualRows(rows []int32) (row, q int32) {
	switch len(rows) {
	case 1:
		return rows[0], -1
	case 2:
		return rows[0], rows[1]
	}
	return rows[0], -2
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

// boxed returns a copy of the multipliers lam0 (nil: 0) in the dual's box
// [0, ub].
func (m *model) boxed(lam0 []float64) []float64 { return boxedIn(lam0, m.ub, m.nrows) }

// boxedIn is lam0 (nil = 0) within [0, ub], in a new slice of n entries.
func boxedIn(lam0, ub []float64, n int) []float64 {
	lam := make([]float64, n)
	if lam0 != nil {
		copy(lam, lam0)
	}
	for r := range lam {
		lam[r] = math.Min(math.Max(lam[r], 0), ub[r])
	}
	return lam
}

// groupPrice returns the Lagrangian price per GPU of job j's group gi at
// lam: the sum of its rows' multipliers (group.price), from dgroup's rows
// when it has one or two.
func (j *mjob) groupPrice(gi int, lam []float64) float64 {
	// (lam[row] + lam[q] is group.price's sum 0 + lam[row] + lam[q],
	// exactly)
	switch d := &j.dual[gi]; {
	case d.q == -1:
		return lam[d.row]
	case d.q >= 0:
		return lam[d.row] + lam[d.q]
	}
	return j.groups[gi].price(lam)
}

// best returns the largest Lagrangian profit max(0, p − π·g) of job j at lam
// and the option index achieving it (-1 for none). Ties keep the earliest
// option. Only the hull points can be maximisers; each group's is found by
// climbing its hull from the last call's (dgroup.argmax).
func (j *mjob) best(lam []float64) (float64, int) {
	bv, bo := 0.0, -1
	for gi := range j.dual {
		d := &j.dual[gi]
		if k, v := d.argmax(j.pts, j.groupPrice(gi, lam)); k >= 0 && v > bv {
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

// dualChunk is the number of jobs newtonDual's passes evaluate between two
// looks at their stop function: some tens of microseconds.
const dualChunk = 128

// dualUntil is dual that gives up (ok false, f meaningless) as soon as stop
// (when non-nil) reports true, looking at it every dualWork units of work
// (see dualPace): one evaluation over thousands of jobs takes
// milliseconds.
func (m *model) dualUntil(jobs []int32, capv []int, lam []float64, sg []float64, stop func() bool) (f float64, ok bool) {
	for r := range sg {
		sg[r] = float64(capv[r])
		f += lam[r] * float64(capv[r])
	}
	var pace dualPace
	for _, ji := range jobs {
		j := &m.jobs[ji]
		if stop != nil && pace.over(j, stop) {
			return f, false
		}
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
	ub := m.ub
	w := m.rowScale
	if w != nil {
		ub, lam0, eval = m.scaledDual(lam0, eval)
	}
	lam, f, ok := m.minimizeFn(eval, act, lam0, tol, maxIter, stop, stall, ub)
	if !ok {
		return make([]float64, m.nrows), m.zeroDual(jobs)
	}
	for r := range w {
		lam[r] /= w[r]
	}
	return lam, f
}

// scaledDual gives the cutting-plane method (minimizeFn) the dual in the
// multipliers μ_r = λ_r·w_r, w = m.rowScale: their box ub·w, the start
// lam0·w and an evaluation that reads λ = μ/w and returns the subgradient
// in μ (divided by w). The scales are powers of two, so λ and the values
// are the same floats both ways.
func (m *model) scaledDual(lam0 []float64, eval func(lam, sg []float64) (float64, bool)) ([]float64, []float64, func(lam, sg []float64) (float64, bool)) {
	w := m.rowScale
	ub := make([]float64, m.nrows)
	for r := range ub {
		ub[r] = m.ub[r] * w[r]
	}
	if lam0 != nil {
		mu := make([]float64, m.nrows)
		for r := range mu {
			mu[r] = lam0[r] * w[r]
		}
		lam0 = mu
	}
	lam := make([]float64, m.nrows)
	return ub, lam0, func(mu, sg []float64) (float64, bool) {
		for r := range mu {
			lam[r] = mu[r] / w[r]
		}
		f, ok := eval(lam, sg)
		for r := range sg {
			sg[r] /= w[r]
		}
		return f, ok
	}
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
func (m *model) minimizeFn(eval func(lam, sg []float64) (float64, bool), act []int, lam0 []float64, tol float64, maxIter int, stop func() bool, stall float64, ub []float64) (lam []float64, fc float64, ok bool) {
	n := m.nrows
	center := boxedIn(lam0, ub, n)
	sg := make([]float64, n)
	fc, ok = eval(center, sg)
	if !ok {
		return center, math.Inf(1), false
	}
	if len(act) == 0 {
		return center, fc, true
	}
	act = masterRows(act, sg)
	// The multipliers outside act keep their values (center's, never
	// moved), so each cut is kept on act alone: its value at λ is fix plus
	// its subgradient on act times λ there. Every loop of an iteration is
	// then over the cuts × the rows of act (at most masterMaxRows), not
	// × every row: with 5,000 quota rows, 60 cuts over every row took
	// about 1 ms of CPU between two looks at stop (the root's dual ended
	// up to 1 ms past its end). The rows outside act are those of no
	// capacity, whose multipliers are 0, unless masterRows cut act: their
	// terms are then zeros, and the sums the same floats.
	type cut struct {
		fix float64   // f(λk) − g·λk + g·λ over the rows outside act
		g   []float64 // the subgradient on act (g[a]: row act[a])
	}
	inAct := make([]bool, n)
	for _, r := range act {
		inAct[r] = true
	}
	mkCut := func(lam, g []float64, f float64) cut {
		c := cut{g: make([]float64, len(act)), fix: f}
		for r := range g {
			c.fix -= g[r] * lam[r]
		}
		for r := range g {
			if !inAct[r] {
				c.fix += g[r] * lam[r]
			}
		}
		for a, r := range act {
			c.g[a] = g[r]
		}
		return c
	}
	cuts := []cut{mkCut(center, sg, fc)}
	delta := make([]float64, n)
	for _, r := range act {
		delta[r] = math.Max(ub[r]/4, 1e-9)
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
			hi[r] = math.Min(ub[r], center[r]+delta[r])
		}
		for _, c := range cuts {
			v := c.fix
			for a, r := range act {
				v += math.Min(c.g[a]*lo[r], c.g[a]*hi[r])
			}
			thLo = math.Max(thLo, v)
		}
		A := make([][]float64, 0, len(cuts)+na)
		b := make([]float64, 0, len(cuts)+na)
		for _, c := range cuts {
			row := make([]float64, na+1)
			rh := thLo - c.fix
			for a, r := range act {
				rh -= c.g[a] * lo[r]
			}
			copy(row, c.g)
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
			lam[r] = math.Min(math.Max(lo[r]+x[a], 0), ub[r])
			eps := 1e-9 * (1 + delta[r])
			if (lo[r] > 0 && lam[r]-lo[r] < eps) || (hi[r] < ub[r] && hi[r]-lam[r] < eps) {
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
				v := c.fix
				for a, r := range act {
					v += c.g[a] * center[r]
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
