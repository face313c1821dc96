package ilp_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// solveSmall solves with a node limit so that fuzzed problems stay quick.
func solveSmall(p *ilp.Problem) (ilp.Solution, error) {
	return ilp.Solve(context.Background(), p, &ilp.Settings{MaxNodes: 2000})
}

// FuzzSolve builds problems from fuzzed bytes (sizes, values, pins, quotas
// over types and sets of types, reservations, grid steps from 10^-3 to
// 10^3) and checks that Solve never panics and, with or without an expired
// deadline, returns a feasible assignment whose objective matches, finite
// numbers, a bound on the right side, Optimal only with the bound equal to
// the objective, and, for tiny problems, the brute-force optimum. Inputs
// that Validate rejects must be rejected by Solve with Status Unsolved or
// Infeasible, never Optimal.
func FuzzSolve(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(5), false, uint8(0))
	f.Add(uint64(3), uint64(4), uint8(7), true, uint8(0))
	f.Add(uint64(0), uint64(0), uint8(0), false, uint8(0))
	f.Add(uint64(5), uint64(6), uint8(6), true, uint8(3))
	f.Add(uint64(7), uint64(8), uint8(8), true, uint8(200))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, size uint8, grid bool, scale uint8) {
		rng := rand.New(rand.NewPCG(s1, s2))
		p := ilptest.Small(rng, int(size%9), grid)
		// the fuzzer also picks extreme values
		if s1%5 == 0 && len(p.Jobs) > 0 {
			p.Jobs[0].Unallocated = float64(int64(s2%2001) - 1000)
		}
		// and grid steps from 10^-3 to 10^3, values scaled with them
		if grid && scale > 0 {
			f := math.Pow(10, float64(int(scale%7)-2))
			p.Grid *= f
			for i := range p.Jobs {
				p.Jobs[i].Unallocated *= f
				for k := range p.Jobs[i].Options {
					p.Jobs[i].Options[k].Value *= f
				}
			}
		}
		if err := p.Validate(); err != nil {
			sol, serr := solveSmall(p)
			if serr == nil || sol.Status == ilp.Optimal || sol.Assignment != nil {
				t.Fatalf("invalid problem (%v) solved: %v %v", err, sol.Status, serr)
			}
			return
		}
		sol, err := solveSmall(p)
		if err != nil {
			t.Fatalf("%v", err)
		}
		checkSolution(t, p, sol)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		stopped, err := ilp.Solve(ctx, p, nil)
		if err != nil {
			t.Fatalf("expired: %v", err)
		}
		checkSolution(t, p, stopped)
		better := func(a, b float64) bool { // a strictly better than b
			if p.Sense == ilp.Maximize {
				return a > b+1e-7
			}
			return a < b-1e-7
		}
		if len(p.Jobs) <= 7 {
			_, want, ok := ilptest.BruteForce(p)
			if !ok {
				t.Fatal("brute force found nothing")
			}
			tol := 1e-7 * max(1, math.Abs(want))
			for _, s := range []ilp.Solution{sol, stopped} {
				if better(want, s.Bound) {
					t.Fatalf("bound %v excludes the optimum %v", s.Bound, want)
				}
				if s.Status == ilp.Optimal && math.Abs(want-s.Objective) > tol {
					t.Fatalf("optimal %v but brute force %v", s.Objective, want)
				}
			}
		}
	})
}

// checkSolution checks the invariants every Solution of a valid problem
// has: a feasible assignment with the objective it reports, finite numbers,
// the bound on the right side of the objective, and Optimal only with the
// bound equal to the objective.
func checkSolution(t *testing.T, p *ilp.Problem, sol ilp.Solution) {
	t.Helper()
	if err := p.Check(sol.Assignment); err != nil {
		t.Fatalf("infeasible result: %v", err)
	}
	if math.Abs(sol.Objective-p.Objective(sol.Assignment)) > 1e-9*max(1, math.Abs(sol.Objective)) {
		t.Fatalf("objective %v vs %v", sol.Objective, p.Objective(sol.Assignment))
	}
	for _, v := range []float64{sol.Objective, sol.Bound} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite objective %v or bound %v", sol.Objective, sol.Bound)
		}
	}
	if sol.Status != ilp.Optimal && sol.Status != ilp.Feasible {
		t.Fatalf("status %v for a valid problem", sol.Status)
	}
	if sol.Status == ilp.Optimal && sol.Bound != sol.Objective {
		t.Fatalf("optimal with bound %v != objective %v", sol.Bound, sol.Objective)
	}
	slack := 1e-7 * max(1, math.Abs(sol.Objective))
	if p.Sense == ilp.Maximize && sol.Objective > sol.Bound+slack || p.Sense == ilp.Minimize && sol.Objective < sol.Bound-slack {
		t.Fatalf("objective %v beyond bound %v", sol.Objective, sol.Bound)
	}
}
