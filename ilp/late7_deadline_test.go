package ilp_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// This file probes the work Solve does after its deadline in the steps
// that run whatever the clock (the fallback plan, the late admission of the
// jobs a cut model does not hold, the warm start's check, the final
// assembly), on shapes that make each expensive: thousands of quotas over
// every job, quotas with huge member lists, warm starts feasible and not,
// pinned jobs, a job of 10^5 options, 10^4 GPU types. Each is measured on
// the solving thread's CPU clock (TraceSolve), the least of three solves
// held to the contract's allowance, as TestDeadlineContract does.

// everyThird is a warm start of quotaHeavy(n, q) that keeps every third
// job on its 2-GPU option of type b (feasible: 2n/3 GPUs of b against
// limits of 3n/2 and more).
func everyThird(n int) []int {
	warm := make([]int, n)
	for i := range warm {
		warm[i] = -1
		if i%3 == 0 {
			warm[i] = 1
		}
	}
	return warm
}

// allFirst is a warm start of quotaHeavy(n, q) that puts every job on its
// first option: n/4 × 10 GPUs of type a, over the quotas' limits.
func allFirst(n int) []int {
	warm := make([]int, n)
	for i := range warm {
		warm[i] = 0
	}
	return warm
}

// listedHeavy: quotaHeavy's jobs under q quotas that list every job
// (Jobs, not AllJobs: n·q member indices of input).
func listedHeavy(n, q int) *ilp.Problem {
	p := quotaHeavy(n, q)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for k := range p.Quotas {
		p.Quotas[k].AllJobs = false
		p.Quotas[k].Jobs = all
	}
	return p
}

// pinHalf pins every other job of p to its option 1 (2 GPUs of type b) and
// returns p.
func pinHalf(p *ilp.Problem) *ilp.Problem {
	for i := 0; i < len(p.Jobs); i += 2 {
		p.Jobs[i].Pin = 1
	}
	return p
}

// pinsOf returns the assignment of p's pins only.
func pinsOf(p *ilp.Problem) []int {
	a := make([]int, len(p.Jobs))
	for i, j := range p.Jobs {
		a[i] = j.Pin
	}
	return a
}

// wideJobQuotas: one queued job of opts options (types a and b, 1–999
// GPUs) first, then n small jobs, under q quotas over every job.
func wideJobQuotas(opts, n, q int) *ilp.Problem {
	p := quotaHeavy(n, q)
	j := ilp.Job{ID: "wide", Pin: -1}
	for k := range opts {
		j.Options = append(j.Options, ilp.Option{Type: []string{"a", "b"}[k%2], GPUs: 1 + k%999, Value: float64(k%1000)/7 + 1})
	}
	p.Jobs = append([]ilp.Job{j}, p.Jobs...)
	for k := range p.Quotas {
		p.Quotas[k].Limit += 1000
	}
	return p
}

