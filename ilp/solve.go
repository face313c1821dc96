package ilp

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// Status says how good a Solution is.
type Status int

const (
	// Optimal: the assignment is proven optimal (within the declared grid,
	// or within Settings.Tolerance when values are arbitrary).
	Optimal Status = iota
	// Feasible: the assignment satisfies every constraint but the search was
	// stopped (deadline, cancellation or node limit) before proving it
	// optimal; Bound says how far from optimal it can be.
	Feasible
	// Infeasible: the pins cannot all hold; there is no assignment.
	Infeasible
)

// String returns "optimal", "feasible" or "infeasible".
func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Feasible:
		return "feasible"
	case Infeasible:
		return "infeasible"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Solution is the result of Solve.
type Solution struct {
	Status Status
	// Assignment[i] is the option index chosen for Problem.Jobs[i], or -1 when
	// the job stays unallocated. Nil when Status is Infeasible.
	Assignment []int
	// Objective is the objective of Assignment, summed in job order.
	Objective float64
	// Bound is a proven bound on the optimum: no assignment is better than it
	// (a lower bound when minimising, an upper bound when maximising). It
	// equals Objective when Status is Optimal.
	Bound float64
	// Nodes is the number of branch-and-bound nodes explored.
	Nodes int
}

// Gap returns |Bound − Objective|.
func (s Solution) Gap() float64 { return math.Abs(s.Bound - s.Objective) }

// Settings tune Solve. A nil *Settings means the defaults.
type Settings struct {
	// WarmStart, when it has one entry per job and is feasible, is used as
	// the first incumbent (typically the previous round's assignment,
	// remapped to this round's jobs and options; -1 = unallocated). An
	// infeasible or mis-sized warm start is ignored.
	WarmStart []int
	// Tolerance is the absolute objective gap below which an assignment is
	// accepted as optimal when Problem.Grid is 0. Default (0): 1e-9 times
	// max(1, the largest |Value| or |Unallocated|).
	Tolerance float64
	// MaxNodes stops the search after this many branch-and-bound nodes
	// (0 = no limit); the result is then Feasible unless already proven.
	MaxNodes int
}

// ctxCheckEvery is how many nodes pass between checks of ctx.
const ctxCheckEvery = 1024

