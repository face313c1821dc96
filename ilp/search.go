package ilp

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// search is the branch-and-bound state. Every node re-optimises the
// Lagrangian multipliers of its subproblem (the LP bound), fixes the jobs
// that have a single choice compatible with beating the incumbent
// (reduced-cost fixing), and branches on the most ambiguous remaining job,
// children in increasing reduced cost.
type search struct {
	clk *clock
	m   *model
	set *Settings

	// optional is set while the search runs a greedy that is not an
	// essential incumbent (refine's): its passes stop at the deadline,
	// not at the clock's greedyEnd
	optional bool

	step    float64 // a solution must beat the incumbent by more than step
	grid    float64 // Problem.Grid when the search uses it, else 0
	eqTol   float64 // profit differences below eqTol are ties
	dualTol float64 // accuracy asked of the dual at each node

	warm    []int // Settings.WarmStart as a model choice, nil when unusable
	best    []int // incumbent per model job: index into opts, -1 none
	bestP   float64
	hasBest bool

	cur    []int // choice per model job on the current path (-1 none / free)
	nodes  int
	stop   bool
	open   float64 // largest bound of a subtree left unexplored at stop
	proved bool
	root   float64 // root bound on the profit

	diveDepth    int // nodes up to this depth run the knapsack heuristics
	allRowsDepth int // nodes up to this depth bound candidates with every type row

	budget     int     // node budget of the current pass (0 = none)
	passStart  int     // nodes before the current pass
	hardStop   bool    // stopped by the context or Settings.MaxNodes
	heuristics bool    // run the root heuristics (first pass only)
	pairs      bool    // run the two-type programs at the root (second pass)
	orders     [][]int // type orders for seqDP below the root, best first
	// noise > 0 perturbs the branching job and the child order of a restart
	// by up to noise times the node's gap (bound minus target), drawn from
	// rng, which is seeded per restart: the search stays deterministic.
	noise float64
	rng   *rand.Rand

	dpA, dpB []float64 // scratch for the knapsack programs
	from     []int32
	fwd, bwd []float64
}

// cand is one choice of a job: an option (or -1 = none) and its reduced cost.
type cand struct {
	o  int
	rc float64
}

func newSearch(clk *clock, m *model, set *Settings) *search {
	sr := &search{clk: clk, m: m, set: set, open: math.Inf(-1), root: math.Inf(1), diveDepth: 3, allRowsDepth: 1 << 30}
	scale := m.scale
	sr.eqTol = 1e-12 * scale * float64(1+len(m.p.Jobs))
	// With a grid, two objectives differ by a whole step up to the values'
	// deviations from the grid (each job's profit is off by at most twice its
	// largest deviation).
	dev := m.dev
	switch {
	case m.p.Grid > 0 && 2*dev < m.p.Grid/2:
		sr.grid = m.p.Grid
		sr.step = m.p.Grid - 2*dev - 1e-9*m.p.Grid
		sr.dualTol = 0.02 * sr.step
	case set.Tolerance > 0:
		sr.step = set.Tolerance
		sr.dualTol = math.Min(0.1*sr.step, 1e-7*scale)
	default:
		sr.step = 1e-9 * scale
		sr.dualTol = 1e-7 * scale
	}
	sr.step = math.Max(sr.step, sr.eqTol)
	return sr
}

// restartNoise is the size of the branching perturbation of randomised
// restarts, relative to the node's gap.
const restartNoise = 0.1

func (sr *search) fits(capv []int, j *mjob, o int) bool {
	op := &j.opts[o]
	for _, r := range j.groups[op.grp].rows {
		if op.g > capv[r] {
			return false
		}
	}
	return true
}

// upgrade takes job j off its option c (-1: none) and puts it on the option
// of highest profit that fits the capacity left (c itself unless another is
// better by more than the tolerance), updating capv; it returns that option.
func (sr *search) upgrade(capv []int, j *mjob, c int) int {
	bp := 0.0
	if c >= 0 {
		apply(capv, j, c, -1)
		bp = j.opts[c].p
	}
	bo := c
	for oi := range j.opts {
		if j.opts[oi].p > bp+sr.eqTol && sr.fits(capv, j, oi) {
			bo, bp = oi, j.opts[oi].p
		}
	}
	if bo >= 0 {
		apply(capv, j, bo, 1)
	}
	return bo
}

func apply(capv []int, j *mjob, o int, sign int) {
	op := &j.opts[o]
	for _, r := range j.groups[op.grp].rows {
		capv[r] -= sign * op.g
	}
}

func (sr *search) profit(choice []int) float64 {
	var s float64
	for i, c := range choice {
		if c >= 0 {
			s += sr.m.jobs[i].opts[c].p
		}
	}
	return s
}

// feasible reports whether a full model choice respects every row.
func (sr *search) feasible(choice []int) bool {
	if sr.m.nrows <= indexRows {
		ok, _ := sr.feasibleByRows(choice, math.MaxInt)
		return ok
	}
	if ok, done := sr.feasibleByRows(choice, sr.m.indexWork(choice)); done {
		return ok
	}
	return sr.m.fitsByIndex(choice)
}

// indexWork is the number of row entries above which the options of
// choice are checked through the quota index (see indexRows) rather than
// over each option's rows: a few times its jobs and rows. Under a quota
// per job (an option enters two rows) the index's pass, a map look-up and
// a few of its arrays per job, took 0.35-0.75 ms on 5,000 jobs as the
// check of the greedy incumbent after the greedy's end, the rows' pass
// 0.1-0.2 ms; under thousands of quotas over every job, an option enters
// thousands of rows.
func (m *model) indexWork(choice []int) int { return 4 * (len(choice) + m.nrows) }

// byIndex reports whether the search applies the whole choice through
// the quota index (choiceUsage) rather than option by option over each
// option's rows: with more than indexRows rows, when its options enter
// more than indexWork rows.
func (m *model) byIndex(choice []int) bool {
	if m.nrows <= indexRows {
		return false
	}
	entries, most := 0, m.indexWork(choice)
	for i, c := range choice {
		if c >= 0 {
			j := &m.jobs[i]
			if entries += len(j.groups[j.opts[c].grp].rows); entries > most {
				return true
			}
		}
	}
	return false
}

// feasibleByRows is feasible, option by option over each option's rows,
// unless the options enter more than most rows: done is then false.
func (sr *search) feasibleByRows(choice []int, most int) (ok, done bool) {
	use := make([]int, sr.m.nrows)
	entries := 0
	for i, c := range choice {
		if c >= 0 {
			j := &sr.m.jobs[i]
			op := &j.opts[c]
			rows := j.groups[op.grp].rows
			if entries += len(rows); entries > most {
				return false, false
			}
			for _, r := range rows {
				use[r] += op.g
				if use[r] > sr.m.cap[r] {
					return false, true
				}
			}
		}
	}
	return true, true
}

// offer makes choice the incumbent if it is feasible and better.
func (sr *search) offer(choice []int) {
	if !sr.feasible(choice) {
		return
	}
	if pv := sr.profit(choice); !sr.hasBest || pv > sr.bestP+sr.eqTol {
		sr.best = append(sr.best[:0], choice...)
		sr.bestP = pv
		sr.hasBest = true
	}
}

// offerFree offers the current path completed by choice (parallel to free).
func (sr *search) offerFree(free []int32, choice []int) {
	for k, i := range free {
		sr.cur[i] = choice[k]
	}
	sr.offer(sr.cur)
	for _, i := range free {
		sr.cur[i] = -1
	}
}

