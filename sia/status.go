package sia

import (
	"fmt"

	"github.com/sia-sched/sia/ilp"
)

// Status says how good a round's allocation is. The zero value is
// StatusUnknown, so a Plan or Event that no solver filled in (an error
// return, the matrix stage) never reads "optimal".
type Status int

const (
	// StatusUnknown: no allocation was solved (an error, or a step before
	// the solver).
	StatusUnknown Status = iota
	// StatusOptimal: the allocation is proven optimal for the full goodput
	// matrix (within its grid or the solver's tolerance), with each
	// configuration charged configset.Set.Charge; or, for a plan the fill
	// step changed, optimal among every placeable plan (see Plan.Status).
	StatusOptimal
	// StatusFeasible: the allocation keeps every constraint but is not
	// proven optimal (the deadline or node limit stopped the solver, the
	// matrix was partial, placement changed the solver's allocation, the
	// fill step started jobs beyond it, or the round enumerated only some
	// of the configurations spanning nodes of several sizes); Plan.Bound
	// says how far from optimal it can be.
	StatusFeasible
	// StatusInfeasible: the pinned jobs do not fit together; there is no
	// allocation (the error is an *InfeasibleError).
	StatusInfeasible
)

// String returns "unknown", "optimal", "feasible" or "infeasible".
func (s Status) String() string {
	switch s {
	case StatusUnknown:
		return "unknown"
	case StatusOptimal:
		return "optimal"
	case StatusFeasible:
		return "feasible"
	case StatusInfeasible:
		return "infeasible"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Optimal reports whether the allocation is proven optimal.
func (s Status) Optimal() bool { return s == StatusOptimal }

// statusOf converts the solver's status.
func statusOf(s ilp.Status) Status {
	switch s {
	case ilp.Optimal:
		return StatusOptimal
	case ilp.Feasible:
		return StatusFeasible
	case ilp.Infeasible:
		return StatusInfeasible
	}
	return StatusUnknown
}