// Solve finds an optimal assignment of p. It is exact: with Status Optimal no
// assignment has a better objective (beyond the grid step or tolerance). It
// is deterministic, honours ctx (on cancellation or deadline it returns the
// best assignment found so far with a proven Bound and Status Feasible, and a
// nil error), never returns an assignment that breaks a constraint, and does
// not modify p. Invalid input returns an error wrapping ErrInvalidInput;
// pins that cannot all hold return Status Infeasible and an error wrapping
// ErrInfeasible.
func Solve(ctx context.Context, p *Problem, s *Settings) (Solution, error) {
	if err := p.Validate(); err != nil {
		if e, ok := err.(*InputError); ok && e.Err == ErrInfeasible {
			return Solution{Status: Infeasible, Bound: math.NaN(), Objective: math.NaN()}, err
		}
		return Solution{}, err
	}
	if s == nil {
		s = &Settings{}
	}
	if math.IsNaN(s.Tolerance) || s.Tolerance < 0 {
		return Solution{}, invalid("settings.tolerance", "must be a non-negative number, got %v", s.Tolerance)
	}
	if s.MaxNodes < 0 {
		return Solution{}, invalid("settings.maxNodes", "must be >= 0, got %d", s.MaxNodes)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	m := newModel(p)
	sr := newSearch(ctx, m, s)
	sr.run()
	return sr.solution(), nil
}

// search holds the branch-and-bound state.
type search struct {
	ctx context.Context
	m   *model
	set *Settings

	step   float64 // a solution must beat the incumbent by more than step
	eqTol  float64 // profit differences below eqTol are ties
	lam    []float64
	root   float64 // root Lagrangian bound on the profit
	h      []float64
	best   []int // incumbent: option index into m.jobs[i].opts, -1 none
	bestP  float64
	nodes  int
	stop   bool
	open   float64 // largest bound of a subtree left unexplored at stop
	proved bool

	// DFS state over the core jobs
	core  []int     // indices into m.jobs, in branching order
	cands [][]cand  // per core position, candidates by reduced cost
	cur   []int     // current choice per model job
	used  []int     // rows used by fixed + current choices
	fixed []int     // choices of jobs fixed at the root (-2 = core)
	pre   []float64 // profit of fixed jobs
}

// cand is one choice of a job in the DFS: an option (or -1 = none) and its
// reduced cost at the root multipliers.
type cand struct {
	o  int
	rc float64
}

func newSearch(ctx context.Context, m *model, set *Settings) *search {
	sr := &search{ctx: ctx, m: m, set: set, open: math.Inf(-1)}
	scale := 1.0
	for _, j := range m.p.Jobs {
		scale = math.Max(scale, math.Abs(j.Unallocated))
		for _, o := range j.Options {
			scale = math.Max(scale, math.Abs(o.Value))
		}
	}
	sr.eqTol = 1e-12 * scale * float64(1+len(m.p.Jobs))
	// With a grid, two objectives differ by a whole step up to the values'
	// deviations from the grid (each job's profit is off by at most twice its
	// largest deviation).
	var dev float64
	if g := m.p.Grid; g > 0 {
		for _, j := range m.p.Jobs {
			d := gridDev(j.Unallocated, g)
			mx := 0.0
			for _, o := range j.Options {
				mx = math.Max(mx, gridDev(o.Value, g))
			}
			dev += d + mx
		}
	}
	switch {
	case m.p.Grid > 0 && 2*dev < m.p.Grid/2:
		sr.step = m.p.Grid - 2*dev - 1e-9*m.p.Grid
	case set.Tolerance > 0:
		sr.step = set.Tolerance
	default:
		sr.step = 1e-9 * scale
	}
	sr.step = math.Max(sr.step, sr.eqTol)
	return sr
}

// fits reports whether option o of job j fits the residual rows.
func (sr *search) fits(j *mjob, o int) bool {
	op := &j.opts[o]
	for _, r := range j.groups[op.grp].rows {
		if sr.used[r]+op.g > sr.m.cap[r] {
			return false
		}
	}
	return true
}

func (sr *search) apply(j *mjob, o int, sign int) {
	op := &j.opts[o]
	for _, r := range j.groups[op.grp].rows {
		sr.used[r] += sign * op.g
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
	use := make([]int, sr.m.nrows)
	for i, c := range choice {
		if c >= 0 {
			j := &sr.m.jobs[i]
			op := &j.opts[c]
			for _, r := range j.groups[op.grp].rows {
				use[r] += op.g
				if use[r] > sr.m.cap[r] {
					return false
				}
			}
		}
	}
	return true
}

func (sr *search) offer(choice []int) {
	if !sr.feasible(choice) {
		return
	}
	if pv := sr.profit(choice); sr.best == nil || pv > sr.bestP+sr.eqTol {
		sr.best = append(sr.best[:0], choice...)
		sr.bestP = pv
	}
}

func (sr *search) run() {
	m := sr.m
	n := len(m.jobs)
	sr.used = make([]int, m.nrows)
	if n == 0 {
		sr.best, sr.bestP, sr.proved = []int{}, 0, true
		sr.root = 0
		return
	}
	// incumbents: warm start, then greedy from the root multipliers
	if ws := sr.warmStart(); ws != nil {
		sr.offer(ws)
	}
	tol := sr.step * 1e-3
	sr.lam, sr.root = m.minimizeDual(m.jobs, m.cap, nil, tol, 200)
	sr.h = make([]float64, n)
	for i := range m.jobs {
		sr.h[i], _ = m.jobs[i].best(sr.lam)
	}
	sr.offer(sr.greedy())
	if sr.root <= sr.bestP+sr.step {
		sr.proved = true
		return
	}
	// reduced-cost fixing and candidate lists
	limit := sr.root - sr.bestP - sr.step
	sr.fixed = make([]int, n)
	type coreJob struct {
		i      int
		second float64
	}
	var core []coreJob
	var candsOf [][]cand
	for i := range m.jobs {
		j := &m.jobs[i]
		cs := []cand{{o: -1, rc: sr.h[i]}}
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := sr.h[i] - (o.p - j.groups[o.grp].price(sr.lam)*float64(o.g))
			cs = append(cs, cand{o: oi, rc: math.Max(rc, 0)})
		}
		sort.SliceStable(cs, func(a, b int) bool { return cs[a].rc < cs[b].rc })
		k := 0
		for k < len(cs) && cs[k].rc < limit {
			k++
		}
		cs = cs[:k]
		switch len(cs) {
		case 0:
			// no choice of this job can lead to a better solution
			sr.proved = true
			return
		case 1:
			sr.fixed[i] = cs[0].o
		default:
			sr.fixed[i] = -2
			core = append(core, coreJob{i: i, second: cs[1].rc})
			candsOf = append(candsOf, cs)
		}
	}
	// fixed jobs: their rows are committed
	var fixedRC float64
	for i, c := range sr.fixed {
		if c >= 0 {
			if !sr.fits(&m.jobs[i], c) {
				sr.proved = true // the fixed choices alone do not fit
				return
			}
			sr.apply(&m.jobs[i], c, 1)
			fixedRC += sr.h[i] - (m.jobs[i].opts[c].p - m.jobs[i].groups[m.jobs[i].opts[c].grp].price(sr.lam)*float64(m.jobs[i].opts[c].g))
		} else if c == -1 {
			fixedRC += sr.h[i]
		}
	}
	// branch on the most ambiguous jobs first
	order := make([]int, len(core))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return core[order[a]].second < core[order[b]].second })
	sr.core = make([]int, len(core))
	sr.cands = make([][]cand, len(core))
	for k, o := range order {
		sr.core[k] = core[o].i
		sr.cands[k] = candsOf[o]
	}
	sr.cur = make([]int, n)
	for i, c := range sr.fixed {
		sr.cur[i] = c
	}
	sr.dfs(0, math.Max(fixedRC, 0))
	if !sr.stop {
		sr.proved = true
	}
}

