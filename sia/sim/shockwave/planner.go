package shockwave

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ErrInfeasible reports that no plan meets the finish-time-fairness
// constraints (the policy then falls back to reweighted utilities).
var ErrInfeasible = errors.New("shockwave: plan infeasible")

// ErrInvalidPlan wraps the errors of a Problem that cannot be planned (a
// field out of range, named in the message).
var ErrInvalidPlan = errors.New("shockwave: invalid problem")

// Breakpoints are the progress fractions of the piecewise-linear log utility
// (the Shockwave MILP's SOS2 breakpoints); log 0 is taken as log 1e-6.
var Breakpoints = []float64{0, 0.2, 0.4, 0.6, 0.8, 1}

// Utility returns the piecewise-linear log of a progress fraction x ∈ [0, 1]
// over Breakpoints.
func Utility(x float64) float64 {
	x = math.Min(1, math.Max(0, x))
	for k := 1; k < len(Breakpoints); k++ {
		a, b := Breakpoints[k-1], Breakpoints[k]
		if x <= b || k == len(Breakpoints)-1 {
			ya, yb := math.Log(math.Max(a, 1e-6)), math.Log(math.Max(b, 1e-6))
			return ya + (yb-ya)*(x-a)/(b-a)
		}
	}
	return 0
}

// PlanJob is one job of the planning problem.
type PlanJob struct {
	// GPUs is the job's rigid size (its scale factor).
	GPUs int
	// Cur and Total are the optimizer steps done and in all; IterTime is the
	// predicted seconds per step.
	Cur, Total, IterTime float64
	// Weight multiplies the job's log utility (1 normally; the infeasibility
	// fallback's ratio^λ).
	Weight float64
	// MaxRemaining bounds the job's unplanned remaining time rem_j (its
	// finish-time-fairness constraint, solved for rem_j); +Inf = none.
	MaxRemaining float64
}

// Remaining returns the job's predicted remaining time in seconds.
func (j PlanJob) Remaining() float64 { return math.Max(0, j.Total-j.Cur) * j.IterTime }

// Problem is Shockwave's look-ahead plan over R future rounds: binary
// s[j,r] with Σ_j GPUs_j·s[j,r] ≤ GPUs for every round r, planned progress
// p_j with p_j·IterTime_j ≤ Round·Σ_r s[j,r] and Cur_j + p_j ≤ Total_j,
// rem_j = max(0, Remaining_j − Round·Σ_r s[j,r]) ≤ MaxRemaining_j, and the
// objective
//
//	maximise (1/(J·R)) Σ_j Weight_j·Utility((Cur_j + p_j)/Total_j) − K·max_j rem_j.
type Problem struct {
	Jobs   []PlanJob
	Rounds int
	GPUs   int
	// Round is the round length in seconds; K the weight of the makespan term.
	Round, K float64
}

// Validate checks the problem's fields.
func (p *Problem) Validate() error {
	bad := func(f string, a ...any) error { return fmt.Errorf("%w: %s", ErrInvalidPlan, fmt.Sprintf(f, a...)) }
	switch {
	case p.Rounds < 1 || p.Rounds > 16:
		return bad("Rounds %d, want 1..16", p.Rounds)
	case p.GPUs < 0:
		return bad("GPUs %d, want ≥ 0", p.GPUs)
	case !(p.Round > 0) || math.IsInf(p.Round, 0):
		return bad("Round %v, want a positive number of seconds", p.Round)
	case !(p.K >= 0) || math.IsInf(p.K, 0):
		return bad("K %v, want ≥ 0", p.K)
	}
	for i, j := range p.Jobs {
		switch {
		case j.GPUs < 1:
			return bad("job %d: GPUs %d, want ≥ 1", i, j.GPUs)
		case !(j.Total > 0) || math.IsInf(j.Total, 0):
			return bad("job %d: Total %v, want > 0", i, j.Total)
		case !(j.Cur >= 0) || j.Cur > j.Total:
			return bad("job %d: Cur %v, want 0..Total", i, j.Cur)
		case !(j.IterTime > 0) || math.IsInf(j.IterTime, 0):
			return bad("job %d: IterTime %v, want > 0", i, j.IterTime)
		case !(j.Weight >= 0) || math.IsInf(j.Weight, 0):
			return bad("job %d: Weight %v, want ≥ 0", i, j.Weight)
		case math.IsNaN(j.MaxRemaining):
			return bad("job %d: MaxRemaining is NaN", i)
		}
	}
	return nil
}

