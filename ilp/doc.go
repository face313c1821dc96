// Package ilp solves Sia's allocation problem exactly: choose at most one option
// per job under per-type GPU capacity (and optional quota rows), with pins,
// reservations, deadlines and warm starts. It knows nothing of goodput, only
// options and values.
//
// # Problem
//
// A Problem lists jobs, each with options (GPU type, GPU count, value) and a
// value for staying unallocated, per-type capacities (minus Reserved), an
// objective sense, optional pins (Job.Pin: the job must take that option) and
// optional Quota rows over groups of jobs. Problem.Validate names the
// offending job, option, type or quota; errors wrap ErrInvalidInput, or
// ErrInfeasible when the pins cannot all hold, and are *InputError values.
//
// # Solver
//
// Solve is pure Go, exact and deterministic. It works in "profit space"
// (each job's gain over staying unallocated) and
//
//   - drops options that cannot help (no gain, too large for a capacity on
//     their own, or dominated by a smaller option of the same type):
//     buildModel;
//   - bounds the optimum with the Lagrangian dual of the coupling rows (one
//     multiplier per GPU type and per quota), minimised by a box-step
//     cutting-plane method whose master is a small dense simplex; with only
//     the job rows left, the dual equals the LP relaxation: model.dual,
//     model.minimizeFn, denseLP, at every node bbNode.bound; under a
//     deadline that is short for the problem, the root's dual is minimised
//     instead by Newton steps on an entropic smoothing of it, whose
//     gradient and Hessian one pass over the jobs sums with the true dual
//     value, the smoothing lowered as it converges, its first steps on
//     a sample of the jobs when they are thousands: model.newtonDual;
//   - tightens it with knapsack dynamic programs that keep one type row exact
//     while pricing the others, including, for every candidate of every
//     job, the bound with that job forced onto it (forward and backward
//     programs joined around the job); one more such row is the aggregate
//     of the type rows (total GPUs), priced at the smallest type multiplier,
//     which sees the parity of the total that no single row does: rowBound,
//     forcedBounds, keptRows and keptRow, at every node bbNode.rowBounds;
//   - settles the root, on almost every instance, with an exact dynamic
//     program over the reduced-cost core: at multipliers λ every assignment
//     has profit L(λ) − D with D = reduced costs + λ·unused capacity, so
//     only D below the gap to the incumbent matters; the program's states
//     are the vectors of row usage of the core jobs, pruned by backward
//     one-row and aggregate-row programs that bound the cost of completing
//     them, and its passes enumerate D from its lower bound (rounded up to
//     the grid) upwards, so the first complete state found is optimal:
//     coreDP (coredp.go), from bbNode.heuristics at the root;
//   - finds incumbents with a greedy by reduced cost (and a linear-time one
//     that also completes the warm start), a greedy that hands each type's
//     capacity out by marginal profit per GPU to the jobs whose Lagrangian
//     choice is on that type, per-type knapsack
//     coordinate descent, and knapsack programs that settle the type rows one
//     at a time in every order, also at slightly perturbed multipliers to
//     break the many ties of rounded values: greedy, quickGreedy,
//     marginalGreedy, improveByType, seqDP and rootHeuristics, from
//     bbNode.bound (the first root's) and bbNode.heuristics; under a
//     deadline that leaves no time for the knapsack programs,
//     marginalGreedy (whose steps are priced by the quota multipliers)
//     is the first incumbent, then again at multipliers polished by the
//     cutting-plane method and at slightly perturbed ones, and exchange
//     moves improve the best: firstGreedies, refineDual, exchange and
//     refineTies;
//   - otherwise (the program's state budget exceeded) branches depth first,
//     re-optimising the multipliers at every node, fixing
//     jobs with a single admissible choice by reduced cost, and branching on
//     the job with the fewest admissible choices: search.node, whose phases
//     are the methods of bbNode (enter, bound, heuristics, fix, rowBounds,
//     choose, branch);
//   - restarts with doubling node budgets, alternating two branching
//     strategies; restarts after the first two perturb the branching order
//     among near-ties with a fixed-seed generator, so the result stays
//     deterministic while the heavy tail of search times shortens:
//     search.run;
//   - when the first pass (1000 nodes) has not proven the optimum, runs
//     once, at the root of the second, two-dimensional knapsack programs
//     that keep two type rows exact (the third priced) over the
//     reduced-cost core: as a heuristic that lets jobs trade places between
//     two types, and as a bound, which proves most of the instances that
//     the one-row bounds leave open: pairHeuristic and pairBounds (pair.go).
//
// When Problem.Grid declares that values lie on a grid (0.01 for Sia's
// rounded values), the search stops as soon as no solution can beat the
// incumbent by a whole step, allowing for the values' floating-point
// deviation from the grid.
//
// # Deadlines and limits
//
// Solve honours its context's deadline (and Settings.TimeLimit) with a
// contract: it returns within Slack(D) = max(2 ms, 10% of D) after the
// deadline, with the incumbent, Status Feasible and a proven Bound (see
// Solve for what the allowance covers, and the clock type for its shares).
// Validating the problem and building the model look at the clock every
// few thousand options; when either is cut short, the solve falls back to
// the pins, the warm start and a greedy admission (fallback, admitLate,
// late.go). Every program whose work grows with
// capacity × jobs looks at the clock every ~50 µs of work and is sized
// before it allocates its tables (at most dpMaxCells entries, and no more
// than the time left can fill), so memory stays bounded by the input and
// small constants whatever the capacity. Even with a deadline that has
// already passed, the result is at least the greedy completion of the pins
// and of Settings.WarmStart: running jobs keep their allocations and queued
// jobs start on the free GPUs. Without a deadline the search runs to
// optimality; Settings.MaxNodes and TimeLimit bound it.
//
// # Numbers
//
// Validate rejects every input whose arithmetic could go wrong: capacities
// whose total exceeds MaxGPUs, values whose sum could overflow
// (MaxValueSum), grids that are not finite and positive or that values do
// not lie on (a test relative to both the step and the value); sums of
// pinned or assigned GPUs saturate instead of wrapping. Solve validates
// Settings the same way. An error comes with Status Unsolved (or
// Infeasible for pins that cannot hold), never Optimal. Values of any
// magnitude within MaxValueSum are solved alike: Solve scales values far
// from 1 by a power of two (exact) before the search, whose tolerances are
// sized for values near 1.
// Settings.WarmStart seeds the incumbent with the previous round's
// assignment.
//
// # Formats
//
// ReadJSON/ParseJSON read, and WriteJSON writes, the JSON format of
// examples/solve:
//
//	{"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},
//	 "jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0}]}
//
// with optional "reserved" (type → GPUs), "grid" (number), "quotas"
// ([{"name","jobs":[ids],"all_jobs","type","types","min_gpus","limit"}],
// see Quota) and the recorded rounds' "name" and "optimum"; any other key,
// a key given twice, a key spelled in another case and a null number are
// errors. WriteLP
// writes CPLEX LP for cbc and glpsol.
//
// # CLP
//
// Built with -tags clp (needs libClp and pkg-config), RelaxCLP solves the LP
// relaxation with COIN-OR CLP through github.com/lanl/clp; the tests use it
// to cross-check the pure-Go bounds.
package ilp