// rootHeuristics runs the knapsack-based heuristics at the root, cheapest
// first, until the incumbent meets the bound. lp is the Lagrangian bound at
// lam. It reports whether the exact core program settled the root.
func (sr *search) rootHeuristics(free []int32, capv []int, lam []float64, lp float64) (settled bool) {
	bound := lp
	// stop when proven, or when the caller's time is up (the root still
	// reports its bound and the incumbent so far)
	done := func() bool { return bound <= sr.target() || sr.clk.expired() }
	defer func() { settled = settled || bound <= sr.target() }()
	if done() {
		return
	}
	// Everything works on the core: jobs with more than one choice that
	// could still beat the incumbent (by reduced cost at lam); the others
	// keep their single choice (a bound over the core holds for every
	// assignment that beats the incumbent, which is all a proof needs).
	full, pos, core, left, ok := sr.coreOf(free, capv, lam, lp)
	if !ok {
		bound = math.Inf(-1) // nothing beats the incumbent
		return
	}
	try := func(name string, sd []int) float64 {
		trace(name)
		for c, k := range pos {
			full[k] = sd[c]
		}
		sr.offerFree(free, full)
		return sr.freeProfit(free, full) // comparable across cores
	}
	// the one-row bounds and the repaired Lagrangian maximisers; under a tight
	// deadline they come after the sequential programs, which find most
	// incumbents
	boundsAndRepair := func() {
		fixed := sr.freeProfit(free, full) // the non-core jobs' single choices
		allowed := sr.candidates(core, left, lam, lp)
		for _, t := range sr.keptRows(lam) {
			if t < sr.m.nrows { // the aggregate row comes later
				bound = math.Min(bound, fixed+sr.rowBound(core, left, lam, t, allowed))
			}
		}
		trace("root.rowBounds")
		if done() {
			return
		}
		// from the Lagrangian maximisers (ties: fewer GPUs), repaired per type
		lg := make([]int, len(core))
		for c, i := range core {
			lg[c] = sr.m.jobs[i].lagChoice(lam)
		}
		if sr.improveByType(core, left, lg, 1, true) {
			try("root.lagRepair", lg)
		}
		if done() {
			return
		}
		if full, pos, core, left, ok = sr.coreOf(free, capv, lam, lp); !ok {
			bound = math.Inf(-1)
		}
	}
	// (a deadline is tight when the time left is less than twenty times
	// what the search took so far, the root's dual included)
	underDeadline := sr.clk.short(20 * now().Sub(sr.clk.started))
	if !underDeadline {
		if boundsAndRepair(); done() || !ok {
			return
		}
	}
	var bestSD []int
	bestP := math.Inf(-1)
	orders := typeOrders(len(sr.m.types))
	profits := make([]float64, len(orders))
	defer func() {
		// remember the two best orders for the nodes below
		idx := make([]int, len(orders))
		for k := range idx {
			idx[k] = k
		}
		sort.SliceStable(idx, func(a, b int) bool { return profits[idx[a]] > profits[idx[b]] })
		sr.orders = nil
		for _, k := range idx[:min(2, len(idx))] {
			sr.orders = append(sr.orders, orders[k])
		}
	}()
	for oi, order := range orders {
		before := sr.bestP
		sd := sr.seqDP(core, left, lam, order)
		profits[oi] = try("root.seqDP", sd)
		if done() {
			return
		}
		if sr.bestP > before {
			// a better incumbent shrinks the core
			if full, pos, core, left, ok = sr.coreOf(free, capv, lam, lp); !ok {
				return
			}
			bestSD, bestP = nil, math.Inf(-1)
			continue
		}
		if profits[oi] > bestP {
			bestSD, bestP = sd, profits[oi]
		}
	}
	if underDeadline {
		before := len(core)
		if boundsAndRepair(); done() || !ok {
			return
		}
		if len(core) != before {
			bestSD = nil // of another core
		}
	}
	if bestSD != nil && sr.improveByType(core, left, bestSD, 3, false) {
		try("root.improve", bestSD)
	}
	if done() {
		return
	}
	// the exact core program, now with the heuristics' incumbent
	if sr.coreDP(free, capv, lam, lp, coreFirstStates) {
		return true
	}
	trace("root.coreDP")
	// the aggregate row (see keptRow) over the core: its bound, and its
	// knapsack solution repaired type by type
	if full, pos, core, left, ok = sr.coreOf(free, capv, lam, lp); !ok {
		return
	}
	agg := sr.m.nrows
	if slices.Contains(sr.keptRows(lam), agg) {
		fixed := sr.freeProfit(free, full)
		cx, lx := sr.keptRow(left, lam, agg)
		bound = math.Min(bound, fixed+sr.rowBound(core, cx, lx, agg, nil))
		trace("root.aggBound")
		if done() {
			return
		}
		if ag := sr.aggregateChoice(core, left, lam); ag != nil && sr.improveByType(core, left, ag, 3, true) {
			try("root.aggregate", ag)
			if done() {
				return
			}
		}
	}
	// diversify: the best orders again at slightly perturbed multipliers,
	// which break the many ties of rounded values differently
	if full, pos, core, left, ok = sr.coreOf(free, capv, lam, lp); !ok {
		return
	}
	idx := make([]int, len(orders))
	for k := range idx {
		idx[k] = k
	}
	sort.SliceStable(idx, func(a, b int) bool { return profits[idx[a]] > profits[idx[b]] })
	pl := make([]float64, len(lam))
	for _, eps := range []float64{0.02, -0.02, 0.1, -0.1} {
		for t := range sr.m.types {
			copy(pl, lam)
			pl[t] *= 1 + eps
			for _, k := range idx[:min(2, len(idx))] {
				try("root.diversify", sr.seqDP(core, left, pl, orders[k]))
				if done() {
					return
				}
			}
		}
	}
	return
}

// coreOf splits the free jobs by reduced cost at lam against the incumbent:
// full (parallel to free) holds the single admissible choice of each
// non-core job, pos the positions of the core jobs in free, core their model
// indices and left the capacity the non-core choices leave. ok is false when
// no assignment can beat the incumbent.
//
// coreOf looks at the clock: when the time is up it stops the search (the
// node staying open at its bound lp, see interrupt) and reports ok false,
// which its callers may then take for a pruned node without harm: a
// stopped search proves nothing.
func (sr *search) coreOf(free []int32, capv []int, lam []float64, lp float64) (full, pos []int, core []int32, left []int, ok bool) {
	cands := sr.candidates(free, capv, lam, lp)
	if cands == nil && len(free) > 0 {
		return nil, nil, nil, nil, false // interrupted
	}
	full = make([]int, len(free))
	left = append([]int(nil), capv...)
	for k, cs := range cands {
		i := free[k]
		switch len(cs) {
		case 0:
			return nil, nil, nil, nil, false
		case 1:
			full[k] = cs[0].o
			if cs[0].o >= 0 {
				apply(left, &sr.m.jobs[i], cs[0].o, 1)
			}
		default:
			full[k] = -1
			pos = append(pos, k)
			core = append(core, i)
		}
	}
	for _, v := range left {
		if v < 0 {
			return nil, nil, nil, nil, false
		}
	}
	return full, pos, core, left, true
}

// candidates lists, per job of core, the choices (options that fit capv,
// and none) whose reduced cost at lam leaves them able to beat the
// incumbent, given the bound lp at lam; none comes first, then options in
// index order.
//
// It returns nil when the time runs out on the way, after interrupt(lp).
func (sr *search) candidates(core []int32, capv []int, lam []float64, lp float64) [][]cand {
	limit := lp - sr.target()
	out := make([][]cand, len(core))
	for c, i := range core {
		j := &sr.m.jobs[i]
		if sr.clk.tick(16 * len(j.opts)) {
			sr.interrupt(lp)
			return nil
		}
		h, _ := j.best(lam)
		if h < limit {
			out[c] = append(out[c], cand{o: -1, rc: h})
		}
		for oi := range j.opts {
			o := &j.opts[oi]
			if rc := h - (o.p - j.groups[o.grp].price(lam)*float64(o.g)); rc < limit && sr.fits(capv, j, oi) {
				out[c] = append(out[c], cand{o: oi, rc: rc})
			}
		}
	}
	return out
}

// interrupt stops the search when the time is up in the middle of a node
// whose bound is lp: the node stays open at lp, so the Solution's Bound
// still holds, and the search is not proven whatever the callers conclude.
func (sr *search) interrupt(lp float64) {
	sr.stop, sr.hardStop = true, true
	sr.open = math.Max(sr.open, lp)
}