// dfs explores core position d with accumulated reduced cost R.
func (sr *search) dfs(d int, R float64) {
	sr.nodes++
	if sr.nodes%ctxCheckEvery == 0 && sr.ctx.Err() != nil {
		sr.stop = true
	}
	if sr.set.MaxNodes > 0 && sr.nodes >= sr.set.MaxNodes {
		sr.stop = true
	}
	if sr.stop {
		sr.open = math.Max(sr.open, sr.root-R)
		return
	}
	if d == len(sr.core) {
		sr.offer(sr.cur)
		return
	}
	i := sr.core[d]
	j := &sr.m.jobs[i]
	for ci, c := range sr.cands[d] {
		if R+c.rc >= sr.root-sr.bestP-sr.step {
			break
		}
		if sr.stop {
			sr.open = math.Max(sr.open, sr.root-R-sr.cands[d][ci].rc)
			break
		}
		if c.o >= 0 {
			if !sr.fits(j, c.o) {
				continue
			}
			sr.apply(j, c.o, 1)
		}
		sr.cur[i] = c.o
		sr.dfs(d+1, R+c.rc)
		if c.o >= 0 {
			sr.apply(j, c.o, -1)
		}
		sr.cur[i] = -2
	}
}

// greedy builds a feasible choice: options in increasing reduced cost at the
// root multipliers (ties: larger profit, then job order), then a pass that
// upgrades any job whose better option fits.
func (sr *search) greedy() []int {
	m := sr.m
	type pair struct {
		i, o int
		rc   float64
		p    float64
	}
	var ps []pair
	for i := range m.jobs {
		j := &m.jobs[i]
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := sr.h[i] - (o.p - j.groups[o.grp].price(sr.lam)*float64(o.g))
			ps = append(ps, pair{i, oi, rc, o.p})
		}
	}
	sort.SliceStable(ps, func(a, b int) bool {
		if ps[a].rc != ps[b].rc {
			return ps[a].rc < ps[b].rc
		}
		return ps[a].p > ps[b].p
	})
	choice := make([]int, len(m.jobs))
	for i := range choice {
		choice[i] = -1
	}
	use := make([]int, m.nrows)
	fit := func(i, oi, sign int) bool {
		j := &m.jobs[i]
		o := &j.opts[oi]
		for _, r := range j.groups[o.grp].rows {
			if use[r]+sign*o.g > m.cap[r] {
				return false
			}
		}
		return true
	}
	add := func(i, oi, sign int) {
		j := &m.jobs[i]
		o := &j.opts[oi]
		for _, r := range j.groups[o.grp].rows {
			use[r] += sign * o.g
		}
	}
	for _, q := range ps {
		if choice[q.i] < 0 && fit(q.i, q.o, 1) {
			choice[q.i] = q.o
			add(q.i, q.o, 1)
		}
	}
	// 1-opt improvement: move a job to a better-profit option that fits
	for pass := 0; pass < 3; pass++ {
		changed := false
		for i := range m.jobs {
			j := &m.jobs[i]
			c := choice[i]
			if c >= 0 {
				add(i, c, -1)
			}
			bo, bp := c, 0.0
			if c >= 0 {
				bp = j.opts[c].p
			}
			for oi := range j.opts {
				if j.opts[oi].p > bp+sr.eqTol && fit(i, oi, 1) {
					bo, bp = oi, j.opts[oi].p
				}
			}
			if bo >= 0 {
				add(i, bo, 1)
			}
			if bo != c {
				choice[i] = bo
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return choice
}

// warmStart maps Settings.WarmStart to a model choice, or nil when it does
// not fit the problem (wrong length, pins not held, out of range). Options
// that are useless in the model (not better than staying unallocated) map to
// none; dominated options map to none too, which only frees capacity.
func (sr *search) warmStart() []int {
	ws := sr.set.WarmStart
	p := sr.m.p
	if len(ws) != len(p.Jobs) || p.Check(ws) != nil {
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
		for oi := range j.opts {
			if j.opts[oi].k == k {
				choice[i] = oi
			}
		}
		if choice[i] < 0 {
			// dominated: take the dominating option of the same type if it fits later
			o := p.Jobs[j.orig].Options[k]
			bo := -1
			for oi := range j.opts {
				if p.Jobs[j.orig].Options[j.opts[oi].k].Type == o.Type && j.opts[oi].g <= o.GPUs {
					bo = oi
				}
			}
			choice[i] = bo
		}
	}
	return choice
}

func (sr *search) solution() Solution {
	m := sr.m
	assign := append([]int(nil), m.pins...)
	for i := range m.jobs {
		if c := sr.best[i]; c >= 0 {
			assign[m.jobs[i].orig] = m.jobs[i].opts[c].k
		}
	}
	obj := m.p.Objective(assign)
	sol := Solution{Status: Feasible, Assignment: assign, Objective: obj, Nodes: sr.nodes}
	if sr.proved {
		sol.Status = Optimal
		sol.Bound = obj
		return sol
	}
	ub := math.Max(sr.open, sr.bestP)
	ub = math.Min(ub, sr.root)
	// constant part: objective − sign·profit of the incumbent
	c := obj - m.sign*sr.bestP
	sol.Bound = c + m.sign*ub
	return sol
}
