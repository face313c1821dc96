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

// TestRootHeuristicsNearDeadline sweeps the deadline over the hard
// corpus's 1,000-job rounds from 12 to 24 ms in steps of 0.5 ms, where the
// root's dual ends a few ms before the deadline and the tight path's
// refine greedies, seqDP's knapsack programs and the core program start
// with little time left: each is sized before it starts (affords, at
// their measured cost per cell, see BenchmarkDPCost) and looks at the
// clock inside, so at every deadline the least of three solves on the
// solving thread's CPU clock (TraceSolve) ends within twice the allowance
// past D (the least, as the other deadline tests: a CI run's plain pass
// read one solve 9.7 ms past D at 17 ms, all of it between the late
// admission's last step, 0.1 ms before D, and the end of the solution's
// objective, a pass over 1,000 jobs: this machine's thread clock
// catching up while the thread was descheduled). It guards the
// sizes; it does not reliably fail before. How many solves end past half
// the allowance is logged, not asserted: 2 of 150 before, 0-3 after, so a
// bound on it separated nothing and failed a CI run at 3.
// Before, refine's greedies ran to greedyEnd and past it (2.5 ms past D at
// 22.5 ms), seqDP's knapsack rows counted only their items' work (its row
// copies ran 0.5-0.8 ms past D), and the programs were sized at a third to
// a sixth of their cost.
func TestRootHeuristicsNearDeadline(t *testing.T) {
	skipCPUSolves(t)
	slow, n := 0, 0 // solves more than half the allowance past D
	for _, c := range ilptest.HardCorpus()[:2] {
		p := ilptest.Hard(c)
		worst, at := time.Duration(0), time.Duration(0)
		var worstSteps []ilp.StepCPU
		for d := 12 * time.Millisecond; d <= 24*time.Millisecond; d += 500 * time.Microsecond {
			least := time.Duration(-1) // of the three solves at d
			var leastSteps []ilp.StepCPU
			for range 3 {
				over, steps, sol, err := ilp.TraceSolve(p, d, nil)
				require.NoError(t, err)
				require.NoError(t, p.Check(sol.Assignment))
				if n++; over > ilp.Slack(d)/2 {
					slow++
				}
				if least < 0 || over < least {
					least, leastSteps = over, steps
				}
			}
			if least > worst {
				worst, at, worstSteps = least, d, leastSteps
			}
		}
		t.Logf("%s: most CPU past D %v (at %v)", c.Name(), worst, at)
		// (twice the allowance, as TestProbe7RoundLoop: a collection's
		// assists in the one solve it falls in)
		assert.LessOrEqual(t, worst, 2*ilp.Slack(at), fmt.Sprintf("%s at %v: steps %v", c.Name(), at, worstSteps))
	}
	t.Logf("%d of %d solves past half the allowance", slow, n)
}

// TestLateRoundsSpreadCapacity runs warm-started 5 ms rounds (each on the
// previous round's plan, as a host's control loop does) on shapes whose
// capacity is short of the jobs' demand, on the solving thread's CPU clock:
// out of time, the late admission admits the jobs it reaches, and they
// must not take the capacity whole. After the rounds the plan's profit
// (objective less every job's unallocated value) reaches at least the
// share of a solve with time given per shape (see below). Before, each admitted job
// took its most profitable option: on 5,000 identical jobs over 7,503 GPUs
// 476 jobs ran on 16 GPUs and the rounds stopped there (objective −757,
// 26.5 % of the profit with time). The late admission's per-GPU rule gave
// 38-51 %; quickGreedy's first pass, at multipliers of a dual cut short,
// still gave 476 jobs 16 GPUs each in most first rounds on a faster
// machine (26.5 % in a CI run); with its own per-GPU rule (shortAtLam)
// 90-107 % at loads of 1-4 (a solve with 500 ms reaches 11,004; the bound
// is 12,074). 5,000 jobs with a quota each: 73 % before, 97-99 % now.
//
// The rounds go on until the share is reached, at most maxRounds: each
// round out of time admits at least greedyMinJobs jobs (64) and more on a
// faster machine, so the share after a fixed number of rounds measured the
// machine (40 rounds gave 90-107 % on one machine, 46-93 % on another of
// the same kind). Three further ways the rounds stalled short of the
// capacity, each now fixed: quickGreedy judged the demand of the 64 jobs it
// ordered against all the GPUs left (not short: each took 16 GPUs, 375 of
// them held 6,000 GPUs); the late admission's sample counted free jobs
// from the end of the model only (240-2,700 where 2,600-4,300 waited);
// and once every job after the model ran, the model's queued jobs were
// never admitted (2,752 jobs running, 4,689 GPUs idle, for good).
func TestLateRoundsSpreadCapacity(t *testing.T) {
	const maxRounds = 150
	skipCPUSolves(t)
	for _, tc := range []struct {
		name  string
		share float64
	}{
		{"5000 identical jobs", 0.85},
		{"5000 jobs, a quota per job", 0.7}, // (rounds out of time never move a job: which jobs run is set by the order they came in)
	} {
		p := bigShape7(tc.name)
		base := 0.0 // the objective with every job unallocated
		for _, j := range p.Jobs {
			base += j.Unallocated
		}
		timed, err := ilp.Solve(context.Background(), p, &ilp.Settings{TimeLimit: 500 * time.Millisecond})
		require.NoError(t, err)
		var warm []int
		prev, got, rounds := math.Inf(-1), 0.0, 0
		for rounds < maxRounds && got < tc.share {
			_, _, sol, err := ilp.TraceSolve(p, 5*time.Millisecond, &ilp.Settings{WarmStart: warm})
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			require.GreaterOrEqual(t, sol.Objective, prev, "%s: worse than the warm start", tc.name)
			prev, warm = sol.Objective, sol.Assignment
			got = (prev - base) / (timed.Objective - base)
			rounds++
		}
		t.Logf("%s: objective %.6g after %d rounds, %.6g with time: %.1f %% of the profit", tc.name, prev, rounds, timed.Objective, 100*got)
		assert.GreaterOrEqual(t, got, tc.share, tc.name)
	}
}

// TestScaledFallbackObjective sweeps the deadline over the point where a
// solve of values far from 1 (×2^-1000, scaled for the search) can no
// longer afford the build's setup after its copy was scaled: the fallback
// plan then returned the scaled copy's objective (TestProbe5SettingsAtLimits
// saw 2.5 for an assignment worth 9.3e-301 under load). Every answer's
// objective must be its assignment's, in the caller's values.
func TestScaledFallbackObjective(t *testing.T) {
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	p := quotaHeavy(2000, 4000)
	for i := range p.Jobs {
		j := &p.Jobs[i]
		j.Unallocated = math.Ldexp(j.Unallocated, -1000)
		for k := range j.Options {
			j.Options[k].Value = math.Ldexp(j.Options[k].Value+1, -1000)
		}
	}
	require.NoError(t, p.Validate())
	for d := time.Duration(0); d <= 4*time.Millisecond; d += 100 * time.Microsecond {
		_, _, sol, err := ilp.TraceSolve(p, d, nil)
		require.NoError(t, err)
		require.NoError(t, p.Check(sol.Assignment))
		require.Equal(t, p.Objective(sol.Assignment), sol.Objective, "deadline %v, %v", d, sol.Status)
	}
}
