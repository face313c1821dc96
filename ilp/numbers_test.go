package ilp_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountOverflow: sums of GPU counts never wrap around. Pins whose sum
// overflows int are infeasible (not "optimal, all placed"), totals beyond
// MaxGPUs are input errors naming the field, and limits as large as int
// allows are honoured.
func TestCountOverflow(t *testing.T) {
	pin := func(id string, g int) ilp.Job {
		return ilp.Job{ID: id, Pin: 0, Options: []ilp.Option{{Type: "a", GPUs: g, Value: 1}}}
	}
	for _, tc := range []struct {
		name       string
		p          *ilp.Problem
		want       string
		infeasible bool
	}{
		{"pins wrap", &ilp.Problem{Capacity: map[string]int{"a": 4}, Jobs: []ilp.Job{pin("x", math.MaxInt), pin("y", math.MaxInt), pin("z", 6)}},
			`capacity["a"]: pinned jobs need more than`, true},
		{"pins wrap in a quota", &ilp.Problem{Capacity: map[string]int{"a": 1 << 40},
			Jobs:   []ilp.Job{pin("x", math.MaxInt/2+1), pin("y", math.MaxInt/2+1), pin("z", 2)},
			Quotas: []ilp.Quota{{Name: "q", AllJobs: true, Limit: 4}}},
			`pinned jobs need more than`, true},
		{"capacity sum", &ilp.Problem{Capacity: map[string]int{"a": ilp.MaxGPUs, "b": math.MaxInt}},
			`capacity["b"]: capacity 9223372036854775807 brings the total over every type above MaxGPUs`, false},
		{"capacity sum wraps", &ilp.Problem{Capacity: map[string]int{"a": math.MaxInt, "b": math.MaxInt}},
			`capacity["a"]`, false},
		{"capacity above MaxGPUs", &ilp.Problem{Capacity: map[string]int{"a": ilp.MaxGPUs + 1}},
			`capacity["a"]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.infeasible {
				require.ErrorIs(t, err, ilp.ErrInfeasible)
			} else {
				require.ErrorIs(t, err, ilp.ErrInvalidInput)
			}
			assert.Contains(t, err.Error(), tc.want)
			sol, err := ilp.Solve(context.Background(), tc.p, nil)
			require.Error(t, err)
			assert.NotEqual(t, ilp.Optimal, sol.Status, "an error never comes with Optimal")
			assert.Nil(t, sol.Assignment)
		})
	}
	// Check does not wrap either
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 4}, Jobs: []ilp.Job{
		{ID: "x", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: math.MaxInt, Value: 1}}},
		{ID: "y", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: math.MaxInt, Value: 1}}},
		{ID: "z", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 2, Value: 1}}},
	}, Quotas: []ilp.Quota{{Name: "q", AllJobs: true, Limit: 3}}}
	require.NoError(t, p.Validate())
	require.Error(t, p.Check([]int{0, 0, 0}))
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{-1, -1, 0}, sol.Assignment, "only the job that fits is placed")
	// the largest limits and capacities solve correctly
	p = &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": ilp.MaxGPUs / 2, "b": ilp.MaxGPUs / 2}, Jobs: []ilp.Job{
		{ID: "x", Pin: 0, Options: []ilp.Option{{Type: "a", GPUs: ilp.MaxGPUs / 2, Value: 1}}},
		{ID: "y", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 1, Value: 5}, {Type: "b", GPUs: ilp.MaxGPUs / 2, Value: 2}}},
	}, Quotas: []ilp.Quota{{Name: "q", AllJobs: true, Limit: math.MaxInt}}}
	sol, err = ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.Equal(t, ilp.Optimal, sol.Status)
	assert.Equal(t, []int{0, 1}, sol.Assignment)
	assert.Equal(t, 3.0, sol.Objective)
}

// TestManyOptions: more options of one type than int16 can index are
// handled by the knapsack programs.
func TestManyOptions(t *testing.T) {
	const n = 33000
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": n}}
	for _, id := range []string{"x", "y"} {
		j := ilp.Job{ID: id, Pin: -1}
		for g := 1; g <= n; g++ {
			j.Options = append(j.Options, ilp.Option{Type: "a", GPUs: g, Value: math.Sqrt(float64(g))})
		}
		p.Jobs = append(p.Jobs, j)
	}
	limit := 300 * time.Millisecond
	if raceEnabled {
		limit = 5 * time.Second // the race detector slows building the model tenfold
	}
	sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{TimeLimit: limit})
	require.NoError(t, err)
	require.NoError(t, p.Check(sol.Assignment))
	assert.InDelta(t, 2*math.Sqrt(n/2), sol.Objective, 1e-9, "an even split")
}

// TestGridValidation: the on-grid test holds for every step, including
// steps far larger or smaller than the values; a grid that makes values
// count as on it only because it is large is rejected, so no wrong
// optimum or bound can follow.
func TestGridValidation(t *testing.T) {
	mk := func(grid float64, vals ...float64) *ilp.Problem {
		p := &ilp.Problem{Sense: ilp.Minimize, Grid: grid, Capacity: map[string]int{"a": 1}}
		for i, v := range vals {
			p.Jobs = append(p.Jobs, ilp.Job{ID: string(rune('a' + i)), Pin: -1, Unallocated: 2 * grid,
				Options: []ilp.Option{{Type: "a", GPUs: 1, Value: v}}})
		}
		return p
	}
	for _, tc := range []struct {
		name string
		p    *ilp.Problem
		ok   bool
	}{
		{"0.2 on a grid of 1000", mk(1000, 0.2, 1.8), false},
		{"0.2 on a grid of 2", mk(2, 0.2), false},
		{"5 on a grid of 1e20", mk(1e20, 5), false},
		{"1e-20 on a grid of 0.01", mk(0.01, 1e-20), false},
		{"multiples of 2", mk(2, 2, 4, 0), true},
		{"multiples of 1e20", mk(1e20, 3e20, 1e20), true},
		{"single precision on 0.01", mk(0.01, float64(float32(0.66)), float64(float32(12.34))), true},
		{"tiny grid", mk(1e-300, 1), false},
		{"NaN grid", mk(math.NaN()), false},
		{"Inf grid", mk(math.Inf(1)), false},
		{"negative grid", mk(-0.01), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if !tc.ok {
				require.ErrorIs(t, err, ilp.ErrInvalidInput)
				assert.Regexp(t, `grid|unallocated`, err.Error())
				return
			}
			require.NoError(t, err)
			sol, err := ilp.Solve(context.Background(), tc.p, nil)
			require.NoError(t, err)
			require.Equal(t, ilp.Optimal, sol.Status)
			q := *tc.p
			q.Grid = 0
			want, err := ilp.Solve(context.Background(), &q, nil)
			require.NoError(t, err)
			assert.Equal(t, want.Objective, sol.Objective)
			assert.Equal(t, sol.Objective, sol.Bound)
		})
	}
	// the reported case: the optimum 0.2 is found, not 1.8
	p := mk(0, 0.2, 1.8)
	p.Capacity["a"] = 1
	p.Jobs[0].Unallocated, p.Jobs[1].Unallocated = 0.1, 0.1
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.InDelta(t, 0.2, sol.Objective, 1e-12)
	p.Grid = 1000
	_, err = ilp.Solve(context.Background(), p, nil)
	require.ErrorIs(t, err, ilp.ErrInvalidInput)
}

// TestValueOverflow: values whose sum can overflow are rejected, so no
// objective or bound is ever ±Inf.
func TestValueOverflow(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 2}}
	for _, id := range []string{"x", "y"} {
		p.Jobs = append(p.Jobs, ilp.Job{ID: id, Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 1, Value: math.MaxFloat64}}})
	}
	err := p.Validate()
	require.ErrorIs(t, err, ilp.ErrInvalidInput)
	assert.Contains(t, err.Error(), `jobs[0] "x": values too large`)
	p.Jobs[0].Options[0].Value, p.Jobs[1].Options[0].Value = -1e300, 0
	p.Jobs[1].Unallocated = -1e300
	require.Error(t, p.Validate(), "a large Unallocated counts too")
	// within MaxValueSum everything is finite
	p.Jobs[0].Options[0].Value, p.Jobs[1].Options[0].Value, p.Jobs[1].Unallocated = 1e279, 1e279, -1e279
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.NoError(t, err)
	assert.Equal(t, ilp.Optimal, sol.Status)
	assert.False(t, math.IsInf(sol.Objective, 0) || math.IsInf(sol.Bound, 0))
	assert.Equal(t, 2e279, sol.Objective)
}

// TestSettingsValidation: every Settings field is checked.
func TestSettingsValidation(t *testing.T) {
	p := &ilp.Problem{Capacity: map[string]int{"a": 1}, Jobs: []ilp.Job{{ID: "x", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 1, Value: 1}}}}}
	for _, tc := range []struct {
		s    ilp.Settings
		want string
	}{
		{ilp.Settings{Tolerance: math.Inf(1)}, "settings.tolerance"},
		{ilp.Settings{Tolerance: math.NaN()}, "settings.tolerance"},
		{ilp.Settings{Tolerance: -1e-9}, "settings.tolerance"},
		{ilp.Settings{MaxNodes: -1}, "settings.maxNodes"},
		{ilp.Settings{TimeLimit: -time.Second}, "settings.timeLimit"},
	} {
		_, err := ilp.Solve(context.Background(), p, &tc.s)
		require.ErrorIs(t, err, ilp.ErrInvalidInput, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := ilp.Solve(context.Background(), p, &ilp.Settings{Tolerance: 1e300, MaxNodes: 1, TimeLimit: time.Hour})
	require.NoError(t, err)
}
