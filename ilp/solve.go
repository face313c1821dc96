package ilp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
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
	// Unsolved: Solve returned an error for invalid input; there is no
	// assignment, and Objective and Bound are NaN.
	Unsolved
)

// String returns "optimal", "feasible", "infeasible" or "unsolved".
func (s Status) String() string {
	switch s {
	case Optimal:
		return "optimal"
	case Feasible:
		return "feasible"
	case Infeasible:
		return "infeasible"
	case Unsolved:
		return "unsolved"
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
	// equals Objective when Status is Optimal, unless Settings.Tolerance is
	// set: the optimum is then proven only within Tolerance, and Bound (the
	// proven one) is within Tolerance of Objective (within the objective's
	// resolution when Tolerance is below it; see Settings.Tolerance).
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
	// accepted as optimal when Problem.Grid is 0 (Solution.Bound then stays
	// the proven bound, within Tolerance of Objective). Default (0): 1e-9
	// times max(1, the largest |Value| or |Unallocated|). A Tolerance below
	// the objective's float64 resolution, 1e-12 × max(1, the largest |Value|
	// or |Unallocated|) × (number of jobs + 1), acts as that resolution: sums
	// of the values are not exact below it.
	Tolerance float64
	// MaxNodes stops the search after this many branch-and-bound nodes
	// (0 = no limit); the result is then Feasible unless already proven.
	MaxNodes int
	// TimeLimit, when positive, is a deadline TimeLimit after the call,
	// with the same contract as a context deadline (the earlier of the two
	// applies). 0 means none; negative is an error.
	TimeLimit time.Duration
}

// validate checks every field of s.
func (s *Settings) validate() error {
	if math.IsNaN(s.Tolerance) || math.IsInf(s.Tolerance, 0) || s.Tolerance < 0 {
		return invalid("settings.tolerance", "must be a finite non-negative number, got %v", s.Tolerance)
	}
	if s.MaxNodes < 0 {
		return invalid("settings.maxNodes", "must be >= 0, got %d", s.MaxNodes)
	}
	if s.TimeLimit < 0 {
		return invalid("settings.timeLimit", "must be >= 0, got %v", s.TimeLimit)
	}
	return nil
}

// unsolved is the Solution that comes with an input error.
var unsolved = Solution{Status: Unsolved, Objective: math.NaN(), Bound: math.NaN()}

// Solve finds an optimal assignment of p. It is exact: with Status Optimal no
// assignment has a better objective (beyond the grid step or tolerance). It
// never returns an assignment that breaks a constraint and does not modify
// p. Invalid input (including Settings) returns an error wrapping
// ErrInvalidInput; pins that cannot all hold return Status Infeasible and an
// error wrapping ErrInfeasible.
//
// # Deadlines
//
// With a deadline D (the context's, or Settings.TimeLimit, measured from
// the call), Solve returns within Slack(D) = max(2 ms, 10% of D) after D
// (after the call when D has already passed), on any valid input whose
// floor (below) fits in that allowance,
// with the best assignment found, a proven Bound and Status Feasible unless
// it proved optimality before D (it is never Optimal unless proven). Its
// memory is bounded by the input's size, never by capacity × jobs (each
// row's capacity is first lowered to what its jobs could use together, the
// sum of their largest options on it, which changes no answer; the
// knapsack programs' tables are capped, dpMaxCells, before they are built).
//
// Every step looks at the clock at least every ~50 µs of work, validating
// and building the model included, and the work that follows a deadline
// is sized to end within a third of the allowance on the solving thread's
// CPU, or all but 4 ms of it when that is more, at most half of it (the
// rest is left to the process not being scheduled: the contract is judged
// on the wall clock).
// Of that budget, the tail that follows the
// greedy incumbents (the late admission's setup, the assignment and its
// objective: about 100 ns per job, at most half of it) is reserved, and
// the rest, W, is shared in fixed proportions:
//   - validation stops a quarter of W after D. It then checks
//     only what a fallback plan uses (each job's Unallocated and Pin, the
//     pinned options, the warm start's options, quotas and pins), and Solve
//     returns that plan: Settings.WarmStart when it is feasible, else the
//     pins, with an infinite Bound (nothing is known of the options it did
//     not read). Options it did not read are not reported even if invalid:
//     call Validate to check every field.
//   - building the model stops at half of W, less the search's setup
//     that follows it (about 50 ns per job; a job of thousands of
//     options is not started when its build would end later); the jobs
//     it does not hold keep their warm-start option where it fits, and
//     the Bound adds their best profits.
//   - the Lagrangian bound at the root (at least one evaluation of the
//     dual function, interrupted at three quarters of W: the bound is
//     then that of zero multipliers, the sum of the jobs' best profits)
//     ends at three quarters of W, and the greedy incumbent (the warm
//     start with the queued jobs started on the capacity it leaves, at
//     least as good as the warm start and as the greedy completion of the
//     pins) at W.
//   - a search that starts before D stops early enough to build the
//     Solution by D: about 200 ns per job (the objective reads every job's
//     chosen option), at most a quarter of the allowance.
//   - the build's setup (the jobs' quota lists, the per-type quota tables
//     and the pins' row usage) is sized before it starts (about 200 ns
//     per job, 30 per quota list entry, 600 per quota and 3 µs per GPU
//     type): when it would end after the build's end, Solve returns the
//     fallback plan.
//   - values far from 1 (largest |Value| outside [2^-16, 2^32)) are solved
//     as a copy scaled by a power of two; when the time left before D
//     cannot afford the copy (about 40 ns per option), or D has passed,
//     Solve returns the fallback plan above instead.
//
// What every solve reads whatever the deadline (each job's ID,
// Unallocated and Pin, every quota entry, the warm start) is its floor:
// about 60 ns per job past an expired deadline, so that beyond about
// 20,000 jobs, or 10^5 quota entries, the floor alone is more than 2 ms
// and a deadline closer than it is overshot by the floor.
//
// The allowance is work: on a loaded machine the process gets less than a
// core and the wall-clock overshoot grows in proportion (the deadline
// program under examples/ilp-deadline prints the share it got, and the
// solving thread's CPU time past D, which does not depend on the load).
//
// Cancellation (ctx.Done without a deadline) stops the search the same way,
// with the bound of a single dual evaluation if it comes before the root's;
// validation and the model are built in full.
//
// Without a deadline or TimeLimit the search runs until it proves the
// optimum, which on the hardest instances of thousands of jobs can take
// minutes: hosts should always pass one (a round's deadline), or bound the
// search with MaxNodes.
//
// Solve is deterministic when it finishes (Optimal, or stopped by
// MaxNodes): the same input gives the same Solution. A solve stopped by a
// deadline returns what it had found by then, which depends on the
// machine's speed. Under a deadline that is short for the problem the
// root's Lagrangian dual is minimised by smoothed Newton steps (which reach
// its minimum in a fraction of the evaluations); otherwise by the
// cutting-plane method from zero, so a solve that finishes before its
// deadline may return another assignment than the same solve without one,
// equally optimal within the grid step or tolerance.
func Solve(ctx context.Context, p *Problem, s *Settings) (Solution, error) {
	start := now()
	if s == nil {
		s = &Settings{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	clk := newClock(ctx, start, s.TimeLimit)
	if p != nil {
		clk.planLate(len(p.Jobs))
	}
	var cl *clock
	if !clk.deadline.IsZero() {
		cl = clk
	}
	sc, m, err := p.validateBuild(cl, s.WarmStart)
	if err != nil {
		if e := (*InputError)(nil); errors.As(err, &e) && e.Err == ErrInfeasible {
			return Solution{Status: Infeasible, Bound: math.NaN(), Objective: math.NaN()}, err
		}
		return unsolved, err
	}
	if err := s.validate(); err != nil {
		return unsolved, err
	}
	trace("validate")
	if sc.checked < len(p.Jobs) {
		return fallback(p, s.WarmStart, sc, clk)
	}
	orig, k := p, 0
	if e, top := valueExponent(p, sc); e != 0 {
		// The copy is not interruptible: when the time left before the
		// deadline cannot afford it (or the deadline has passed) the
		// answer is the fallback plan. Searched unscaled, values of 2^-40
		// and less under an expired deadline were returned as Optimal
		// with an objective below the optimum (the tolerances are sized
		// for values near 1); copied anyway, 203,000 options took 10-22 ms
		// past a 14-16 ms deadline.
		if cl != nil && !clk.affords(scaleNanos*optionCount(p)) {
			return fallback(p, s.WarmStart, sc, clk)
		}
		if q, qs := scaled(p, s, -e); q != nil {
			p, s, sc, k = q, qs, scaledScan(sc, top, -e), e
			m = nil // the model of the scaled copy
		}
		trace("scale")
	}
	if m == nil {
		if !setupAffordable(cl, p) {
			// (orig: the fallback's objective is the caller's, not the
			// scaled copy's)
			return fallback(orig, s.WarmStart, sc, clk)
		}
		m = buildModel(p, sc, cl)
	}
	m.capToDemand(cl)
	trace("build")
	clk.reserveAssembly(len(p.Jobs))
	clk.beginSearch()
	sr := newSearch(clk, m, s)
	sr.run()
	trace("search")
	sol := sr.solution()
	if k != 0 {
		// back to the caller's values: power-of-two scaling is exact, so
		// the objective summed on p is the scaled one times 2^k
		sol.Objective = orig.Objective(sol.Assignment)
		if sol.Status == Optimal && sol.Bound == p.Objective(sol.Assignment) {
			sol.Bound = sol.Objective
		} else {
			sol.Bound = math.Ldexp(sol.Bound, k)
		}
	}
	trace("solution")
	return sol, nil
}

// Values far from 1 are solved scaled by a power of two into
// [2^minValueExp, 2^maxValueExp): the search's tolerances are sized for
// values of that order (with values of 10^40 and more, or on a grid of
// 10^-13, it called optimal assignments that were not), and scaling by a
// power of two changes no rounding, so the scaled problem has the same
// optima.
const (
	minValueExp = -16
	maxValueExp = 32
)

// valueExponent returns the binary exponent e of the largest |Value| or
// |Unallocated| of p (2^e <= it < 2^(e+1)) when it lies outside
// [2^minValueExp, 2^maxValueExp), else 0 (also when every value is 0), and
// that largest value. The scaled values' largest is then in [1, 2), so that
// the default tolerance, 1e-9 × max(1, the largest), stays 1e-9 of the
// caller's largest value.
func valueExponent(p *Problem, sc scan) (int, float64) {
	top := sc.top // (read by the validation: no pass over the options here)
	if top == 0 || top >= math.Ldexp(1, minValueExp) && top < math.Ldexp(1, maxValueExp) {
		return 0, top
	}
	_, e := math.Frexp(top) // top = f × 2^e, f in [0.5, 1)
	return e - 1, top
}

// scaledScan returns what validating the copy of p that scaled returns for
// k would return, from p's scan sc and p's largest |value| top, without
// reading the options again (on 5,000 jobs a second validation took more
// than the deadline contract allows past a 20 ms deadline): every check of
// validate gives the same answer on values scaled by a power of two that
// neither overflows nor underflows (which scaled refuses), and the sums and
// maxima it keeps are scaled exactly.
func scaledScan(sc scan, top float64, k int) scan {
	// (the copy's options are p's, in the same order, of the same types:
	// their rows are p's)
	q := scan{checked: sc.checked, scale: math.Max(1, math.Ldexp(top, k)), top: math.Ldexp(top, k), dev: math.Ldexp(sc.dev, k), rows: sc.rows}
	q.best = make([]float64, len(sc.best))
	for i, b := range sc.best {
		q.best[i] = math.Ldexp(b, k)
	}
	return q
}

// scaleNanos is about the time scaled takes per option (a copy of every
// option, freshly allocated), in nanoseconds on a loaded machine.
const scaleNanos = 40

// optionCount returns the number of options of p.
func optionCount(p *Problem) int {
	n := 0
	for i := range p.Jobs {
		n += len(p.Jobs[i].Options)
	}
	return n
}

// scaled returns copies of p and s with every value, the grid and the
// tolerance multiplied by 2^k, or nil when that would overflow or lose a
// nonzero value to underflow.
func scaled(p *Problem, s *Settings, k int) (*Problem, *Settings) {
	ok := true
	sc := func(v float64) float64 {
		w := math.Ldexp(v, k)
		if math.IsInf(w, 0) || v != 0 && math.Abs(w) < 0x1p-1022 {
			ok = false
		}
		return w
	}
	q := *p
	q.Grid = sc(p.Grid)
	q.Jobs = make([]Job, len(p.Jobs))
	n := 0
	for i := range p.Jobs {
		n += len(p.Jobs[i].Options)
	}
	opts := make([]Option, 0, n)
	for i, j := range p.Jobs {
		j.Unallocated = sc(j.Unallocated)
		from := len(opts)
		for _, o := range j.Options {
			o.Value = sc(o.Value)
			opts = append(opts, o)
		}
		if j.Options != nil {
			j.Options = opts[from:len(opts):len(opts)]
		}
		q.Jobs[i] = j
	}
	qs := *s
	qs.Tolerance = math.Ldexp(s.Tolerance, k) // underflow to 0: the default
	if !ok {
		return nil, nil
	}
	return &q, &qs
}