// freeProfit is the profit of a choice parallel to free.
func (sr *search) freeProfit(free []int32, choice []int) float64 {
	var s float64
	for k, i := range free {
		if c := choice[k]; c >= 0 {
			s += sr.m.jobs[i].opts[c].p
		}
	}
	return s
}

// typeOrders lists the orders in which seqDP settles the type rows: every
// permutation for up to three types, else the natural and reversed orders.
func typeOrders(n int) [][]int {
	id := make([]int, n)
	for i := range id {
		id[i] = i
	}
	if n > 3 {
		rev := make([]int, n)
		for i := range rev {
			rev[i] = n - 1 - i
		}
		return [][]int{id, rev}
	}
	var out [][]int
	var perm func(k int)
	perm = func(k int) {
		if k == n {
			out = append(out, append([]int(nil), id...))
			return
		}
		for i := k; i < n; i++ {
			id[k], id[i] = id[i], id[k]
			perm(k + 1)
			id[k], id[i] = id[i], id[k]
		}
	}
	perm(0)
	return out
}

// target is the profit a subtree's bound must exceed to be explored.
func (sr *search) target() float64 {
	if !sr.hasBest {
		return math.Inf(-1)
	}
	return sr.bestP + sr.step
}

func (sr *search) run() {
	m := sr.m
	n := len(m.jobs)
	if n == 0 {
		sr.best, sr.bestP, sr.hasBest, sr.proved, sr.root = []int{}, 0, true, true, 0
		return
	}
	none := make([]int, n)
	for i := range none {
		none[i] = -1
	}
	sr.offer(none)
	if sr.warm = sr.warmStart(); sr.warm != nil {
		sr.offer(sr.warm)
	}
	sr.cur = none
	free := m.allJobs()
	// A portfolio of restarts sharing the incumbent, alternating two
	// branching strategies with doubling node budgets (so the total work is
	// within a small factor of the better one's): candidate bounds from every
	// type row at every node (fewest nodes on most instances), and from the
	// tightest row only below the root (another order, which finds some
	// incumbents sooner).
	for k := 0; ; k++ {
		sr.allRowsDepth = 1 << 30
		if k%2 == 1 {
			sr.allRowsDepth = 0
		}
		sr.budget = 0
		if k/2 < 20 {
			sr.budget = 1000 << (k / 2)
		}
		sr.passStart = sr.nodes
		sr.stop, sr.hardStop, sr.open = false, false, math.Inf(-1)
		sr.heuristics = k == 0
		// the two-type programs cost about as much as a few hundred
		// nodes: only once the first pass has failed
		sr.pairs = k == 1
		// Restarts after the first two passes take randomised (seeded)
		// branching decisions among near-ties: a plain restart would
		// repeat its predecessor's path, and the hard instances' search
		// times are heavy-tailed in the branching order.
		sr.noise, sr.rng = 0, nil
		if k >= 2 {
			sr.noise, sr.rng = restartNoise, rand.New(rand.NewPCG(uint64(k), 0x51a))
		}
		sr.node(free, append([]int(nil), m.cap...), 0, nil, math.Inf(1), 0, -1)
		if !sr.stop {
			sr.proved = true
			return
		}
		if sr.hardStop {
			return
		}
	}
}

// node explores the subproblem in which the jobs outside free keep their
// choice in sr.cur (total profit P) and capv is the residual capacity. est is
// the bound the parent derived for this node. Its phases, each a method of
// bbNode that reports whether the node goes on:
//
//   - enter: the limits (deadline, MaxNodes, the pass's budget) and a leaf;
//   - bound: the Lagrangian dual of the subproblem (the LP bound) and, at
//     the first root, the greedy incumbents;
//   - heuristics: greedy completion, the two-type programs and the root's
//     knapsack heuristics (or seqDP dives below it), then the exact core
//     program at the root;
//   - fix: reduced-cost fixing of the jobs with a single admissible choice
//     (undone when the node returns);
//   - rowBounds: knapsack bounds of one type row at a time for every
//     candidate of every remaining job;
//   - choose: drop the candidates that cannot beat the incumbent and pick
//     the job to branch on;
//   - branch: the children, best bound first.
func (sr *search) node(free []int32, capv []int, P float64, lam0 []float64, est float64, depth, bt int) {
	n := &bbNode{sr: sr, free: free, capv: capv, P: P, lam0: lam0, est: est, depth: depth, bt: bt}
	if !n.enter() || !n.bound() || !n.heuristics() {
		return
	}
	defer n.undo()
	ok := n.fix()
	trace("fix")
	if !ok || !n.rowBounds() {
		return
	}
	trace("rowBounds")
	if bi := n.choose(); bi >= 0 {
		n.branch(bi)
	}
}

// bbNode is the state of one branch-and-bound node (see search.node).
type bbNode struct {
	sr          *search
	free        []int32
	capv        []int
	P           float64
	lam0        []float64
	est         float64
	depth, bt   int
	lam         []float64   // the node's multipliers
	f           float64     // the dual value at lam
	bnd         float64     // the node's bound
	capc        []int       // capacity left by the fixed jobs
	fixed       []int32     // jobs fixed by reduced costs (undo resets them)
	amb         []ambiguous // jobs left with several candidates
	lpb         float64     // Lagrangian bound less the fixed reduced costs
	pf          float64     // P plus the profit of the fixed jobs
	cb          [][]float64
	pFixed      float64
	rcFixed     float64
	first, root bool
}

// ambiguous is a job left with several candidates after fixing.
type ambiguous struct {
	i      int32
	cs     []cand
	second float64
}

// undo frees the jobs fix fixed.
func (n *bbNode) undo() {
	for _, i := range n.fixed {
		n.sr.cur[i] = -1
	}
}

// stopOpen stops the search (out of time) with this node open at its bound.
func (n *bbNode) stopOpen() {
	sr := n.sr
	sr.stop, sr.hardStop = true, true
	sr.open = math.Max(sr.open, n.bnd)
}

// enter applies the search's limits and settles a leaf.
func (n *bbNode) enter() bool {
	sr := n.sr
	sr.nodes++
	// the root always computes its bound, so a stopped search still has one
	// (checked at every node: a node of a large problem can take
	// milliseconds, and a look at the clock is cheap next to it)
	if n.depth > 0 && sr.clk.expired() {
		sr.stop, sr.hardStop = true, true
	}
	if n.depth > 0 && sr.set.MaxNodes > 0 && sr.nodes > sr.set.MaxNodes {
		sr.stop, sr.hardStop = true, true
		sr.nodes-- // refused, not explored: Solution.Nodes <= MaxNodes
	}
	if n.depth > 0 && sr.budget > 0 && sr.nodes-sr.passStart > sr.budget {
		sr.stop = true // this pass only
	}
	if sr.stop {
		sr.open = math.Max(sr.open, n.est)
		return false
	}
	if len(n.free) == 0 {
		sr.offer(sr.cur)
		return false
	}
	return true
}

// newtonMaxRows is the most coupling rows (types and quotas) on which the
// root's dual is newtonDual's: its passes keep a rows × rows Hessian and
// each step factors it, uninterruptible work of rows³/6 (5,000 quotas, one
// per job: 193 MB and 200 ms past a 10-50 ms deadline). Sia's rounds have a
// few types and quotas; with more rows the cutting-plane method minimises
// the dual.
const newtonMaxRows = 64

