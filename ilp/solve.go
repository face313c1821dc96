package ilp

import (
	"context"
	"fmt"
	"math"
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
