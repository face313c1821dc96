package sia

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/ilp"
)

// Configurations that span the pools of a type (configset.Config.Span).
//
// A type with nodes of several sizes has one capacity row per pool; a
// spanning configuration uses GPUs of several of them, which an option of
// the allocation problem (one row each) cannot say. Such entries are few:
// they are offered only to jobs whose minimum no pool holds (a rigid count
// above every pool, a MinGPUs above every pool), at most maxSpansPerType per
// type, and for a running job's current allocation on nodes of several
// sizes. So Solve enumerates their choices exactly outside the solver: each
// branch fixes, for every job with spanning entries, either one of them
// (its GPUs taken off each pool's capacity and off the quotas that count
// it; the job then has no option in the branch) or none (the job keeps its
// one-pool options); the rest is solved by ilp.Solve as before, and the
// best branch wins. The optimum is the best branch optimum, and the bound
// the best branch bound, so the answer is Optimal only when every branch
// was solved to optimality. At most maxSpanBranches branches are solved
// (jobs running on a spanning configuration first, then the others, in row
// order, are enumerated while the branch count stays within it); the
// spanning entries of the other jobs are not taken, the status is
// then Feasible and the bound is raised by each such job's best possible
// gain from a spanning entry (valid: taking one only removes capacity from
// the others). A deadline is shared out evenly among the branches left;
// once it has passed, the branches left are bounded (relaxedBound) but not
// solved, so the answer is Feasible with a true bound. The first branch
// solved is the warm one: every enumerated job running on a spanning
// configuration keeps it (the solver's warm start cannot say it, as no
// option has several rows), so that a round out of time, which solves that
// branch only, keeps such jobs where they run when they fit.
//
// Why not options with several rows in package ilp: every bound, greedy,
// dynamic programme and branching rule of its solver assumes one capacity
// row per option, and spanning entries are rare (a job larger than every
// pool of its type); the enumeration keeps that solver as it is and is
// exact where it completes.
//
// Adaptive jobs whose minimum some pool holds are not offered spanning
// configurations: they can always run in one pool, every spanning option
// would multiply the branches, and a job that large rarely scales better
// across node sizes than within its pool; the cost is that such a job never
// grows beyond its type's largest pool.
const (
	maxSpansPerType = 4
	maxSpanBranches = 64
)

// spannedCurrent is the spanning configuration of a running allocation
// whose placement lies on nodes of several sizes of its type.
func (cl *cluster) spannedCurrent(cur Allocation) (configset.Config, bool) {
	if len(cur.Placement) == 0 {
		return configset.Config{}, false
	}
	// Most allocations lie on nodes of one size: no maps for them.
	one := true
	for _, g := range cur.Placement[1:] {
		if cl.nodeGPUs(g.Node) != cl.nodeGPUs(cur.Placement[0].Node) {
			one = false
			break
		}
	}
	if one {
		return configset.Config{}, false
	}
	type acc struct{ nodes, gpus int }
	per := map[int]*acc{}
	seen := map[string]bool{}
	var sizes []int
	for _, g := range cur.Placement {
		r := cl.nodeGPUs(g.Node)
		a, ok := per[r]
		if !ok {
			a = &acc{}
			per[r] = a
			sizes = append(sizes, r)
		}
		if !seen[g.Node] {
			seen[g.Node] = true
			a.nodes++
		}
		a.gpus++
	}
	if len(sizes) < 2 {
		return configset.Config{}, false
	}
	parts := make([]configset.Part, 0, len(sizes))
	for _, r := range sizes {
		parts = append(parts, configset.Part{NodeGPUs: r, Nodes: per[r].nodes, GPUs: per[r].gpus})
	}
	return cl.set.Spanned(cur.Type, parts)
}

// usesOf returns the capacity rows entry e takes: one option per pool of a
// spanning configuration (each part charged as configset.Set.Charge does,
// or exactly its GPUs when exact or when the entry is charged its GPUs, as
// a pinned entry is), else the entry's one option.
func usesOf(e *matrixEntry, exact bool) []ilp.Option {
	c := e.Config
	if !c.Spanning() {
		g := e.charge()
		if exact {
			g = c.GPUs
		}
		return []ilp.Option{{Type: c.Pool(), GPUs: g, Value: e.Value}}
	}
	exact = exact || e.charge() == c.GPUs // each part's charge is at least its GPUs
	parts := c.Parts()
	out := make([]ilp.Option, len(parts))
	for k, p := range parts {
		g := p.GPUs
		if !exact {
			g = partCharge(p)
		}
		out[k] = ilp.Option{Type: configset.PoolName(c.Type, p.NodeGPUs), GPUs: g}
	}
	return out
}

