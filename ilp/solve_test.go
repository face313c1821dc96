package ilp_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/require"
)

// TestBruteForce compares the solver's optimum with exhaustive enumeration on
// thousands of small random problems with pins, reservations and quotas.
func TestBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 4000; it++ {
		grid := it%2 == 0
		p := ilptest.Small(rng, 7, grid)
		want, wantObj, ok := ilptest.BruteForce(p)
		require.True(t, ok, "instance %d: pins are generated feasible", it)
		sol, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err, "instance %d", it)
		require.Equal(t, ilp.Optimal, sol.Status, "instance %d", it)
		require.NoError(t, p.Check(sol.Assignment), "instance %d", it)
		require.InDelta(t, wantObj, sol.Objective, 1e-9, "instance %d: brute force %v, solver %v", it, want, sol.Assignment)
		require.InDelta(t, sol.Objective, p.Objective(sol.Assignment), 1e-12)
	}
}

// TestLargeInvariants solves Sia-shaped instances and checks feasibility,
// pins, the bound and determinism.
func TestLargeInvariants(t *testing.T) {
	for _, c := range []ilptest.Config{
		{Scale: 1, Jobs: 30, Power: -0.5, PinFrac: 0.1, Seed: 1},
		{Scale: 1, Jobs: 100, Power: 0.5, PinFrac: 0.1, Seed: 2},
		{Scale: 8, Jobs: 300, Power: -0.5, PinFrac: 0.05, Seed: 3},
		{Scale: 8, Jobs: 300, Power: 0.5, PinFrac: 0.05, Seed: 4},
		{Scale: 32, Jobs: 1500, Power: -0.5, PinFrac: 0.05, Seed: 5},
		{Scale: 32, Jobs: 800, Power: 0.5, PinFrac: 0.05, Seed: 6},
	} {
		p := ilptest.Generate(c)
		sol, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, sol.Status, "%+v", c)
		require.NoError(t, p.Check(sol.Assignment))
		sol2, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err)
		require.Equal(t, sol.Assignment, sol2.Assignment, "deterministic")
		t.Logf("%+v: obj %.6f nodes %d", c, sol.Objective, sol.Nodes)
	}
}

// TestLargeQuotas adds per-queue quota rows and a reservation to Sia-shaped
// instances: the result respects every row, and tightening rows never
// improves the optimum.
func TestLargeQuotas(t *testing.T) {
	for _, c := range []ilptest.Config{
		{Scale: 8, Jobs: 200, Power: -0.5, PinFrac: 0, Seed: 21},
		{Scale: 8, Jobs: 200, Power: 0.5, PinFrac: 0, Seed: 22},
	} {
		p := ilptest.Generate(c)
		free, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, free.Status)
		var q1, q2 []int
		for i := range p.Jobs {
			if i%2 == 0 {
				q1 = append(q1, i)
			} else {
				q2 = append(q2, i)
			}
		}
		p.Quotas = []ilp.Quota{
			{Name: "even-a100", Jobs: q1, Type: "a100", Limit: p.Capacity["a100"] / 4},
			{Name: "odd-all", Jobs: q2, Limit: 100},
		}
		p.Reserved = map[string]int{"rtx": 16}
		sol, err := ilp.Solve(context.Background(), p, nil)
		require.NoError(t, err)
		require.NoError(t, p.Check(sol.Assignment))
		if p.Sense == ilp.Maximize {
			require.LessOrEqual(t, sol.Objective, free.Objective+1e-9)
			require.LessOrEqual(t, sol.Objective, sol.Bound+1e-9)
		} else {
			require.GreaterOrEqual(t, sol.Objective, free.Objective-1e-9)
			require.GreaterOrEqual(t, sol.Objective, sol.Bound-1e-9)
		}
		t.Logf("%+v: status %v obj %.4f (no quotas %.4f) nodes %d", c, sol.Status, sol.Objective, free.Objective, sol.Nodes)
	}
}

// TestQuotaMinGPUs checks quotas that count only large options, over all
// jobs: a placement limit "rtx configurations of at least 16 GPUs use at most
// 16 GPUs together" (the shape of configset size limits).
func TestQuotaMinGPUs(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"rtx": 64}}
	for i := 0; i < 4; i++ {
		p.Jobs = append(p.Jobs, ilp.Job{ID: string(rune('a' + i)), Pin: -1, Options: []ilp.Option{
			{Type: "rtx", GPUs: 8, Value: 1},
			{Type: "rtx", GPUs: 16, Value: 1.5},
		}})
	}
	free, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	require.Equal(t, ilp.Optimal, free.Status)
	require.InDelta(t, 6.0, free.Objective, 1e-12, "every job takes 16 GPUs without the limit")

	p.Quotas = []ilp.Quota{{Name: "big", AllJobs: true, Type: "rtx", MinGPUs: 16, Limit: 16}}
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	require.Equal(t, ilp.Optimal, sol.Status)
	require.NoError(t, p.Check(sol.Assignment))
	require.InDelta(t, 4.5, sol.Objective, 1e-12, "one job takes 16 GPUs, three take 8")
	big := 0
	for i, a := range sol.Assignment {
		if a >= 0 && p.Jobs[i].Options[a].GPUs >= 16 {
			big++
		}
	}
	require.Equal(t, 1, big)

	// a pinned large option counts toward the quota; two cannot hold
	p.Jobs[0].Pin, p.Jobs[1].Pin = 1, 1
	require.ErrorIs(t, p.Validate(), ilp.ErrInfeasible)
	p.Jobs[1].Pin = 0 // 8 GPUs: does not count
	sol, err = ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	require.NoError(t, p.Check(sol.Assignment))
	require.Equal(t, []int{1, 0, 0, 0}, sol.Assignment)

	// the same quota listing every job explicitly gives the same optimum
	p.Quotas[0].AllJobs, p.Quotas[0].Jobs = false, []int{0, 1, 2, 3}
	sol2, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	require.Equal(t, sol.Assignment, sol2.Assignment)
	// Check rejects an assignment with two large options
	require.Error(t, p.Check([]int{1, 0, 1, 0}))
}