// bound minimises the node's Lagrangian dual; at the first root it also
// runs the greedy incumbents, which are essential (see clock).
func (n *bbNode) bound() bool {
	sr, m := n.sr, n.sr.m
	iters := 60
	if n.depth == 0 {
		iters = 300
	}
	// the first root's bound and incumbent are essential (see clock):
	// they may run a little past the deadline
	n.first = n.depth == 0 && sr.nodes == 1
	newton := false
	stop := sr.clk.expired
	first := stop
	if n.first {
		// leave the greedy heuristics below their time before the deadline
		// (quickGreedy, from the warm start too, then marginalGreedy), but
		// never more than half the time the search had
		// (under a tight deadline the dual is newtonDual's, see below)
		newton = sr.tightDeadline(n.free) && !sr.clk.started.After(sr.clk.deadline) && m.nrows <= newtonMaxRows
		reserve := time.Duration(greedyNanos * 3 * sr.optionCount(n.free))
		if newton {
			// marginalGreedy only (see firstGreedies), with a quarter
			// more: the dual looks at the time between passes of a few
			// milliseconds, and firstGreedies asks for marginalNanos
			// per option when it ends
			reserve = time.Duration(marginalNanos * sr.optionCount(n.free) * 5 / 4)
		}
		if sr.warm != nil {
			reserve += time.Duration(greedyNanos * sr.optionCount(n.free))
		}
		if !sr.clk.deadline.IsZero() {
			reserve = min(reserve, sr.clk.deadline.Sub(sr.clk.started)/2)
		}
		stop = func() bool { return sr.clk.essentialOver() || sr.clk.short(reserve) }
		// the first evaluation gives the bound: only the essential time's
		// end interrupts it (the bound is then that of λ = 0)
		first = sr.clk.essentialOver
		// (under a deadline that is short for the problem the dual is
		// minimised by smoothed Newton steps, which reach its minimum in
		// a fraction of the cutting-plane method's evaluations, see
		// newtonDual; otherwise by the cutting-plane method from 0, as it
		// always has been: solves with time to spare keep their answers)
	}
	lam0 := n.lam0
	stall := 0.0
	if n.first && sr.veryTightDeadline(n.free) {
		// under a tight deadline the bound need not be closer than a small
		// fraction of the gap a greedy incumbent leaves: the time the
		// dual would spend on the last digits goes to the incumbent
		stall = tightDualStall
	}
	if newton {
		n.lam, n.f, newton = m.newtonPolished(n.free, n.capv, iters, sr.dualTol, stop, first, stall == 0)
	}
	if !newton {
		n.lam, n.f = m.minimizeDualFirst(n.free, n.capv, lam0, sr.dualTol, iters, stop, first, stall)
	}
	if n.first {
		trace("dual")
	}
	n.bnd = math.Min(n.P+n.f, n.est)
	if n.depth == 0 {
		sr.root = math.Min(sr.root, n.bnd)
	}
	if n.bnd <= sr.target() {
		return false
	}
	if n.first {
		was, had := sr.bestP, sr.hasBest
		sr.firstGreedies(n.free, n.capv, n.lam, newton)
		// (past greedyEnd the warm start, already the incumbent, is not
		// worth a pass over every job and its check: 0.3 ms on 5,000 jobs;
		// on at most staleWarmJobs jobs it costs a few µs, and when past
		// the deadline the greedies did not improve on the warm start it
		// is the pass that starts queued jobs on the GPUs the warm start
		// leaves free: a greedy from nothing past greedyEnd looks at the
		// first few jobs only (greedyPace), which in a sia round are the
		// running jobs the warm start keeps. TestLateAdmitsPastKeptJobs)
		stale := had && sr.bestP == was && past(sr.clk.deadline) && len(n.free) <= staleWarmJobs
		if sr.warm != nil && (!sr.clk.greedyOver() || stale) { // free is every model job
			sr.offerFree(n.free, sr.quickGreedy(n.free, n.capv, n.lam, sr.warm))
			trace("warmGreedy")
		}
		veryTight := sr.veryTightDeadline(n.free)
		if veryTight && newton && n.bnd > sr.target() {
			sr.refineDual(n)
		}
		if (veryTight || sr.farFromRoot(n)) && sr.hasBest && !sr.clk.expired() {
			// free is every model job: the incumbent is parallel to it;
			// past the deadline the exchange is not worth the contract's
			// allowance, which the admission and the Solution need
			if c := slices.Clone(sr.best); sr.exchange(n.free, n.capv, c) {
				sr.offerFree(n.free, c)
			}
			trace("exchange")
		}
		if veryTight && newton {
			sr.refineTies(n)
		}
		if n.bnd <= sr.target() {
			return false
		}
	}
	if sr.clk.expired() {
		n.stopOpen()
		return false
	}
	return true
}

// exchangeGap is the relative distance between the greedy incumbents and
// the root's bound from which a solve with a deadline of at least
// exchangeMinJobs free jobs runs the exchange moves at the root whatever
// its deadline (see farFromRoot).
const (
	exchangeGap     = 1e-3
	exchangeMinJobs = 1000
)

// farFromRoot reports whether the solve has a deadline, the root holds at
// least exchangeMinJobs free jobs, and the first greedy incumbents are
// more than exchangeGap of the root's bound n.bnd away from it. Such a
// solve runs the exchange moves before the knapsack
// heuristics, not only under a very tight deadline: on 3,631
// interchangeable jobs over four types, marginalGreedy at the multipliers
// of a 400 ms solve gave 1,856 jobs 2 GPUs while 533 waited (17 % of the
// bound), the knapsack heuristics took the 400 ms without improving it,
// and the answer was that greedy's (at 300 ms, a very tight deadline, the
// exchange moves reached the optimum). Near the bound the greedy
// incumbents are left to the exact search, whose answers among plans of
// equal value stay what they were, as do those of small rounds (a few
// hundred jobs: the knapsack heuristics and the search close their gaps
// in time, and the policy experiments' simulated traces are of such
// rounds).
func (sr *search) farFromRoot(n *bbNode) bool {
	if sr.clk.deadline.IsZero() || !sr.hasBest || len(n.free) < exchangeMinJobs {
		return false
	}
	return n.bnd-sr.bestP > exchangeGap*math.Abs(n.bnd)
}

// refine (refineDual, then refineTies) spends the time a very tight deadline leaves after the Newton
// path's first incumbents on a second round. First the cutting-plane
// method polishes the root's multipliers (newtonDual's end after their
// first pass at the last temperature, see newtonPolished, and with many
// quota rows they can be 1e-4 from the minimum), until two greedies' time
// is left, and marginalGreedy runs at the better multipliers: the greedy's
// loss follows their distance from the minimum (on a 3,000-job round of
// six overlapping quotas, 4.8e-3 of the bound at 6.3e-5 from it, 1.0e-4
// at 1e-8). Then, while the time left affords one more, marginalGreedy
// at the multipliers each perturbed by up to refineNoise of itself (a
// fixed-seed generator: the tries are the same on every run). At the
// dual's minimum the Lagrangian choices of rounded values are full of
// ties, which the greedy breaks one way; slightly different prices break
// them others: on the hard corpus's rounds of rounded values (p = −0.5),
// the best of six such tries was 2.8e-4 of the bound where the
// multipliers' own gave 5.1e-4 (5,000 jobs, quotas), 3.5e-4 for 6.5e-4
// (4,000 jobs) and 6.2e-4 for 8.0e-4 (3,000 jobs, quotas); on unrounded
// values (p = +0.5) they gave nothing better.
// refineDual is its first half, before the exchange (the exchange from a
// greedy at poor multipliers took a third of the time on that round).
func (sr *search) refineDual(n *bbNode) {
	cost := marginalNanos * sr.optionCount(n.free)
	if !sr.clk.affords(3 * cost) {
		return
	}
	stop := func() bool { return sr.clk.essentialOver() || sr.clk.short(time.Duration(2*cost)) }
	lam, f := sr.m.minimizeDualFirst(n.free, n.capv, n.lam, sr.dualTol, 300, stop, stop, tightDualStall)
	trace("refineDual")
	if !(f < n.f) {
		return
	}
	n.lam, n.f = lam, f
	n.bnd = math.Min(n.P+n.f, n.est)
	sr.root = math.Min(sr.root, n.bnd)
	if n.bnd > sr.target() && sr.clk.affords(refineMargin*cost) {
		sr.optional = true
		sr.offerFree(n.free, sr.marginalGreedy(n.free, n.capv, n.lam, true))
		sr.optional = false
		trace("refineGreedy")
	}
}