// typeHeavy: n jobs of 4 options each on t GPU types, and q quotas over
// every job, each on a list of 50 types.
func typeHeavy(n, t, q int) *ilp.Problem {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{}}
	for k := range t {
		p.Capacity[fmt.Sprint("t", k)] = 3
	}
	for i := range n {
		j := ilp.Job{ID: fmt.Sprint("j", i), Pin: -1}
		for k := range 4 {
			j.Options = append(j.Options, ilp.Option{Type: fmt.Sprint("t", (i*7+k*1237)%t), GPUs: 1 + k%3, Value: math.Sqrt(float64(1 + (i*7+k*13)%50))})
		}
		p.Jobs = append(p.Jobs, j)
	}
	for k := range q {
		qu := ilp.Quota{AllJobs: true, Limit: 40 + k%7}
		for x := range 50 {
			qu.Types = append(qu.Types, fmt.Sprint("t", (k*31+x*97)%t))
		}
		qu.Types = dedup(qu.Types)
		p.Quotas = append(p.Quotas, qu)
	}
	return p
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// TestLateDeadlineShapes: the work after the deadline on the shapes
// above, on the solving thread's CPU clock (the least of three solves).
// The late path (from the end of the search, or of a validation cut short,
// to the return: the admission of the jobs a cut model does not hold, the
// warm start's check and the Solution) stays within half the contract's
// allowance, its share (see Solve), or, on the shapes whose input alone
// takes longer to read than the allowance (millions of quota entries, 10^5
// quota types), within twice the validation's CPU time: linear in the
// input. The whole solve meets the contract where no other step is bound
// by the input's size (with half the jobs pinned under 4,000 quotas, the
// validation ends within the allowance: the whole solve is at its edge on
// a loaded machine, 1.3-2.1 ms). The plan is feasible and a feasible warm start is
// kept (the objective is no worse than it).
//
// Before the late admission's warm pass tested each warm option against
// every quota of its job, and the search's warm start was checked with
// Check (every quota over every job entered for every job), 2,000 jobs
// under 4,000 quotas over every job with a warm start spent 45 ms past an
// expired deadline and 77 ms past a 20 ms one in those steps. With half
// the jobs pinned, checking the pins against the quotas (validation) and
// taking them off the rows (the model) each took pins × quotas over every
// job: 35-40 ms past the deadline.
func TestLateDeadlineShapes(t *testing.T) {
	skipCPUSolves(t)
	const (
		contract   = iota // the whole solve meets the contract
		late              // the late path within half the allowance
		inputBound        // the late path within twice the validation
		validated         // late, and the validation ends within the allowance
	)
	for _, tc := range []struct {
		name  string
		p     *ilp.Problem
		warm  func(p *ilp.Problem) []int
		d     time.Duration
		check int
	}{
		{"4000 quotas, warm, expired", quotaHeavy(2000, 4000), func(*ilp.Problem) []int { return everyThird(2000) }, 0, contract},
		{"4000 quotas, warm, 20ms", quotaHeavy(2000, 4000), func(*ilp.Problem) []int { return everyThird(2000) }, 20 * time.Millisecond, late},
		// (the whole solve: the search's check of the warm start and of
		// each incumbent over every option's thousands of rows took
		// 0.6-0.8 ms past D, and the capacity left for the late
		// admission 0.3 ms: 2.3-3.2 ms past D in all)
		{"4000 quotas, warm, 20ms, whole solve", quotaHeavy(2000, 4000), func(*ilp.Problem) []int { return everyThird(2000) }, 20 * time.Millisecond, contract},
		{"4000 quotas, warm, 100ms", quotaHeavy(2000, 4000), func(*ilp.Problem) []int { return everyThird(2000) }, 100 * time.Millisecond, late},
		{"4000 quotas, infeasible warm, expired", quotaHeavy(2000, 4000), func(*ilp.Problem) []int { return allFirst(2000) }, 0, contract},
		{"4000 quotas, infeasible warm, 20ms", quotaHeavy(2000, 4000), func(*ilp.Problem) []int { return allFirst(2000) }, 20 * time.Millisecond, late},
		{"1000 listed quotas of every job, warm, expired", listedHeavy(2000, 1000), func(*ilp.Problem) []int { return everyThird(2000) }, 0, inputBound},
		{"1000 listed quotas of every job, warm, 20ms", listedHeavy(2000, 1000), func(*ilp.Problem) []int { return everyThird(2000) }, 20 * time.Millisecond, inputBound},
		{"4000 quotas, half pinned, expired", pinHalf(quotaHeavy(2000, 4000)), pinsOf, 0, validated},
		{"4000 quotas, half pinned, 20ms", pinHalf(quotaHeavy(2000, 4000)), pinsOf, 20 * time.Millisecond, late},
		{"job of 100000 options, 1000 quotas, expired", wideJobQuotas(100000, 2000, 1000), nil, 0, late},
		{"job of 100000 options, 1000 quotas, 5ms", wideJobQuotas(100000, 2000, 1000), nil, 5 * time.Millisecond, contract},
		{"10000 types, 2000 quotas of 50 types, expired", typeHeavy(5000, 10000, 2000), nil, 0, inputBound},
		{"10000 types, 2000 quotas of 50 types, 20ms", typeHeavy(5000, 10000, 2000), nil, 20 * time.Millisecond, inputBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, tc.p.Validate())
			var set *ilp.Settings
			var warm []int
			if tc.warm != nil {
				warm = tc.warm(tc.p)
				set = &ilp.Settings{WarmStart: warm}
			}
			feasibleWarm := warm != nil && tc.p.Check(warm) == nil
			least, leastLate, leastSteps := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), []ilp.StepCPU(nil)
			validation, valEnd := time.Duration(0), time.Duration(math.MaxInt64)
			for range 3 {
				over, steps, sol, err := ilp.TraceSolve(tc.p, tc.d, set)
				require.NoError(t, err)
				require.NoError(t, tc.p.Check(sol.Assignment))
				if feasibleWarm {
					assert.GreaterOrEqual(t, sol.Objective, tc.p.Objective(warm), "a feasible warm start is kept")
				}
				// the late path starts at the end of the search, or of a
				// validation cut short (the fallback plan)
				from := time.Duration(0)
				for _, s := range steps {
					if s.Step == "validate" {
						validation = s.CPU + max(0, tc.d)
						valEnd = min(valEnd, max(0, s.CPU))
					}
					if s.Step == "search" || s.Step == "validate" {
						from = max(0, s.CPU)
					}
				}
				if over < least {
					least, leastSteps = over, steps
				}
				leastLate = min(leastLate, over-from)
			}
			t.Logf("least CPU past D: %v (allowance %v), of the late path %v; steps %v", least, ilp.Slack(tc.d), leastLate, leastSteps)
			switch tc.check {
			case contract:
				assert.LessOrEqual(t, least, ilp.Slack(tc.d), "CPU past the deadline; steps %v", leastSteps)
			case late:
				assert.LessOrEqual(t, leastLate, ilp.Slack(tc.d)/2, "CPU of the late path past the deadline; steps %v", leastSteps)
			case validated:
				assert.LessOrEqual(t, leastLate, ilp.Slack(tc.d)/2, "CPU of the late path past the deadline; steps %v", leastSteps)
				assert.LessOrEqual(t, valEnd, ilp.Slack(tc.d), "CPU of the validation past the deadline; steps %v", leastSteps)
			case inputBound:
				assert.LessOrEqual(t, leastLate, max(ilp.Slack(tc.d)/2, 2*validation), "CPU of the late path past the deadline, against the validation's %v; steps %v", validation, leastSteps)
			}
		})
	}
}

