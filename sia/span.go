package sia

import (
	"context"
	"errors"
	"math"
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
// (jobs in row order are enumerated while the branch count stays within
// it); the spanning entries of the other jobs are not taken, the status is
// then Feasible and the bound is raised by each such job's best possible
// gain from a spanning entry (valid: taking one only removes capacity from
// the others). A deadline is shared out evenly among the branches left;
// once it has passed, the branches left are bounded (relaxedBound) but not
// solved, so the answer is Feasible with a true bound.
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
		if cl.nodeGPUs[g.Node] != cl.nodeGPUs[cur.Placement[0].Node] {
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
		r := cl.nodeGPUs[g.Node]
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
// entry to it.
func solveSpans(ctx context.Context, p *ilp.Problem, warm []int, spans []spanOpt, o *Options) (ilp.Solution, map[int]*spanOpt, error) {
	groups := groupSpans(p, spans)
	branches, n := 1, 0
	for n < len(groups) && branches*groups[n].digits() <= maxSpanBranches {
		branches *= groups[n].digits()
		n++
	}
	enum, skipped := groups[:n], groups[n:]
	lambdas := make([]float64, len(enum))
	for x := range enum {
		lambdas[x] = enum[x].lambda
	}
	deadline, hasDL := ctx.Deadline()
	var (
		best     ilp.Solution
		bestFix  []*spanOpt
		found    bool
		bound    float64
		optimal  = len(skipped) == 0
		firstErr error
	)
	fixed := make([]*spanOpt, len(enum))
	w := make([]int, len(warm))
	for b := 0; b < branches; b++ {
		d := b
		for x := range enum {
			fixed[x] = enum[x].choice(d % enum[x].digits())
			d /= enum[x].digits()
		}
		q, adj, ok := fixBranch(p, fixed, lambdas)
		if !ok {
			continue
		}
		copy(w, warm)
		for _, s := range fixed {
			if s != nil {
				w[s.pos] = -1
			}
		}
		if found && !better(relaxedBound(q)+adj, best.Objective, p.Sense) {
			continue // cannot beat the incumbent: pruned, the proof holds
		}
		if found && ctx.Err() != nil {
			// Out of time: the branch is not solved, only bounded (every
			// job at its best option, capacities ignored).
			if rb := relaxedBound(q) + adj; better(rb, bound, p.Sense) {
				bound = rb
			}
			optimal = false
			continue
		}
		bctx, cancel := ctx, context.CancelFunc(func() {})
		if hasDL {
			bctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)/time.Duration(branches-b)))
		}
		sol, err := solveOrGreedy(bctx, q, w, o)
		cancel()
		if err != nil {
			if errors.Is(err, ilp.ErrInfeasible) {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			return ilp.Solution{}, nil, err
		}
		if sol.Assignment == nil {
			optimal = false
			continue
		}
		sol.Objective += adj
		sol.Bound += adj
		optimal = optimal && sol.Status == ilp.Optimal
		if !found || better(sol.Bound, bound, p.Sense) {
			bound = sol.Bound
		}
		if !found || better(sol.Objective, best.Objective, p.Sense) {
			best, bestFix = sol, append([]*spanOpt(nil), fixed...)
		}
		found = true
	}
	if !found {
		if firstErr != nil {
			return ilp.Solution{}, nil, firstErr
		}
		return ilp.Solution{}, nil, &ilp.InputError{Field: "spanning configurations", Reason: "the pinned jobs on nodes of several sizes do not fit together", Err: ilp.ErrInfeasible}
	}
	for x := range skipped {
		if g := skipped[x].gain(p.Sense); p.Sense == ilp.Maximize {
			bound += g
		} else {
			bound -= g
		}
	}
	best.Bound = bound
	best.Status = ilp.Feasible
	if optimal {
		best.Status = ilp.Optimal
		best.Bound = best.Objective
	}
	out := map[int]*spanOpt{}
	for _, s := range bestFix {
		if s != nil {
			out[s.pos] = s
		}
	}
	return best, out, nil
}
