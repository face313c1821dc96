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

// FuzzSolve builds problems from fuzzed bytes (sizes, values, pins, quotas,
// reservations) and checks that Solve never panics, returns a feasible
// assignment whose objective matches, a bound on the right side, and, for
// tiny problems, the brute-force optimum.
func FuzzSolve(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(5), false)
	f.Add(uint64(3), uint64(4), uint8(7), true)
	f.Add(uint64(0), uint64(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, s1, s2 uint64, size uint8, grid bool) {
		rng := rand.New(rand.NewPCG(s1, s2))
		p := ilptest.Small(rng, int(size%9), grid)
		// the fuzzer also picks extreme values
		if s1%5 == 0 && len(p.Jobs) > 0 {
			p.Jobs[0].Unallocated = float64(int64(s2%2001) - 1000)
		}
		sol, err := solveSmall(p)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if err := p.Check(sol.Assignment); err != nil {
			t.Fatalf("infeasible result: %v", err)
		}
		if math.Abs(sol.Objective-p.Objective(sol.Assignment)) > 1e-9 {
			t.Fatalf("objective %v vs %v", sol.Objective, p.Objective(sol.Assignment))
		}
		better := func(a, b float64) bool { // a strictly better than b
			if p.Sense == ilp.Maximize {
				return a > b+1e-7
			}
			return a < b-1e-7
		}
		if better(sol.Objective, sol.Bound) {
			t.Fatalf("objective %v beyond bound %v", sol.Objective, sol.Bound)
		}
		if len(p.Jobs) <= 7 {
			_, want, ok := ilptest.BruteForce(p)
			if !ok {
				t.Fatal("brute force found nothing")
			}
			if better(want, sol.Bound) {
				t.Fatalf("bound %v excludes the optimum %v", sol.Bound, want)
			}
			if sol.Status == ilp.Optimal && math.Abs(want-sol.Objective) > 1e-7 {
				t.Fatalf("optimal %v but brute force %v", sol.Objective, want)
			}
		}
	})
}
