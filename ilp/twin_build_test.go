package ilp

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
)

// This file keeps the model's build as it was before the single-pass
// build (issue 10: validation and build take up to 40 % of a 100 ms solve
// on the 5,000-job instances) as a naive twin: TestBuildTwin asserts that
// both build the same model.

// twinBuildModel builds the model of a problem validated with scan sc. With a
// clock, it looks at the time every few thousand options and stops at the
// deadline: the model then holds the free jobs before m.rest only (see
// model.rest).
func twinBuildModel(p *Problem, sc scan, clk *clock) *model {
	m := twinModelRows(p, sc)
	b := twinNewBuilder(m)
	b.subtractPins()
	trace("build.setup")
	work := 0
	for i := range p.Jobs {
		if p.Jobs[i].Pin >= 0 {
			continue
		}
		if clk != nil {
			if work += len(p.Jobs[i].Options) + 8; work >= validateChunk/16 {
				work = 0
				if past(clk.buildEnd) {
					twinStopAt(m, i, sc)
					break
				}
			}
		}
		// the rest of the model has at most an option, a group, a hull
		// point and two row entries per option still to come
		b.i32.rest, b.f64.rest, b.dgs.rest = 8*b.nopts, 2*b.nopts, b.nopts
		b.nopts -= len(p.Jobs[i].Options)
		if !b.candidates(i) {
			continue
		}
		mj := b.job(i)
		twinNoteBounds(m, &mj)
		m.jobs = append(m.jobs, mj)
	}
	trace("build.jobs")
	m.jobQuotas = b.jobQuotas
	return m
}