// partCharge is configset.Set.PartCharge without the set: whole nodes, and
// the remainder charged as the smallest chain size holding it.
func partCharge(p configset.Part) int {
	r := p.NodeGPUs
	if r <= 0 {
		return p.GPUs
	}
	whole, rest := p.GPUs/r, p.GPUs%r
	if rest == 0 {
		return p.GPUs
	}
	for _, k := range configset.Chain(r) {
		if k >= rest {
			return whole*r + k
		}
	}
	return p.GPUs
}

// quotaUse returns the GPUs of uses (of one entry) that quota q counts: an
// option counts when the entry's charge is at least q.MinGPUs and its pool
// is one of the quota's (ilp.Quota.Counts).
func quotaUse(q *ilp.Quota, uses []ilp.Option) int {
	total := 0
	for _, u := range uses {
		total += u.GPUs
	}
	n := 0
	for _, u := range uses {
		if q.Counts(ilp.Option{Type: u.Type, GPUs: total}) {
			n += u.GPUs
		}
	}
	return n
}

// spanOpt is a spanning entry: row Row's entry Entry, the ilp job at
// position Pos; Uses are its capacity rows.
type spanOpt struct {
	pos, row, entry int
	uses            []ilp.Option
	value           float64
	pinned          bool
	current         bool // the job's current configuration
}

// spanGroup is the spanning entries of one job.
type spanGroup struct {
	pos    int
	opts   []spanOpt
	pinned bool // the job is pinned to opts[0]
	lambda float64
}

// groupSpans groups the spanning entries by job (in position order).
func groupSpans(p *ilp.Problem, spans []spanOpt) []spanGroup {
	var out []spanGroup
	for _, s := range spans {
		if len(out) == 0 || out[len(out)-1].pos != s.pos {
			out = append(out, spanGroup{pos: s.pos, lambda: p.Jobs[s.pos].Unallocated})
		}
		g := &out[len(out)-1]
		if s.pinned {
			g.opts, g.pinned = []spanOpt{s}, true
			continue
		}
		if !g.pinned {
			g.opts = append(g.opts, s)
		}
	}
	return out
}

// hasCurrent is 1 when one of g's entries is its job's current
// configuration, else 0.
func (g *spanGroup) hasCurrent() int {
	for k := range g.opts {
		if g.opts[k].current {
			return 1
		}
	}
	return 0
}

// digits is the number of choices of group g in the enumeration: none or
// one of its entries (only its entry when pinned).
func (g *spanGroup) digits() int {
	if g.pinned {
		return 1
	}
	return len(g.opts) + 1
}

// choice returns the spanning entry digit d of g stands for, or nil (none).
func (g *spanGroup) choice(d int) *spanOpt {
	if g.pinned {
		return &g.opts[0]
	}
	if d == 0 {
		return nil
	}
	return &g.opts[d-1]
}

// gain is the most a spanning entry of g can improve on leaving the job
// unallocated (≥ 0).
func (g *spanGroup) gain(sense ilp.Sense) float64 {
	best := 0.0
	for _, s := range g.opts {
		d := s.value - g.lambda
		if sense == ilp.Minimize {
			d = g.lambda - s.value
		}
		best = math.Max(best, d)
	}
	return best
}

// fixBranch returns p with the chosen spanning entries fixed: their jobs
// have no option left, their uses are taken off the pools' capacities and
// off the quotas that count them; adj is what the fixed jobs add to the
// objective beyond Unallocated. False when the fixed entries do not fit
// (capacity less reservations, or a quota).
func fixBranch(p *ilp.Problem, fixed []*spanOpt, lambdas []float64) (q *ilp.Problem, adj float64, ok bool) {
	cp := *p
	q = &cp
	q.Capacity = make(map[string]int, len(p.Capacity))
	for k, v := range p.Capacity {
		q.Capacity[k] = v
	}
	q.Jobs = append([]ilp.Job(nil), p.Jobs...)
	q.Quotas = append([]ilp.Quota(nil), p.Quotas...)
	for x, s := range fixed {
		if s == nil {
			continue
		}
		q.Jobs[s.pos].Options, q.Jobs[s.pos].Pin = nil, -1
		adj += s.value - lambdas[x]
		for _, u := range s.uses {
			c, known := q.Capacity[u.Type]
			if !known || u.GPUs > c-p.Reserved[u.Type] {
				return nil, 0, false
			}
			q.Capacity[u.Type] = c - u.GPUs
		}
		for k := range q.Quotas {
			qu := &q.Quotas[k]
			if !qu.AllJobs && !containsInt(qu.Jobs, s.pos) {
				continue
			}
			if qu.Limit -= quotaUse(qu, s.uses); qu.Limit < 0 {
				return nil, 0, false
			}
		}
	}
	// the fixed capacities must still hold the reservations and pins
	for k, c := range q.Capacity {
		if c < p.Reserved[k] {
			return nil, 0, false
		}
	}
	return q, adj, true
}