// value returns job j's objective share with n planned rounds.
func (p *Problem) value(j PlanJob, n int) float64 {
	prog := math.Min(p.Round*float64(n)/j.IterTime, j.Total-j.Cur)
	return j.Weight * Utility((j.Cur+prog)/j.Total) / float64(len(p.Jobs)*p.Rounds)
}

// rem returns job j's unplanned remaining time with n planned rounds.
func (p *Problem) rem(j PlanJob, n int) float64 {
	return math.Max(0, j.Remaining()-p.Round*float64(n))
}

// Objective evaluates a schedule s[j][r] of the MILP: its objective and
// whether it meets every constraint.
func (p *Problem) Objective(s [][]bool) (float64, bool) {
	if len(s) != len(p.Jobs) {
		return math.Inf(-1), false
	}
	load := make([]int, p.Rounds)
	n := make([]int, len(p.Jobs))
	for j, row := range s {
		if len(row) != p.Rounds {
			return math.Inf(-1), false
		}
		for r, on := range row {
			if on {
				n[j]++
				load[r] += p.Jobs[j].GPUs
			}
		}
	}
	for _, l := range load {
		if l > p.GPUs {
			return math.Inf(-1), false
		}
	}
	return p.objectiveN(n)
}

// objectiveN evaluates planned round counts (capacity aside).
func (p *Problem) objectiveN(n []int) (float64, bool) {
	v, worst := 0.0, 0.0
	ok := true
	for j, job := range p.Jobs {
		v += p.value(job, n[j])
		r := p.rem(job, n[j])
		worst = math.Max(worst, r)
		if r > job.MaxRemaining {
			ok = false
		}
	}
	return v - p.K*worst, ok
}

// PlanOptions tune Plan. A nil *PlanOptions gives the defaults.
type PlanOptions struct {
	// Gap is the relative optimality gap at which the search stops
	// (default 1e-3, the MIP gap of the published Shockwave settings; a
	// negative value means 0, an exact solve).
	Gap float64
	// NodeLimit bounds the branch-and-bound nodes (default 200,000); the
	// best plan found is returned with Optimal false when it is reached.
	NodeLimit int
}

// Plan is a solution of a Problem.
type Plan struct {
	// N is the number of planned rounds of every job; Schedule[r] lists the
	// jobs planned in round r (ascending).
	N        []int
	Schedule [][]int
	// Objective is the plan's objective; Bound an upper bound on the
	// optimum (Bound − Objective ≤ Gap·|Objective| when Optimal).
	Objective, Bound float64
	Optimal          bool
	// Nodes counts the branch-and-bound nodes.
	Nodes int
}