// refineTies is the second half of refine (see refineDual), after the
// exchange.
func (sr *search) refineTies(n *bbNode) {
	cost := marginalNanos * sr.optionCount(n.free)
	rng := rand.New(rand.NewPCG(0x51a, uint64(len(n.free))))
	lam := make([]float64, len(n.lam))
	for k := 0; k < refineTries && n.bnd > sr.target() && sr.clk.affords(refineMargin*cost); k++ {
		for r, l := range n.lam {
			lam[r] = math.Min(l*(1+refineNoise*(2*rng.Float64()-1)), sr.m.ub[r])
		}
		sr.optional = true
		sr.offerFree(n.free, sr.marginalGreedy(n.free, n.capv, lam, true))
		sr.optional = false
		trace("refine")
	}
}

// refineMargin is the factor by which refine's greedies are sized over
// marginalNanos per option: a try usually takes 0.7-1.0 ms on the hard
// corpus's 1,000-job rounds, but up to 3 ms when a collection's assists
// fall in it (a heap of a few MB collects every few ms), and a try is
// not worth running past the deadline. Their passes stop at the deadline
// (search.optional), not at greedyEnd as the essential incumbents'.
const refineMargin = 3

// refineNoise is the share by which refine perturbs each multiplier, and
// refineTries the most tries it makes.
const (
	refineNoise = 3e-3
	refineTries = 16
)

// firstGreedies offers the first root's greedy incumbents at lam:
// quickGreedy, the incumbent of last resort, then marginalGreedy when the
// time allows it (within 1e-3 of the bound on the corpus's 5,000-job rounds
// where quickGreedy is a few 1e-3 off); the cutting-plane path counts twice
// greedyNanos per option for it. The Newton path (newton: a deadline that
// is short for the problem) runs marginalGreedy alone when the time left
// affords marginalNanos per option, quickGreedy otherwise: marginalGreedy
// costs about as much and is better at every multipliers (on the
// 5,000-job quota round of the hard corpus, 2.6e-4 of the bound where
// quickGreedy is 3.7e-3 off at the same multipliers, 4.9e-2 where it is
// 3.5e-1 off at those of five Newton passes), and the time quickGreedy
// took goes to the dual.
func (sr *search) firstGreedies(free []int32, capv []int, lam []float64, newton bool) {
	if newton && sr.clk.affords(marginalNanos*sr.optionCount(free)) {
		sr.offerFree(free, sr.marginalGreedy(free, capv, lam, true))
		trace("marginalGreedy")
		return
	}
	sr.offerFree(free, sr.quickGreedy(free, capv, lam, nil))
	trace("quickGreedy")
	if !newton && sr.clk.affords(greedyNanos*2*sr.optionCount(free)) {
		sr.offerFree(free, sr.marginalGreedy(free, capv, lam, false))
		trace("marginalGreedy")
	}
}

// heuristics runs the primal heuristics of the node and, at the root, the
// exact core program, which settles most roots outright.
func (n *bbNode) heuristics() bool {
	sr := n.sr
	free, capv, lam, depth := n.free, n.capv, n.lam, n.depth
	// primal heuristic: greedy completion at the node's multipliers
	if depth < 4 || sr.nodes%8 == 0 {
		// it sorts every option: about 20·log2(options) ns each, and more
		// on a loaded machine
		if sr.clk.affords(512 * sr.optionCount(free)) {
			sr.offerFree(free, sr.greedy(free, capv, lam))
			trace("greedy")
		}
		if depth == 0 && sr.pairs {
			sr.pairHeuristic(free, capv, lam, n.P+n.f)
			trace("pairHeuristic")
			// two type rows exact: often proves what the first pass could not
			if pb := sr.pairBounds(free, capv, lam, n.P+n.f); pb < n.bnd {
				n.bnd = pb
				sr.root = math.Min(sr.root, n.bnd)
			}
			trace("pairBounds")
		}
		if depth == 0 && sr.heuristics {
			settled := sr.rootHeuristics(free, capv, lam, n.bnd)
			trace("rootHeuristics")
			if settled {
				return false
			}
		} else if depth <= sr.diveDepth && n.bnd > sr.target() {
			// the two orders that did best at the root
			for _, order := range sr.orders {
				sd := sr.seqDP(free, capv, lam, order)
				sr.offerFree(free, sd)
				trace("seqDP")
				if n.bnd <= sr.target() {
					break
				}
			}
		}
		if n.bnd <= sr.target() {
			return false
		}
	}
	// the exact core program settles most roots outright
	if depth != 0 {
		return true
	}
	settled := sr.coreDP(free, capv, lam, n.P+n.f, coreMaxStates)
	trace("coreDP")
	return !settled
}

// fix computes the reduced costs (relative to the Lagrangian bound at lam
// only) and fixes the jobs with a single admissible choice; the others go
// to n.amb. A node whose fixed jobs leave no ambiguous one is a leaf.
func (n *bbNode) fix() bool {
	sr, m := n.sr, n.sr.m
	lam := n.lam
	n.lpb = n.P + n.f
	limit := n.lpb - sr.target()
	n.capc = append([]int(nil), n.capv...)
	for _, i := range n.free {
		j := &m.jobs[i]
		if sr.clk.tick(8 * len(j.opts)) {
			// out of time: this node stays open at its bound
			n.stopOpen()
			return false
		}
		h, _ := j.best(lam)
		cs := make([]cand, 0, 4)
		if h < limit {
			cs = append(cs, cand{o: -1, rc: h})
		}
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := math.Max(h-(o.p-j.groups[o.grp].price(lam)*float64(o.g)), 0)
			if rc < limit && sr.fits(n.capv, j, oi) {
				cs = append(cs, cand{o: oi, rc: rc})
			}
		}
		switch len(cs) {
		case 0:
			return false
		case 1:
			c := cs[0]
			if c.o >= 0 {
				if !sr.fits(n.capc, j, c.o) {
					return false
				}
				apply(n.capc, j, c.o, 1)
				n.pFixed += j.opts[c.o].p
			}
			n.rcFixed += c.rc
			sr.cur[i] = c.o
			n.fixed = append(n.fixed, i)
		default:
			slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.rc, b.rc) })
			n.amb = append(n.amb, ambiguous{i: i, cs: cs, second: cs[1].rc})
		}
	}
	if len(n.amb) == 0 {
		sr.offer(sr.cur)
		return false
	}
	n.lpb -= n.rcFixed
	n.bnd = math.Min(n.bnd, n.lpb)
	return true
}

// rowBounds bounds every candidate of every ambiguous job by the
// integrality of one type row at a time: knapsack bounds over the
// remaining candidates (n.cb, starting from the Lagrangian estimates).
func (n *bbNode) rowBounds() bool {
	sr, m := n.sr, n.sr.m
	branch, lam, depth := n.amb, n.lam, n.depth
	n.pf = n.P + n.pFixed
	n.cb = make([][]float64, len(branch))
	for k := range branch {
		n.cb[k] = make([]float64, len(branch[k].cs))
		for ci, c := range branch[k].cs {
			n.cb[k][ci] = n.lpb - c.rc // Lagrangian estimate
		}
	}
	bfree := make([]int32, len(branch))
	allowed := make([][]cand, len(branch))
	for k := range branch {
		bfree[k], allowed[k] = branch[k].i, branch[k].cs
	}
	// the per-candidate bounds of the tightest row only: chosen among
	// all rows at the root and every few levels, else inherited
	kept := sr.keptRows(lam)
	if n.bt < 0 || depth%4 == 0 || !slices.Contains(kept, n.bt) {
		n.bt = -1
		btv := math.Inf(1)
		for _, t := range kept {
			cx, lx := sr.keptRow(n.capc, lam, t)
			rb := n.pf + sr.rowBound(bfree, cx, lx, t, allowed)
			if rb <= sr.target() {
				return false
			}
			if rb < btv {
				n.bt, btv = t, rb
			}
		}
	}
	for _, t := range kept {
		// every row near the root, the tightest one deeper (the
		// aggregate row, whose programs are the largest, only at the
		// first two levels unless it is the tightest)
		if t != n.bt && (depth > sr.allRowsDepth || t == m.nrows && depth > 1) {
			continue
		}
		cx, lx := sr.keptRow(n.capc, lam, t)
		fb := sr.forcedBounds(bfree, cx, lx, t, allowed)
		for k := range fb {
			for ci, v := range fb[k] {
				n.cb[k][ci] = math.Min(n.cb[k][ci], n.pf+v)
			}
		}
	}
	if sr.clk.expired() {
		n.stopOpen()
		return false
	}
	return true
}