func containsInt(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// solveSpans solves p with the spanning entries enumerated (see the
// constants above); fixed maps the positions of jobs given a spanning
// entry to it. cut says the solution is not proven optimal only because
// the enumeration left groups out (maxSpanBranches), not because the
// deadline or the node limit stopped a branch.
func solveSpans(ctx context.Context, p *ilp.Problem, warm []int, spans []spanOpt, o *Options) (sol ilp.Solution, fix map[int]*spanOpt, cut bool, err error) {
	e := newSpanEnum(p, spans)
	fixed := make([]*spanOpt, len(e.enum))
	w := make([]int, len(warm))
	first := e.warmBranch()
	for k := 0; k < e.branches; k++ {
		b := branchAt(k, first)
		e.branch(b, fixed)
		if err := e.solveBranch(ctx, k, fixed, warm, w, o); err != nil {
			return ilp.Solution{}, nil, false, err
		}
	}
	sol, fix, err = e.result()
	return sol, fix, len(e.skipped) > 0 && !e.stopped, err
}

// branchAt is the k-th branch solved: the warm branch first, then the
// others in order.
func branchAt(k, first int) int {
	switch {
	case k == 0:
		return first
	case k <= first:
		return k - 1
	default:
		return k
	}
}

// warmBranch is the branch that keeps every enumerated job whose current
// configuration is a spanning entry on it (the warm start of the
// enumeration): solved first, so that a round out of time, which solves
// only its first branch, keeps such jobs where they run.
func (e *spanEnum) warmBranch() int {
	b, radix := 0, 1
	for x := range e.enum {
		g := &e.enum[x]
		if !g.pinned {
			for k := range g.opts {
				if g.opts[k].current {
					b += (k + 1) * radix
					break
				}
			}
		}
		radix *= g.digits()
	}
	return b
}

// spanEnum is the enumeration of the spanning entries: the groups
// enumerated (jobs in row order while the branches stay within
// maxSpanBranches) and skipped, and the best branch so far.
type spanEnum struct {
	p              *ilp.Problem
	enum, skipped  []spanGroup
	branches       int
	lambdas        []float64 // per enumerated group: its job's Unallocated
	best           ilp.Solution
	bestFix        []*spanOpt
	found, optimal bool
	bound          float64
	firstErr       error // the first infeasible branch's
	// stopped says a branch was cut short by the deadline or the node
	// limit (not only left out of the enumeration, see skipped).
	stopped bool
}

func newSpanEnum(p *ilp.Problem, spans []spanOpt) *spanEnum {
	groups := groupSpans(p, spans)
	// Jobs running on a spanning configuration first, so that they are
	// enumerated (and their warm branch keeps them) before any other.
	slices.SortStableFunc(groups, func(a, b spanGroup) int { return b.hasCurrent() - a.hasCurrent() })
	branches, n := 1, 0
	for n < len(groups) && branches*groups[n].digits() <= maxSpanBranches {
		branches *= groups[n].digits()
		n++
	}
	e := &spanEnum{p: p, enum: groups[:n], skipped: groups[n:], branches: branches, lambdas: make([]float64, n), optimal: n == len(groups)}
	for x := range e.enum {
		e.lambdas[x] = e.enum[x].lambda
	}
	return e
}

// branch sets fixed to the spanning entries of branch b (a mixed-radix
// number, one digit per enumerated group).
func (e *spanEnum) branch(b int, fixed []*spanOpt) {
	for x := range e.enum {
		fixed[x] = e.enum[x].choice(b % e.enum[x].digits())
		b /= e.enum[x].digits()
	}
}

// solveBranch solves the k-th branch solved (its entries fixed) with its share of ctx's
// time, or only bounds it once ctx has ended, and keeps it if it is the
// best; w is scratch for its warm start. Errors other than an infeasible
// branch end the enumeration.
func (e *spanEnum) solveBranch(ctx context.Context, k int, fixed []*spanOpt, warm, w []int, o *Options) error {
	p := e.p
	q, adj, ok := fixBranch(p, fixed, e.lambdas)
	if !ok {
		return nil
	}
	copy(w, warm)
	for _, s := range fixed {
		if s != nil {
			w[s.pos] = -1
		}
	}
	if e.found && !better(relaxedBound(q)+adj, e.best.Objective, p.Sense) {
		return nil // cannot beat the incumbent: pruned, the proof holds
	}
	if e.found && ctx.Err() != nil {
		// Out of time: the branch is not solved, only bounded (every
		// job at its best option, capacities ignored).
		if rb := relaxedBound(q) + adj; better(rb, e.bound, p.Sense) {
			e.bound = rb
		}
		e.optimal, e.stopped = false, true
		return nil
	}
	sol, err := e.solveShare(ctx, k, q, adj, w, o)
	if err == nil && sol.Status != ilp.Optimal && sol.Assignment != nil && e.found && !better(sol.Bound+adj, e.best.Objective, p.Sense) {
		// the root's bound cannot beat the incumbent: pruned, the proof holds
		return nil
	}
	if err != nil {
		if errors.Is(err, ilp.ErrInfeasible) {
			if e.firstErr == nil {
				e.firstErr = err
			}
			return nil
		}
		return err
	}
	if sol.Assignment == nil {
		e.optimal, e.stopped = false, true
		return nil
	}
	e.keep(sol, adj, fixed)
	return nil
}

// solveShare solves the k-th branch solved, problem q (its fixed entries
// worth adj), under its even share of the time left before ctx's
// deadline. Once a branch has been kept, the
// root of q is solved first (one node of the search): when its bound
// cannot beat the best branch, that root's solution is returned (the
// caller prunes it; a search below it could not change that), else the
// search goes on from the root's incumbent. A branch that drops a job
// running on a spanning configuration rarely can (it loses the job's
// value and pays a restart), and solving it in full took most of a round
// with a few such jobs.
func (e *spanEnum) solveShare(ctx context.Context, k int, q *ilp.Problem, adj float64, w []int, o *Options) (ilp.Solution, error) {
	bctx, cancel := ctx, context.CancelFunc(func() {})
	if deadline, ok := ctx.Deadline(); ok {
		bctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/time.Duration(e.branches-k)))
	}
	defer cancel()
	if e.found && (o.SolverMaxNodes == 0 || o.SolverMaxNodes > 1) {
		root, err := ilp.Solve(bctx, q, &ilp.Settings{WarmStart: w, MaxNodes: 1})
		if err != nil || root.Status == ilp.Optimal || root.Assignment == nil || bctx.Err() != nil {
			return root, err
		}
		if !better(root.Bound+adj, e.best.Objective, e.p.Sense) {
			return root, nil
		}
		w = root.Assignment
	}
	return solveOrGreedy(bctx, q, w, o)
}