// Solve plans a problem. The MILP's objective and constraints depend on
// s[j,r] only through n_j = Σ_r s[j,r] (the rounds are interchangeable),
// and the piecewise-linear log is concave, so its SOS2 encoding is exact in
// the LP relaxation; Solve therefore branches on n_j (depth first, larger
// jobs first, larger n first), bounds every node by the fractional concave
// knapsack over the total GPU-rounds R·GPUs and the makespan term of the
// remaining jobs at their largest n, and accepts a leaf only after an exact
// search finds rounds for it (GPUs per round). Errors: ErrInvalidPlan,
// ErrInfeasible (the finish-time-fairness bounds cannot all hold), or ctx's.
func Solve(ctx context.Context, p *Problem, opt *PlanOptions) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	gap, limit := opt.limits()
	J, R := len(p.Jobs), p.Rounds
	if J == 0 {
		return &Plan{Schedule: make([][]int, R), Optimal: true}, nil
	}
	lo, hi := make([]int, J), make([]int, J)
	for j, job := range p.Jobs {
		rem := job.Remaining()
		if job.GPUs <= p.GPUs {
			hi[j] = min(R, int(math.Ceil(rem/p.Round-1e-9)))
		}
		if job.MaxRemaining < rem {
			if job.MaxRemaining < 0 {
				return nil, fmt.Errorf("%w: job %d cannot meet its fairness bound", ErrInfeasible, j)
			}
			lo[j] = int(math.Ceil((rem-job.MaxRemaining)/p.Round - 1e-9))
		}
		if lo[j] > hi[j] {
			return nil, fmt.Errorf("%w: job %d needs %d of %d rounds", ErrInfeasible, j, lo[j], R)
		}
		hi[j] = max(hi[j], lo[j])
	}
	pk := newPacker(p, R)
	if !pk.feasible(lo) {
		return nil, fmt.Errorf("%w: the fairness bounds need more GPUs than the plan has", ErrInfeasible)
	}
	s := &search{p: p, lo: lo, hi: hi, gap: gap, limit: limit, pk: pk, ctx: ctx}
	if err := s.run(); err != nil {
		return nil, err
	}
	plan := &Plan{N: s.best, Objective: s.bestVal, Nodes: s.nodes, Optimal: !s.stopped}
	// Every pruned node was within the gap of the incumbent; a stopped
	// search only knows the root bound.
	plan.Bound = s.bestVal + gap*math.Abs(s.bestVal)
	if !plan.Optimal {
		plan.Bound = math.Max(s.bestVal, s.rootBound)
	}
	plan.Schedule = pk.pack(plan.N)
	if plan.Schedule == nil {
		// Every accepted plan was packed by the same search.
		return nil, fmt.Errorf("shockwave: internal error: accepted plan %v has no rounds", plan.N)
	}
	return plan, nil
}

type incr struct {
	job   int
	ratio float64 // Δ / GPUs
	delta float64
}

// search is the branch and bound over n_j.
type search struct {
	p       *Problem
	ctx     context.Context
	lo, hi  []int
	gap     float64
	limit   int
	pk      *packer
	order   []int // DFS order of jobs
	pos     []int // position of a job in order
	incs    []incr
	sufRem  []float64 // max rem at hi over order[i:]
	n       []int
	nodes   int
	stopped bool

	best      []int
	bestVal   float64
	rootBound float64
}

func (s *search) run() error {
	p, J := s.p, len(s.p.Jobs)
	s.order = make([]int, J)
	for i := range s.order {
		s.order[i] = i
	}
	sort.SliceStable(s.order, func(a, b int) bool { return p.Jobs[s.order[a]].GPUs > p.Jobs[s.order[b]].GPUs })
	s.pos = make([]int, J)
	for i, j := range s.order {
		s.pos[j] = i
	}
	for j, job := range p.Jobs {
		for n := s.lo[j] + 1; n <= s.hi[j]; n++ {
			d := p.value(job, n) - p.value(job, n-1)
			s.incs = append(s.incs, incr{j, d / float64(job.GPUs), d})
		}
	}
	sort.SliceStable(s.incs, func(a, b int) bool { return s.incs[a].ratio > s.incs[b].ratio })
	s.sufRem = make([]float64, J+1)
	for i := J - 1; i >= 0; i-- {
		j := s.order[i]
		s.sufRem[i] = math.Max(s.sufRem[i+1], p.rem(p.Jobs[j], s.hi[j]))
	}
	// Incumbent: the lower bounds, then increments in ratio order as long
	// as the greedy packing still finds rounds (the lower bounds fit: Solve
	// checked them exactly).
	s.best = slices.Clone(s.lo)
	for _, in := range s.incs {
		s.best[in.job]++
		if !s.pk.greedy(s.best, make([]int, s.pk.R), nil) {
			s.best[in.job]--
		}
	}
	s.bestVal, _ = p.objectiveN(s.best)
	s.n = slices.Clone(s.lo)
	used := 0
	for j, job := range p.Jobs {
		used += job.GPUs * s.lo[j]
	}
	s.rootBound = s.bound(0, 0, used, 0)
	return s.dfs(0, 0, used, 0)
}