// choose drops the candidates that cannot beat the incumbent, lowers the
// node's bound to the smallest over jobs of the best candidate bound, and
// returns the job to branch on (an index into n.amb), or -1 when the
// node is settled.
func (n *bbNode) choose() int {
	sr := n.sr
	bi, biN, biMax := -1, 0, math.Inf(1)
	for k := range n.amb {
		mx := math.Inf(-1)
		cnt := 0
		for _, v := range n.cb[k] {
			if v > sr.target() {
				cnt++
			}
			mx = math.Max(mx, v)
		}
		if cnt == 0 {
			return -1
		}
		n.bnd = math.Min(n.bnd, mx)
		// branch on the job with the fewest surviving candidates, then the
		// lowest best-candidate bound (perturbed on randomised restarts)
		if sr.noise > 0 {
			mx += sr.noise * (n.lpb - sr.target()) * sr.rng.Float64()
		}
		if bi < 0 || cnt < biN || (cnt == biN && mx < biMax) {
			bi, biN, biMax = k, cnt, mx
		}
	}
	if n.bnd <= sr.target() {
		return -1
	}
	return bi
}

// branch explores the children of the node on job n.amb[bi], best
// bound first.
func (n *bbNode) branch(bi int) {
	sr, m := n.sr, n.sr.m
	rest := make([]int32, 0, len(n.amb)-1)
	for k := range n.amb {
		if k != bi {
			rest = append(rest, n.amb[k].i)
		}
	}
	b := n.amb[bi]
	j := &m.jobs[b.i]
	// children best bound first
	idx := make([]int, len(b.cs))
	for ci := range idx {
		idx[ci] = ci
	}
	key := make([]float64, len(idx))
	for ci := range key {
		key[ci] = n.cb[bi][ci]
		if sr.noise > 0 {
			key[ci] += sr.noise * (n.bnd - sr.target()) * sr.rng.Float64()
		}
	}
	sort.SliceStable(idx, func(x, y int) bool { return key[idx[x]] > key[idx[y]] })
	child := make([]int, len(n.capc))
	for _, ci := range idx {
		c := b.cs[ci]
		ce := n.cb[bi][ci]
		if ce <= sr.target() {
			continue // (with noise, the children are not in bound order)
		}
		if sr.stop {
			sr.open = math.Max(sr.open, ce)
			break
		}
		copy(child, n.capc)
		pc := n.P + n.pFixed
		if c.o >= 0 {
			if !sr.fits(child, j, c.o) {
				continue
			}
			apply(child, j, c.o, 1)
			pc += j.opts[c.o].p
		}
		sr.cur[b.i] = c.o
		sr.node(rest, append([]int(nil), child...), pc, n.lam, ce, n.depth+1, n.bt)
		sr.cur[b.i] = -1
	}
}

