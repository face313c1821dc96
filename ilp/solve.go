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
// With a deadline D (the context's, or Settings.TimeLimit), Solve returns
// within Slack(D) = max(2 ms, 10% of D) after D, whatever the input, with
// the best assignment found, a proven Bound and Status Feasible unless it
// proved optimality before D (it is never Optimal unless proven). Every
// step whose work grows with the capacity or the number of jobs looks at
// the clock at least every ~50 µs of work, and the knapsack programs'
// tables are capped (dpMaxCells) before they are built, so memory is bounded
// by the input's size and constants, never by capacity × jobs. The
// allowance covers the essential work that follows a deadline that has
// already passed: the Lagrangian bound at the root (its cutting-plane
// iterations run for at most a quarter of the allowance) and a greedy
// incumbent at least as good as the warm start (Settings.WarmStart with the
// queued jobs started greedily on the capacity it leaves) and as the greedy
// completion of the pins. Validating and preprocessing p are linear in its
// size and not interruptible: on the order of 10-20 ms per 100,000 options
// (benchmark the deadline program under ilp/ilptest/deadline), which the
// contract assumes is small next to D.
//
// Cancellation (ctx.Done without a deadline) stops the search the same way,
// with the bound of a single dual evaluation if it comes before the root's.
//
// Without a deadline or TimeLimit the search runs until it proves the
// optimum, which on the hardest instances of thousands of jobs can take
// minutes: hosts should always pass one (a round's deadline), or bound the
// search with MaxNodes.
//
// Solve is deterministic when it finishes (Optimal, or stopped by
// MaxNodes): the same input gives the same Solution. A solve stopped by a
// deadline returns what it had found by then, which depends on the
// machine's speed.
func Solve(ctx context.Context, p *Problem, s *Settings) (Solution, error) {
	start := time.Now()
	if err := p.Validate(); err != nil {
		if e := (*InputError)(nil); errors.As(err, &e) && e.Err == ErrInfeasible {
			return Solution{Status: Infeasible, Bound: math.NaN(), Objective: math.NaN()}, err
		}
		return unsolved, err
	}
	if s == nil {
		s = &Settings{}
	}
	if err := s.validate(); err != nil {
		return unsolved, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	m := newModel(p)
	sr := newSearch(newClock(ctx, start, s.TimeLimit), m, s)
	sr.run()
	return sr.solution(), nil
}