// keep records a solved branch (objective and bound shifted by adj, the
// fixed entries' value) and keeps it if it is the best so far.
func (e *spanEnum) keep(sol ilp.Solution, adj float64, fixed []*spanOpt) {
	sense := e.p.Sense
	sol.Objective += adj
	sol.Bound += adj
	e.optimal = e.optimal && sol.Status == ilp.Optimal
	e.stopped = e.stopped || sol.Status != ilp.Optimal
	if !e.found || better(sol.Bound, e.bound, sense) {
		e.bound = sol.Bound
	}
	if !e.found || better(sol.Objective, e.best.Objective, sense) {
		e.best, e.bestFix = sol, append([]*spanOpt(nil), fixed...)
	}
	e.found = true
}

// result returns the best branch, its bound raised by what the skipped
// groups could gain, Optimal only when every branch was proven; and the
// spanning entries it fixed, by job position.
func (e *spanEnum) result() (ilp.Solution, map[int]*spanOpt, error) {
	if !e.found {
		if e.firstErr != nil {
			return ilp.Solution{}, nil, e.firstErr
		}
		return ilp.Solution{}, nil, &ilp.InputError{Field: "spanning configurations", Reason: "the pinned jobs on nodes of several sizes do not fit together", Err: ilp.ErrInfeasible}
	}
	bound := e.bound
	for x := range e.skipped {
		if g := e.skipped[x].gain(e.p.Sense); e.p.Sense == ilp.Maximize {
			bound += g
		} else {
			bound -= g
		}
	}
	best := e.best
	best.Bound = bound
	best.Status = ilp.Feasible
	if e.optimal {
		best.Status = ilp.Optimal
		best.Bound = best.Objective
	}
	out := map[int]*spanOpt{}
	for _, s := range e.bestFix {
		if s != nil {
			out[s.pos] = s
		}
	}
	return best, out, nil
}