// bound is the upper bound at depth d: the fixed jobs' value fixed, the
// others' at lo plus the fractional knapsack of their increments.
func (s *search) bound(d int, fixedVal float64, used int, fixedRem float64) float64 {
	p := s.p
	v := fixedVal
	for i := d; i < len(s.order); i++ {
		j := s.order[i]
		v += p.value(p.Jobs[j], s.lo[j])
	}
	cap := float64(p.GPUs*p.Rounds - used)
	for _, in := range s.incs {
		if s.pos[in.job] < d || cap <= 0 {
			continue
		}
		g := float64(p.Jobs[in.job].GPUs)
		if g <= cap {
			v += in.delta
			cap -= g
		} else {
			v += in.delta * cap / g
			cap = 0
		}
	}
	return v - p.K*math.Max(fixedRem, s.sufRem[d])
}

func (s *search) prune(b float64) bool {
	return b <= s.bestVal+s.gap*math.Abs(s.bestVal)+1e-15
}

// dfs fixes n of order[d]; used counts the GPU-rounds of the fixed jobs
// and the lower bounds of the others.
func (s *search) dfs(d int, fixedVal float64, used int, fixedRem float64) error {
	s.nodes++
	if s.nodes%1024 == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if s.nodes > s.limit {
		s.stopped = true
		return nil
	}
	p := s.p
	if d == len(s.order) {
		v := fixedVal - p.K*fixedRem
		if v > s.bestVal+1e-15 && s.pk.feasible(s.n) {
			s.best, s.bestVal = slices.Clone(s.n), v
		}
		return nil
	}
	if s.prune(s.bound(d, fixedVal, used, fixedRem)) {
		return nil
	}
	j := s.order[d]
	job := p.Jobs[j]
	for n := s.hi[j]; n >= s.lo[j]; n-- {
		extra := job.GPUs * (n - s.lo[j])
		if used+extra > p.GPUs*p.Rounds {
			continue
		}
		s.n[j] = n
		if err := s.dfs(d+1, fixedVal+p.value(job, n), used+extra, math.Max(fixedRem, p.rem(job, n))); err != nil {
			return err
		}
		if s.stopped {
			break
		}
	}
	s.n[j] = s.lo[j]
	return nil
}

// packer decides exactly whether planned round counts fit the rounds:
// every job in n_j distinct rounds, at most GPUs per round. Rounds with the
// same load are interchangeable for the jobs still to place, so a job
// chooses how many rounds of each load it takes, and failed states (job,
// loads) are remembered.
type packer struct {
	p       *Problem
	R       int
	failed  map[string]bool
	budget  int
	order   []int // jobs in descending size
	scratch []int
	idx     []int
	// record, when set, receives the rounds of every job of a successful
	// place (tmp is greedy's scratch for it).
	record, tmp [][]int
}

func newPacker(p *Problem, R int) *packer { return &packer{p: p, R: R} }

// pack returns rounds realising n in empty rounds (ascending jobs per
// round), or nil when place finds none.
func (k *packer) pack(n []int) [][]int {
	k.record = make([][]int, len(n))
	defer func() { k.record, k.tmp = nil, nil }()
	if k.place(n, make([]int, k.R), nil, nil) == nil {
		return nil
	}
	out := make([][]int, k.R)
	for j, rs := range k.record {
		for _, r := range rs {
			out[r] = append(out[r], j)
		}
	}
	return out
}

// feasible reports whether n fits in empty rounds.
func (k *packer) feasible(n []int) bool {
	return k.place(n, make([]int, k.R), nil, nil) != nil
}

