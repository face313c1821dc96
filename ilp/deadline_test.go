package ilp_test

import (
	"context"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeadline: a cancelled context or a node limit still yields a feasible
// assignment with a valid bound.
func TestDeadline(t *testing.T) {
	p := ilptest.Generate(ilptest.Config{Scale: 8, Jobs: 300, Power: 0.5, Seed: 2001, PinFrac: 0.05})
	exact, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	require.Equal(t, ilp.Optimal, exact.Status)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sol, err := ilp.Solve(ctx, p, nil)
	require.NoError(t, err)
	require.NoError(t, p.Check(sol.Assignment))
	assert.LessOrEqual(t, sol.Objective, exact.Objective+1e-9)
	assert.GreaterOrEqual(t, sol.Bound, exact.Objective-1e-9, "bound must not cut off the optimum")
	if sol.Status == ilp.Feasible {
		assert.Greater(t, sol.Gap(), 0.0)
	}

	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	sol, err = ilp.Solve(ctx, p, &ilp.Settings{MaxNodes: 1})
	require.NoError(t, err)
	require.NoError(t, p.Check(sol.Assignment))
	assert.GreaterOrEqual(t, sol.Bound, exact.Objective-1e-9)
}

// TestWarmStart: the previous assignment is accepted as incumbent; a bad one
// is ignored; the optimum does not change.
func TestWarmStart(t *testing.T) {
	p := ilptest.Generate(ilptest.Config{Scale: 1, Jobs: 40, Power: -0.5, Seed: 3, PinFrac: 0.2})
	cold, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	warm, err := ilp.Solve(context.Background(), p, &ilp.Settings{WarmStart: cold.Assignment})
	require.NoError(t, err)
	assert.Equal(t, ilp.Optimal, warm.Status)
	assert.InDelta(t, cold.Objective, warm.Objective, 1e-9)
	bad := make([]int, len(p.Jobs))
	for i := range bad {
		bad[i] = 0 // breaks capacity or pins
	}
	sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{WarmStart: bad})
	require.NoError(t, err)
	assert.InDelta(t, cold.Objective, sol.Objective, 1e-9)
	sol, err = ilp.Solve(context.Background(), p, &ilp.Settings{WarmStart: []int{1, 2}})
	require.NoError(t, err)
	assert.InDelta(t, cold.Objective, sol.Objective, 1e-9)
}

func TestSolveEdgeCases(t *testing.T) {
	// no jobs
	sol, err := ilp.Solve(context.Background(), &ilp.Problem{Capacity: map[string]int{"t4": 4}}, nil)
	require.NoError(t, err)
	assert.Equal(t, ilp.Optimal, sol.Status)
	assert.Empty(t, sol.Assignment)
	assert.Equal(t, 0.0, sol.Objective)
	// a job larger than the cluster stays unallocated
	p := &ilp.Problem{Sense: ilp.Minimize, Capacity: map[string]int{"t4": 4}, Jobs: []ilp.Job{
		{ID: "big", Unallocated: 1.1, Pin: -1, Options: []ilp.Option{{Type: "t4", GPUs: 64, Value: 0.1}}},
		{ID: "small", Unallocated: 1.1, Pin: -1, Options: []ilp.Option{{Type: "t4", GPUs: 2, Value: 0.5}}},
	}}
	sol, err = ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{-1, 0}, sol.Assignment)
	assert.InDelta(t, 1.6, sol.Objective, 1e-12)
	// pins that cannot hold
	p.Jobs[0].Pin = 0
	sol, err = ilp.Solve(context.Background(), p, nil)
	require.ErrorIs(t, err, ilp.ErrInfeasible)
	assert.Equal(t, ilp.Infeasible, sol.Status)
	assert.Nil(t, sol.Assignment)
	// invalid settings
	p.Jobs[0].Pin = -1
	_, err = ilp.Solve(context.Background(), p, &ilp.Settings{MaxNodes: -1})
	require.ErrorIs(t, err, ilp.ErrInvalidInput)
	// quotas and reservations are honoured
	p = &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 8}, Reserved: map[string]int{"a": 2}, Jobs: []ilp.Job{
		{ID: "x", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 4, Value: 5}}},
		{ID: "y", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 2, Value: 3}}},
		{ID: "z", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 2, Value: 3}}},
	}, Quotas: []ilp.Quota{{Name: "team", Jobs: []int{1, 2}, Type: "a", Limit: 2}}}
	sol, err = ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, -1}, sol.Assignment)
	assert.Equal(t, 8.0, sol.Objective)
}