// twinModelRows returns the model's rows: one per GPU type (sorted by name)
// with its capacity less the reservation, then one per quota with its
// limit; the jobs come later.
func twinModelRows(p *Problem, sc scan) *model {
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

// twinBuilder holds the scratch space and arenas of twinBuildModel. The model's
// options, groups and row lists live in large arenas (most of the cost of
// building a model of many jobs is allocation), allocated in chunks as the
// model grows: one allocation for every option would come before the
// first look at the clock, and cost milliseconds.
type twinBuilder struct {
	m         *model
	p         *Problem
	jobQuotas [][]int // quotas covering each job
	// typeQuotas[tr] lists the quotas of job stamp[tr] (of jobQuotas) that
	// count options of type row tr, whatever their size (see quotasOf)
	typeQuotas [][]int
	stamp      []int
	rowBuf     []int32
	cands      []twinCand // candidate options of the current job
	stack      []int32    // hull's scratch
	nopts      int        // options of the free jobs not yet read: the arena's next chunk need not be larger
	opts       []mopt
	groups     []group
	i32        arena[int32]
	f64        arena[float64]
	dgs        arena[dgroup]
}

func twinNewBuilder(m *model) *twinBuilder {
	p := m.p
	b := &twinBuilder{m: m, p: p, jobQuotas: jobQuotaLists(p), typeQuotas: make([][]int, len(m.types)), stamp: make([]int, len(m.types))}
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
func (b *twinBuilder) quotasOf(ji, tr int) []int {
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
func (b *twinBuilder) quotaCount(ji, g, tr int) int {
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
func (b *twinBuilder) rowsOf(ji, g, tr int) []int32 {
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
func (b *twinBuilder) subtractPins() {
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
func (b *twinBuilder) candidates(i int) bool {
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
		b.cands = append(b.cands, twinCand{mopt{k: int32(k), p: pr, g: o.GPUs}, lastRow})
	}
	// (options usually come sorted by type and size: no sort then)
	if !slices.IsSortedFunc(b.cands, twinCandOrder) {
		slices.SortFunc(b.cands, twinCandOrder)
	}
	return len(b.cands) > 0
}

// fitsQuotas reports whether an option of g GPUs of type row tr of job i
// fits alone in every quota row it counts toward.
func (b *twinBuilder) fitsQuotas(i, g, tr int) bool {
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
func (b *twinBuilder) job(i int) mjob {
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
	twinLayDual(&mj, &b.dgs, &b.f64)
	return mj
}

// undominated appends to j.opts the candidates from a on of a's type that
// no smaller one of that type dominates (a smaller option uses no more of
// every row: a quota with MinGPUs counts larger options only), and returns
// the first candidate of the next type.
func (b *twinBuilder) undominated(j *mjob, a int) int {
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
func (b *twinBuilder) groupType(j *mjob, i, tr, start int) {
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
			j.opts[z].grp = int32(gi)
		}
		var h []int32
		h, b.stack = twinHull(j.opts[:y], x, b.stack)
		j.groups = append(j.groups, group{rows: b.i32.clone(rows, numberChunk), hull: b.i32.clone(h, numberChunk)})
		x = y
	}
}

// takeOpts returns an empty slice of capacity n from the options' arena.
func (b *twinBuilder) takeOpts(n int) []mopt {
	if len(b.opts)+n > cap(b.opts) {
		b.opts = make([]mopt, 0, max(min(twinOptChunk, b.nopts+n), n))
	}
	k := len(b.opts)
	b.opts = b.opts[:k+n]
	return b.opts[k : k : k+n]
}

// takeGroups returns an empty slice of capacity n from the groups' arena.
func (b *twinBuilder) takeGroups(n int) []group {
	if len(b.groups)+n > cap(b.groups) {
		b.groups = make([]group, 0, max(min(1<<10, b.nopts+n), n))
	}
	k := len(b.groups)
	b.groups = b.groups[:k+n]
	return b.groups[k : k : k+n]
}

// noteBounds records job j's largest profit (its term of the dual at λ = 0)
// and raises the multipliers' upper bounds to its options' profits per GPU.
func twinNoteBounds(m *model, j *mjob) {
	for _, o := range j.opts {
		j.top = math.Max(j.top, o.p)
		for _, r := range j.groups[o.grp].rows {
			m.ub[r] = math.Max(m.ub[r], o.p/float64(o.g))
		}
	}
}

// twinChunkOf is the size of an arena's next chunk: size, or rest when it is
// positive and smaller.
func twinChunkOf(size, rest int) int {
	if rest > 0 {
		return min(size, rest)
	}
	return size
}

// twinOptChunk is the number of options of the model's arena allocated at a
// time (1 MB).
const twinOptChunk = 1 << 15

// twinCand is a candidate option of a job while its model is built, with
// its type row.
type twinCand struct {
	mopt
	tr int
}

// twinCandOrder orders candidates by type row, GPUs, profit (larger first) and
// index.
func twinCandOrder(a, b twinCand) int {
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
func twinStopAt(m *model, i int, sc scan) {
	m.rest = i
	for k := i; k < len(m.p.Jobs); k++ {
		if m.p.Jobs[k].Pin < 0 {
			m.restP += sc.best[k]
		}
	}
}

// twinLayDual lays out the dual's view of j's groups (j.dual, j.pts) in the
// arenas.
func twinLayDual(j *mjob, dgs *arena[dgroup], f64 *arena[float64]) {
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
		d.off, d.n, d.at, d.row, d.q = int32(off), int32(len(g.hull)), -1, g.rows[0], -2
		if len(g.rows) == 1 {
			d.q = -1
		}
		if len(g.rows) == 2 {
			d.q = g.rows[1]
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
// hull returns the indices (>= start) of opts[start:] on the upper concave
// hull of {(0,0)} ∪ {(g, p)}; opts[start:] is sorted by g with p increasing.
// The result aliases buf (scratch, returned for reuse).
func twinHull(opts []mopt, start int, buf []int32) (h, scratch []int32) {
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

// TwinBuildCheck validates p and builds its model with buildModel and with
// its naive twin, without a deadline, and returns an error naming the first
// difference (nil when both models are equal).
func TwinBuildCheck(p *Problem) error {
	sc, err := p.validate(nil, nil)
	if err != nil {
		return err
	}
	twin := twinBuildModel(p, sc, nil)
	if err := diffModels(twin, buildModel(p, sc, nil)); err != nil {
		return err
	}
	// the model built in validation's pass, when it applies
	if _, m, err := p.validateBuild(nil, nil); err != nil {
		return fmt.Errorf("validateBuild: %v", err)
	} else if m != nil {
		if err := diffModels(twin, m); err != nil {
			return fmt.Errorf("validateBuild: %v", err)
		}
	}
	return nil
}

// diffModels returns an error naming the first field where models a and b
// differ (slices compare by content, not by capacity).
func diffModels(a, b *model) error {
	if len(a.jobs) != len(b.jobs) {
		return fmt.Errorf("%d jobs, want %d", len(b.jobs), len(a.jobs))
	}
	for x := range a.jobs {
		if !reflect.DeepEqual(a.jobs[x], b.jobs[x]) {
			return fmt.Errorf("job %d (problem job %d): got %+v, want %+v", x, a.jobs[x].orig, b.jobs[x], a.jobs[x])
		}
	}
	ca, cb := *a, *b
	ca.jobs, cb.jobs = nil, nil
	// (tables filled as they are asked for: compared through their
	// accessor, quotasOfType, with a filter of the job's quotas)
	for ji := range cb.jobQuotas {
		for tr, t := range cb.types {
			var want []int
			for _, qi := range cb.jobQuotas[ji] {
				if cb.p.Quotas[qi].countsType(t) {
					want = append(want, qi)
				}
			}
			if got := b.quotasOfType(ji, tr); !slices.Equal(want, got) {
				return fmt.Errorf("job %d type row %d: quotas %v, want %v", ji, tr, got, want)
			}
		}
	}
	ca.tq, cb.tq = nil, nil
	// (the late path's quota index, a cache built from the problem alone)
	ca.lateIdx, cb.lateIdx = nil, nil
	if !reflect.DeepEqual(ca, cb) {
		return fmt.Errorf("model: got %+v, want %+v", cb, ca)
	}
	return nil
}

// TwinModelBuilder is ModelBuilder with the naive twin's build, for
// BenchmarkBuild's comparison.
func TwinModelBuilder(p *Problem) (func() int, error) {
	sc, err := p.validate(nil, nil)
	if err != nil {
		return nil, err
	}
	return func() int {
		m := twinBuildModel(p, sc, nil)
		n := 0
		for i := range m.jobs {
			n += len(m.jobs[i].opts)
		}
		return n
	}, nil
}