// schedule returns the rounds of a feasible n: round by round, jobs in
// priority order (prio nil = job order) join the round when the others
// still fit in the rounds left, so higher-priority jobs run earlier (the
// re-ranking of the plan's rounds). Only the first upto rounds are
// decided (upto ≤ 0: all); the others are left empty, and the counts left
// for them are known to fit.
func (k *packer) schedule(n []int, prio []float64, upto int) [][]int {
	J := len(n)
	out := make([][]int, k.R)
	idx := make([]int, J)
	for i := range idx {
		idx[i] = i
	}
	if prio != nil {
		sort.SliceStable(idx, func(a, b int) bool { return prio[idx[a]] > prio[idx[b]] })
	}
	need := slices.Clone(n)
	if upto <= 0 || upto > k.R {
		upto = k.R
	}
	for r := 0; r < upto; r++ {
		load := make([]int, k.R-r)
		in := make([]bool, J)
		for _, j := range idx {
			g := k.p.Jobs[j].GPUs
			if need[j] == 0 || load[0]+g > k.p.GPUs {
				continue
			}
			need[j]--
			load[0] += g
			in[j] = true
			if k.place(need, slices.Clone(load), in, nil) == nil {
				need[j]++
				load[0] -= g
				in[j] = false
			}
		}
		for _, j := range idx {
			if in[j] {
				out[r] = append(out[r], j)
			}
		}
		sort.Ints(out[r])
	}
	return out
}

// place finds rounds for need (jobs in descending size) on top of load,
// where jobs with busy0 set may not use round 0 again; it returns the
// loads after placing everything, or nil. The search is exact: it stops
// early only when its budget of states runs out, and then answers nil
// (a plan is never accepted without rounds for it).
func (k *packer) place(need []int, load []int, busy0 []bool, _ []int) []int {
	var jobs []int
	for j, c := range need {
		if c > 0 {
			jobs = append(jobs, j)
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		ga, gb := k.p.Jobs[jobs[a]].GPUs, k.p.Jobs[jobs[b]].GPUs
		if ga != gb {
			return ga > gb
		}
		return need[jobs[a]] > need[jobs[b]]
	})
	if k.greedy(need, load, busy0) {
		return load
	}
	if !k.cuts(need, load, busy0) {
		return nil
	}
	k.failed = map[string]bool{}
	k.budget = packBudget
	if k.rec(jobs, 0, need, load, busy0) {
		return load
	}
	return nil
}

// greedy tries the search's first path without its bookkeeping: jobs in
// descending size, each in its emptiest allowed rounds. On success it
// adds the jobs to load.
func (k *packer) greedy(need, load []int, busy0 []bool) bool {
	if k.order == nil {
		k.order = make([]int, len(k.p.Jobs))
		for i := range k.order {
			k.order[i] = i
		}
		sort.SliceStable(k.order, func(a, b int) bool { return k.p.Jobs[k.order[a]].GPUs > k.p.Jobs[k.order[b]].GPUs })
	}
	l := k.scratch[:0]
	l = append(l, load...)
	k.scratch = l
	idx := k.idx[:0]
	for r := range l {
		idx = append(idx, r)
	}
	k.idx = idx
	G := k.p.GPUs
	if k.record != nil {
		k.tmp = make([][]int, len(need))
	}
	for _, j := range k.order {
		c := need[j]
		if c == 0 {
			continue
		}
		g := k.p.Jobs[j].GPUs
		// Insertion sort of the rounds by load (stable, R ≤ 16).
		for a := 1; a < len(idx); a++ {
			for b := a; b > 0 && l[idx[b]] < l[idx[b-1]]; b-- {
				idx[b], idx[b-1] = idx[b-1], idx[b]
			}
		}
		for _, r := range idx {
			if c == 0 {
				break
			}
			if (r == 0 && busy0 != nil && busy0[j]) || l[r]+g > G {
				continue
			}
			l[r] += g
			c--
			if k.record != nil {
				k.tmp[j] = append(k.tmp[j], r)
			}
		}
		if c > 0 {
			return false
		}
	}
	copy(load, l)
	if k.record != nil {
		copy(k.record, k.tmp)
	}
	return true
}

// packBudget bounds the states of one packing search; a search that runs
// out answers "does not fit", so plans stay feasible.
const packBudget = 500