// TestScaledLate: a problem whose values are far from 1 is solved as a
// scaled copy; when the deadline leaves no time for the copy (or has
// passed) the answer is the fallback plan, never a search on the unscaled
// values, whose tolerances are sized for values near 1. Before, an
// expired deadline on values ×2^-100 or ×2^-40 returned Status Optimal
// with an objective below the optimum (and that objective as the bound),
// and the largest corpus round ×2^-100 spent 10-22 ms past a 14 or 16 ms
// deadline copying its 203,000 options (validation ended 3-5 ms before it).
func TestScaledLate(t *testing.T) {
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	base := ilptest.Generate(ilptest.Config{Scale: 1, Jobs: 40, Power: 0.5, Seed: 3, PinFrac: 0.1})
	for _, f := range []float64{0x1p-100, 0x1p-40, 0x1p100} {
		p := scaleValues(base, f)
		exact, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, exact.Status)
		_, _, sol, err := ilp.TraceSolve(p, 0, nil)
		require.NoError(t, err)
		require.NoError(t, p.Check(sol.Assignment))
		assert.Equal(t, ilp.Feasible, sol.Status, "×%g, expired deadline", f)
		assert.GreaterOrEqual(t, sol.Bound, exact.Objective, "×%g: the bound does not cut off the optimum", f)
	}
	if testing.Short() || raceEnabled {
		return
	}
	corpus := ilptest.HardCorpus()
	p := scaleValues(ilptest.Hard(corpus[len(corpus)-2]), 0x1p-100)
	for _, d := range []time.Duration{14 * time.Millisecond, 16 * time.Millisecond} {
		least := time.Duration(math.MaxInt64)
		for range 3 {
			over, _, sol, err := ilp.TraceSolve(p, d, nil)
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			assert.LessOrEqual(t, sol.Bound, sol.Objective, "minimising: the bound is below")
			least = min(least, over)
		}
		assert.LessOrEqual(t, least, ilp.Slack(d), "CPU past a deadline of %v", d)
	}
}
