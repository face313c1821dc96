package ilp_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
)

// FuzzSolveTwin draws a problem of one of TestProbe7DPTwin's shapes from
// fuzzed seeds and checks Solve against the exact twin, with and without a
// warm start, on the real clock and on a stepped clock that cuts the solve
// at a fuzzed point: a feasible answer with its own objective, a true
// bound, Optimal only at the optimum (within the grid step or the default
// tolerance), never worse than a feasible warm start; pins that cannot
// hold are ErrInfeasible. Each real-clock solve has a 300 ms deadline:
// with counts that are multiples of 1,000,003 (capacities of millions) a
// 14-job problem takes about a second to prove (the knapsack tables are
// as large as the capacities, see BenchmarkProbeCapacityCliff), which the
// fuzzer takes for a hang.
func FuzzSolveTwin(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(0), uint16(0))
	f.Add(uint64(3), uint64(4), uint8(5), uint16(400))
	f.Add(uint64(5), uint64(6), uint8(7), uint16(3000))
	f.Add(uint64(7), uint64(8), uint8(8), uint16(150))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, shape uint8, stepMicros uint16) {
		rng := rand.New(rand.NewPCG(s1, s2))
		p, unit, desc := shape7(rng, int(shape%9))
		want, wantObj, ok, tooBig := dpTwin(p, unit)
		if tooBig {
			return
		}
		if !ok {
			if _, err := ilp.Solve(context.Background(), p, nil); err == nil {
				t.Fatalf("%s: pins that cannot hold solved", desc)
			}
			return
		}
		scale, noise, better := twinCompare7(p)
		warm := dropSome7(p, want, rng, 2)
		step := time.Duration(stepMicros) * time.Microsecond
		for _, s := range []*ilp.Settings{nil, {WarmStart: warm}, {MaxNodes: 3}} {
			var sols []ilp.Solution
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			sol, err := ilp.Solve(ctx, p, s)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", desc, err)
			}
			sols = append(sols, sol)
			if step > 0 {
				cut, _, err := ilp.SteppedSolve(p, time.Duration(s1%3000)*time.Microsecond, step, s)
				if err != nil {
					t.Fatalf("%s: stepped: %v", desc, err)
				}
				sols = append(sols, cut)
			}
			for _, sol := range sols {
				if err := p.Check(sol.Assignment); err != nil {
					t.Fatalf("%s: %v", desc, err)
				}
				if sol.Objective != p.Objective(sol.Assignment) || math.IsNaN(sol.Bound) {
					t.Fatalf("%s: objective %v of %v, bound %v", desc, sol.Objective, p.Objective(sol.Assignment), sol.Bound)
				}
				if better(wantObj, sol.Bound, noise+1e-9*scale) {
					t.Fatalf("%s: %v bound %v excludes the optimum %v", desc, sol.Status, sol.Bound, wantObj)
				}
				if sol.Status == ilp.Optimal {
					allow := 1e-9 * scale
					if p.Grid > 0 {
						allow = p.Grid * (1 - 1e-9)
					}
					if better(wantObj, sol.Objective, allow+noise) {
						t.Fatalf("%s: optimal %v, twin %v", desc, sol.Objective, wantObj)
					}
				}
				if s != nil && s.WarmStart != nil && better(p.Objective(warm), sol.Objective, noise) {
					t.Fatalf("%s: %v objective %v worse than the warm start's %v", desc, sol.Status, sol.Objective, p.Objective(warm))
				}
			}
		}
	})
}