// greedy returns a choice for the free jobs (parallel to free) that fits
// capv: options in increasing reduced cost at lam (ties: larger profit, then
// job order), then passes that upgrade any job whose better option fits.
//
// The scan of every option in that order is a merge of the jobs' own
// orders (each job's options sorted by the same key): a heap of jobs keyed
// by their next option yields the options in the global order, and a job
// leaves it as soon as it takes an option (its later ones would be
// skipped), so only a few options per job are looked at. The clock is
// consulted as it goes; stopped, the choice so far (which fits) is
// returned.
func (sr *search) greedy(free []int32, capv []int, lam []float64) []int {
	m := sr.m
	type entry struct {
		o  int32
		rc float64
		p  float64
	}
	// each job's options by (rc, -p, o), in one backing array
	n := sr.optionCount(free)
	flat := make([]entry, 0, n)
	start := make([]int32, len(free)+1)
	for k, i := range free {
		j := &m.jobs[i]
		if sr.clk.tick(24 * len(j.opts)) {
			break
		}
		h, _ := j.best(lam)
		from := len(flat)
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := h - (o.p - j.groups[o.grp].price(lam)*float64(o.g))
			flat = append(flat, entry{int32(oi), rc, o.p})
		}
		es := flat[from:]
		slices.SortFunc(es, func(a, b entry) int {
			switch {
			case a.rc != b.rc:
				return cmp.Compare(a.rc, b.rc)
			case a.p != b.p:
				return cmp.Compare(b.p, a.p)
			}
			return int(a.o - b.o)
		})
		start[k+1] = int32(len(flat))
	}
	choice := make([]int, len(free))
	for k := range choice {
		choice[k] = -1
	}
	if sr.clk.stopped {
		return choice // (interrupted while sorting: nothing chosen)
	}
	// the heap of jobs by their next option (pos[k]), smallest key first
	pos := make([]int32, len(free))
	less := func(a, b int32) bool {
		x, y := &flat[pos[a]], &flat[pos[b]]
		switch {
		case x.rc != y.rc:
			return x.rc < y.rc
		case x.p != y.p:
			return x.p > y.p
		case a != b:
			return a < b
		}
		return x.o < y.o
	}
	hp := make([]int32, 0, len(free))
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(hp) {
				return
			}
			if r := l + 1; r < len(hp) && less(hp[r], hp[l]) {
				l = r
			}
			if !less(hp[l], hp[i]) {
				return
			}
			hp[i], hp[l] = hp[l], hp[i]
			i = l
		}
	}
	for k := range free {
		pos[k] = start[k]
		if start[k] < start[k+1] {
			hp = append(hp, int32(k))
		}
	}
	for i := len(hp)/2 - 1; i >= 0; i-- {
		down(i)
	}
	left := append([]int(nil), capv...)
	for len(hp) > 0 {
		if sr.clk.tick(64) {
			return choice
		}
		k := hp[0]
		j := &m.jobs[free[k]]
		if o := int(flat[pos[k]].o); sr.fits(left, j, o) {
			choice[k] = o
			apply(left, j, o, 1)
			hp[0] = hp[len(hp)-1]
			hp = hp[:len(hp)-1]
		} else if pos[k]++; pos[k] == start[k+1] {
			hp[0] = hp[len(hp)-1]
			hp = hp[:len(hp)-1]
		}
		down(0)
	}
	for pass := 0; pass < 3; pass++ {
		changed := false
		for k, i := range free {
			if sr.clk.tick(4 * len(m.jobs[i].opts)) {
				return choice
			}
			c := choice[k]
			bo := sr.upgrade(left, &m.jobs[i], c)
			if bo != c {
				choice[k] = bo
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return choice
}

// greedyMinJobs is the number of jobs the greedy incumbents consider
// before they look at the clock's greedyEnd: like the dual's single
// evaluation, a bounded amount of work that a late search always does.
const greedyMinJobs = 64

// greedyNanos is about the time quickGreedy takes per option, in
// nanoseconds (marginalGreedy takes about twice as long: the
// cutting-plane path's reserve and check count 2·greedyNanos for it).
const greedyNanos = 60

// marginalNanos is about the time marginalGreedy takes per option on the
// 5,000-job rounds of the hard corpus (1.2-1.6 times quickGreedy's), which
// the Newton path reserves and checks (see firstGreedies).
const marginalNanos = 80

// optionCount is the number of options of the free jobs.
func (sr *search) optionCount(free []int32) int {
	n := 0
	for _, i := range free {
		n += len(sr.m.jobs[i].opts)
	}
	return n
}

// veryTightGreedies is the number of greedy passes over the options below
// which a deadline leaves no time for the knapsack heuristics after the
// root's dual (veryTightDeadline).
const veryTightGreedies = 80

// veryTightDeadline reports whether the solve has a deadline that leaves,
// from the search's start, time for fewer than veryTightGreedies greedy
// passes over the free jobs' options (a round of thousands of jobs under
// 100 ms, not under 1 s): the root's dual then stops when it stalls, and
// exchange moves improve the greedy incumbent with the time it leaves.
func (sr *search) veryTightDeadline(free []int32) bool {
	if sr.clk.deadline.IsZero() {
		return false
	}
	return sr.clk.deadline.Sub(sr.clk.started) < time.Duration(veryTightGreedies*greedyNanos*float64(sr.optionCount(free)))
}

// tightDualStall is the stall test of the root's dual under a tight
// deadline (see minimizeDualFirst): it stops once ten iterations have
// improved the bound by less than this share.
const tightDualStall = 2e-5

// tightGreedies is the number of greedy passes over the options below
// which a deadline counts as tight (tightDeadline).
const tightGreedies = 500

// tightDeadline reports whether the solve has a deadline that leaves,
// from the solve's start, time for fewer than tightGreedies greedy passes
// over the free jobs' options: a round of a few thousand jobs under a
// deadline of 100 ms or 1 s, not a round of a few hundred jobs under
// sia's 5 s default, whose answers stay those of a solve without a
// deadline. The test reads the deadline's length, not the machine's speed.
func (sr *search) tightDeadline(free []int32) bool {
	if sr.clk.deadline.IsZero() {
		return false
	}
	return sr.clk.deadline.Sub(sr.clk.started) < time.Duration(tightGreedies*greedyNanos*float64(sr.optionCount(free)))
}

// staleWarmJobs is the most jobs on which the root runs the warm start's
// greedy past greedyEnd (a pass over every job and its check, 20-60 ns per
// job) when the greedies before it did not improve on the warm start.
const staleWarmJobs = 4 * greedyMinJobs

// quickGreedy is the incumbent of last resort, linear in the options but
// for ordering the jobs (a heap, paid per job taken: profitOrder): it
// starts from start (a choice parallel to free that fits capv; nil = every
// job unallocated), lets every unassigned job,
// in decreasing order of its best Lagrangian profit at lam, take the option
// of least reduced cost that still fits, then upgrades any job whose more
// profitable option fits. Started from a warm start, it keeps the previous
// allocations and starts queued jobs on the capacity left. When lam is far
// too low for the capacity (shortAtLam), those options give the capacity
// whole to the first jobs: the pass that spreads it (each job its option
// of most profit per GPU, then the GPUs left a step at a time where they
// add most per GPU, as the late admission does) runs instead, or beside the
// Lagrangian pass when the clock affords both; the more profitable is
// returned (on the 5,000-job quota round of the hard corpus at 20 ms,
// whose multipliers are short too, the Lagrangian pass is the better).
func (sr *search) quickGreedy(free []int32, capv []int, lam []float64, start []int) []int {
	choice := make([]int, len(free))
	left := append([]int(nil), capv...)
	order, short, cut := sr.quickOrder(free, left, lam, start, choice)
	// (both passes when the clock affords them from here: the copies are
	// linear in the jobs)
	if !short || !sr.clk.greedyAffords(2*greedyNanos*sr.optionCount(free)) {
		sr.quickPasses(free, left, lam, choice, order, short, cut)
		return choice
	}
	lagChoice, lagLeft := slices.Clone(choice), slices.Clone(left)
	lagOrder := slices.Clone(order)
	sr.quickPasses(free, left, lam, choice, order, true, cut)
	sr.quickPasses(free, lagLeft, lam, lagChoice, lagOrder, false, cut)
	if sr.freeProfit(free, lagChoice) > sr.freeProfit(free, choice) {
		return lagChoice
	}
	return choice
}

// quickOrder is quickGreedy's first pass: it sets choice to start (-1
// where start is nil or negative), takes start's options from left, and
// returns the other jobs' order by their best Lagrangian profit at lam
// (past greedyEnd only those ordered so far: cut), and whether their best
// options ask for far more than left (shortAtLam; the jobs ordered stand
// for every queued job, as in shortOfCapacity: counting only the 64 jobs a
// round out of time orders, warm-started 5 ms rounds on 5,000 identical
// jobs found their demand short of the GPUs left and gave each of them 16
// GPUs, round after round, until 375 such jobs held 6,000 of 7,503 GPUs).
func (sr *search) quickOrder(free []int32, left []int, lam []float64, start, choice []int) (order profitOrder, short, cut bool) {
	m := sr.m
	// (grown as jobs are ordered: a pass cut short orders a few dozen,
	// and zeroing room for every job cost more than ordering them)
	order = make(profitOrder, 0, min(len(free), 2*greedyMinJobs))
	var pace greedyPace              // the clock, by the pass's work (lateclock.go)
	demand := make([]int, len(left)) // of each job's best option at lam
	queued := 0
	for k, i := range free {
		choice[k] = -1
		j := &m.jobs[i]
		if start != nil && start[k] >= 0 {
			choice[k] = start[k]
			apply(left, j, start[k], 1)
			continue
		}
		queued++
		// past greedyEnd, only the jobs ordered so far are considered
		if !cut {
			cut = pace.over(sr.clk, j)
		}
		if cut {
			continue
		}
		h, bo := j.best(lam)
		if bo >= 0 {
			apply(demand, j, bo, -1) // (apply takes from capacity: -1 adds)
		}
		order.push(profitEntry{k, h})
	}
	scale := 1.0
	if len(order) > 0 {
		scale = float64(queued) / float64(len(order))
	}
	return order, shortAtLam(demand, scale, left), cut
}

// quickPasses are quickGreedy's two passes over the jobs of order, on
// choice and left: each job in turn takes the option of least reduced cost
// at lam that fits (spread: of most profit per GPU), then every job is
// upgraded in job order (upgradeInOrder; spread: the GPUs left go a step
// at a time where they add most per GPU, spreadRest). cut says quickOrder
// did not order every queued job; when either pass over them is cut short
// after admitting some, the GPUs left stay for the jobs not reached
// (noStepUps).
func (sr *search) quickPasses(free []int32, left []int, lam []float64, choice []int, order profitOrder, spread, cut bool) {
	m := sr.m
	var pace1 greedyPace // the clock, by the work of the first pass (lateclock.go)
	admitted := false
	// the jobs in decreasing order of profit, taken one at a time: the pass
	// looks at its clock between any two, and goes down the order past
	// jobs that do not fit for as long as it has time
	for {
		e, ok := order.next()
		if !ok {
			break
		}
		j := &m.jobs[free[e.k]]
		if pace1.over(sr.clk, j) {
			cut = true
			break // out of time (see clock.greedyOver)
		}
		bo := -1
		if spread {
			bo = sr.spreadChoice(left, j)
		} else {
			brc := math.Inf(1)
			for oi := range j.opts {
				o := &j.opts[oi]
				rc := e.h - (o.p - j.groups[o.grp].price(lam)*float64(o.g))
				if (rc < brc || rc == brc && o.p > j.opts[bo].p) && sr.fits(left, j, oi) {
					bo, brc = oi, rc
				}
			}
		}
		if bo >= 0 {
			choice[e.k] = bo
			apply(left, j, bo, 1)
			admitted = true
		}
	}
	switch {
	case noStepUps(cut, admitted):
	case spread:
		sr.spreadRest(free, left, choice, false)
	default:
		sr.upgradeInOrder(free, left, choice, false)
	}
}

// spreadRest hands the capacity left to the jobs of free (choice, parallel
// to free, fits capv less left) a step at a time, the best step first by
// profit per GPU added: a job with an option steps up to its option of
// most profit per GPU added that fits once its own is given back
// (nextStep), a job with none takes its option of most profit per GPU
// (spreadChoice), and a job that moved queues its next step. A step whose
// slope fell while it waited (the capacity it needed was taken) is queued
// again at its new slope. This is the greedy that is optimal for one row
// and concave profits; handing out the rest in job order, each job taking
// what it gains most from, gave it whole to the first jobs (on 5,000
// identical jobs over 7,503 GPUs of three types, 156 jobs took 16 GPUs
// while 4,844 kept 1: 11,004 against an optimum of 12,072.6, after every
// root heuristic of a 2 s solve). Past the clock's greedyEnd (greedyPace),
// or past the deadline when strict, the scan stops, and the jobs scanned so
// far make the steps the pace allows until its next look at the clock (the
// scan and the steps share one greedyPace: a pace each let a pass cut
// short make greedyMinJobs steps past greedyEnd on top of its scan's, and
// quickGreedy on 10,000 jobs ran up to 0.8 ms past greedyEnd); every move
// fits and gains, so choice stays feasible.
func (sr *search) spreadRest(free []int32, left []int, choice []int, strict bool) {
	m := sr.m
	pace := greedyPace{strict: strict} // (one for the scan and the steps)
	// (pushed as they are scanned, not ordered at the end: ordering
	// thousands of steps at once is work no clock looks into)
	var h stepHeap
	for k, i := range free {
		j := &m.jobs[i]
		if pace.over(sr.clk, j) {
			break // (the steps of the jobs scanned so far)
		}
		if o, slope := sr.nextStep(left, j, choice[k]); o >= 0 {
			h.push(step{k: k, slope: slope})
		}
	}
	for len(h) > 0 {
		s := h.pop()
		j := &m.jobs[free[s.k]]
		if pace.over(sr.clk, j) {
			return
		}
		o, slope := sr.nextStep(left, j, choice[s.k])
		switch {
		case o < 0:
			continue
		case slope < s.slope && len(h) > 0 && slope < h[0].slope:
			h.push(step{k: s.k, slope: slope}) // no longer the best step
			continue
		}
		if c := choice[s.k]; c >= 0 {
			apply(left, j, c, -1)
		}
		apply(left, j, o, 1)
		choice[s.k] = o
		if o, slope := sr.nextStep(left, j, o); o >= 0 {
			h.push(step{k: s.k, slope: slope})
		}
	}
}

// nextStep is job j's next step from its option c (-1: none) on capv:
// the option of most profit gained per GPU added (stepSlope) that gains
// more than the tolerance and fits once c is given back, with its slope;
// from none, its option of most profit per GPU that fits (spreadChoice).
// It returns -1 when no option gains. capv is left as it was.
func (sr *search) nextStep(capv []int, j *mjob, c int) (int, float64) {
	if c < 0 {
		o := sr.spreadChoice(capv, j)
		if o < 0 || !(j.opts[o].p > sr.eqTol) {
			return -1, 0
		}
		return o, stepSlope(0, 0, j.opts[o].p, j.opts[o].g)
	}
	apply(capv, j, c, -1)
	cur := &j.opts[c]
	bo, bs := -1, 0.0
	for oi := range j.opts {
		o := &j.opts[oi]
		if o.p <= cur.p+sr.eqTol {
			continue
		}
		if slope := stepSlope(cur.p, cur.g, o.p, o.g); slope > bs && sr.fits(capv, j, oi) {
			bo, bs = oi, slope
		}
	}
	apply(capv, j, c, 1)
	return bo, bs
}

// shortAtLam reports whether the best options at the multipliers ask for
// more than twice the capacity left (demand, times scale, less left,
// summed over the rows, above what is left): multipliers far too low, as a
// dual cut short by the deadline leaves them. On 5,000 identical jobs over
// 7,503 GPUs, five Newton passes left every job's best option at 16 GPUs:
// the first 476 jobs took the GPUs, 4,524 waited (objective −757 against
// 11,004), and the warm-started rounds after it kept them. Near the
// optimal multipliers a tie between two options at most doubles the
// demand.
func shortAtLam(demand []int, scale float64, left []int) bool {
	excess, room := 0.0, 0.0
	for r, d := range demand {
		excess += max(0, scale*float64(d)-float64(left[r]))
		room += float64(max(0, left[r]))
	}
	return excess > room
}

// spreadChoice is the option of job j of most profit per GPU that fits
// capv (ties: more profit), -1 when none fits.
func (sr *search) spreadChoice(capv []int, j *mjob) int {
	bo := -1
	for oi := range j.opts {
		o := &j.opts[oi]
		if bo >= 0 && !perGPU(o.p, o.g, j.opts[bo].p, j.opts[bo].g) {
			continue
		}
		if sr.fits(capv, j, oi) {
			bo = oi
		}
	}
	return bo
}

// warmStart maps Settings.WarmStart to a model choice, or nil when it does
// not fit the problem (wrong length, pins not held, out of range, capacity
// exceeded). Options no better than staying unallocated map to none, and
// dominated options to the option that dominates them; neither uses more
// capacity, so the result stays feasible.
func (sr *search) warmStart() []int {
	ws := sr.set.WarmStart
	p := sr.m.p
	if len(ws) != len(p.Jobs) || !feasible(p, ws, sr.m.lateIndex()) {
		return nil
	}
	choice := make([]int, len(sr.m.jobs))
	for i := range sr.m.jobs {
		j := &sr.m.jobs[i]
		choice[i] = -1
		k := ws[j.orig]
		if k < 0 {
			continue
		}
		o := p.Jobs[j.orig].Options[k]
		if !(sr.m.sign*(o.Value-p.Jobs[j.orig].Unallocated) > 0) {
			continue
		}
		for oi := range j.opts {
			if q := p.Jobs[j.orig].Options[j.opts[oi].k]; q.Type == o.Type && q.GPUs <= o.GPUs {
				choice[i] = oi // largest non-dominated option of the type within o's size
			}
		}
	}
	return choice
}

func (sr *search) solution() Solution {
	m := sr.m
	assign := append([]int(nil), m.pins...)
	for i := range m.jobs {
		if c := sr.best[i]; c >= 0 {
			assign[m.jobs[i].orig] = int(m.jobs[i].opts[c].k)
		}
	}
	lateGain := 0.0
	// The late admission completes the plan with the jobs after the model
	// (m.rest on) and, when the search was cut short, the model's jobs the
	// incumbent leaves unallocated: past greedyEnd the greedy that starts
	// queued jobs from the warm start does not run on thousands of jobs, and
	// warm-started 5 ms rounds on 5,000 identical jobs, whose model held the
	// first 2,500-3,800, stopped at 2,752 jobs running (4,689 of 7,503 GPUs
	// idle) once every job after the model had its warm option.
	from := m.rest
	if !sr.proved {
		from = 0
	}
	if from < len(m.p.Jobs) {
		// every option is validated: admitLate finds no error
		// the model's rows, and the capacity its pins and incumbent leave
		rows := *m.lateIndex()
		rows.left = append([]int(nil), m.cap...)
		if m.byIndex(sr.best) {
			for r, u := range m.choiceUsage(sr.best) {
				rows.left[r] -= u
			}
		} else {
			for i := range m.jobs {
				if c := sr.best[i]; c >= 0 {
					apply(rows.left, &m.jobs[i], c, 1)
				}
			}
		}
		lateGain, _ = admitLate(m.p, assign, from, sr.set.WarmStart, len(m.p.Jobs), sr.clk, &rows)
	}
	obj := m.p.Objective(assign)
	sol := Solution{Status: Feasible, Assignment: assign, Objective: obj, Nodes: sr.nodes}
	if sr.proved && m.rest == len(m.p.Jobs) {
		sol.Status = Optimal
		sol.Bound = obj
		if sr.grid == 0 && sr.set.Tolerance > 0 {
			// Proven only within the caller's tolerance: no assignment
			// beats obj by more than the step (nor beats the root's bound).
			sol.Bound = obj + m.sign*math.Max(0, math.Min(sr.step, sr.root-sr.bestP))
		}
		return sol
	}
	ub := math.Max(sr.open, sr.bestP)
	if sr.proved {
		ub = sr.bestP
	}
	if sr.grid == 0 && sr.set.Tolerance > 0 {
		// subtrees pruned within the caller's tolerance of the incumbent
		// are not in sr.open
		ub = math.Max(ub, sr.bestP+sr.step)
	}
	ub = math.Min(ub, sr.root) + m.restP
	c := obj - m.sign*(sr.bestP+lateGain) // constant part of the objective
	sol.Bound = c + m.sign*ub
	if m.rest < len(m.p.Jobs) && sr.warm != nil {
		keepWarm(m.p, &sol, sr.set.WarmStart, m.pins, sr.clk)
	}
	return sol
}