// cuts checks necessary conditions of a packing in the rounds after round 0
// (empty in every use): in any k of those W rounds, job j takes at least
// need_j − (W − k) of them (one fewer when it may still use round 0), so
// Σ_j GPUs_j·max(0, need_j − W + k) ≤ k·GPUs; and jobs larger than half the
// GPUs never share a round.
func (k *packer) cuts(need, load []int, busy0 []bool) bool {
	W := len(load) - 1
	if busy0 == nil {
		W = len(load)
		for _, l := range load {
			if l != 0 {
				return true // no cut for partly filled rounds
			}
		}
	}
	if W == 0 {
		return true
	}
	G := k.p.GPUs
	for kk := 1; kk <= W; kk++ {
		sum, big := 0, 0
		for j, c := range need {
			if busy0 != nil && !busy0[j] {
				c-- // may take round 0 instead
			}
			m := c - (W - kk)
			if m <= 0 {
				continue
			}
			g := k.p.Jobs[j].GPUs
			sum += g * m
			if 2*g > G {
				big += m
			}
		}
		if sum > kk*G || big > kk {
			return false
		}
	}
	return true
}

func (k *packer) key(d int, load []int) string {
	rest := slices.Clone(load[1:])
	sort.Ints(rest)
	var b strings.Builder
	b.WriteString(strconv.Itoa(d))
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(load[0]))
	for _, l := range rest {
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(l))
	}
	return b.String()
}

func (k *packer) rec(jobs []int, d int, need, load []int, busy0 []bool) bool {
	if d == len(jobs) {
		return true
	}
	k.budget--
	if k.budget < 0 {
		return false
	}
	key := k.key(d, load)
	if k.failed[key] {
		return false
	}
	j := jobs[d]
	g, c := k.p.Jobs[j].GPUs, need[j]
	// Candidate rounds: round 0 (unless busy) and the others grouped by
	// load, emptiest first.
	var classes [][]int
	seen := map[int]int{}
	start := 0
	if busy0 != nil {
		start = 1
		if !busy0[j] && load[0]+g <= k.p.GPUs {
			classes = append(classes, []int{0})
		}
	}
	var rest []int
	for r := start; r < len(load); r++ {
		if load[r]+g <= k.p.GPUs {
			rest = append(rest, r)
		}
	}
	sort.SliceStable(rest, func(a, b int) bool { return load[rest[a]] < load[rest[b]] })
	for _, r := range rest {
		if i, ok := seen[load[r]]; ok {
			classes[i] = append(classes[i], r)
			continue
		}
		seen[load[r]] = len(classes)
		classes = append(classes, []int{r})
	}
	take := make([]int, len(classes))
	var try func(ci, left int) bool
	try = func(ci, left int) bool {
		if left == 0 {
			for i, t := range take {
				for _, r := range classes[i][:t] {
					load[r] += g
				}
			}
			ok := k.rec(jobs, d+1, need, load, busy0)
			if ok && k.record != nil {
				k.record[j] = k.record[j][:0]
				for i, t := range take {
					k.record[j] = append(k.record[j], classes[i][:t]...)
				}
			}
			if !ok {
				for i, t := range take {
					for _, r := range classes[i][:t] {
						load[r] -= g
					}
				}
			}
			return ok
		}
		if ci == len(classes) {
			return false
		}
		for t := min(left, len(classes[ci])); t >= 0; t-- {
			take[ci] = t
			if try(ci+1, left-t) {
				return true
			}
			if k.budget < 0 {
				break
			}
		}
		take[ci] = 0
		return false
	}
	if try(0, c) {
		return true
	}
	if k.budget >= 0 {
		k.failed[key] = true
	}
	return false
}

// limits returns the relative MIP gap and the node limit of Solve and Rank:
// the published settings (gap 1e-3) and 200,000 nodes unless opt sets them
// (a negative Gap solves exactly).
func (opt *PlanOptions) limits() (gap float64, nodes int) {
	gap, nodes = 1e-3, 200000
	if opt != nil {
		if opt.Gap != 0 {
			gap = math.Max(0, opt.Gap)
		}
		if opt.NodeLimit > 0 {
			nodes = opt.NodeLimit
		}
	}
	return gap, nodes
}
