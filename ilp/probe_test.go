package ilp_test

// Probes of issue 10's number classes (class 5) by an independent checker:
// extreme values, counts, grids, tolerances and node limits on small random
// instances, each answer checked against the brute-force twin.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbeTinyGridHidesLaterErrors: with a grid so small that 1/Grid
// overflows (below ~5.6e-309), an option worth 0 made Validate stop at that
// option and return nil, so the jobs after it were never checked: a NaN
// value, an unknown type, negative GPUs and a duplicate ID were accepted and
// Solve called the answer optimal.
func TestProbeTinyGridHidesLaterErrors(t *testing.T) {
	base := func() *ilp.Problem {
		return &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 2}, Grid: 1e-310,
			Jobs: []ilp.Job{
				{ID: "j0", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 1, Value: 0}}},
				{ID: "j1", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 1, Value: 0}}},
			}}
	}
	require.NoError(t, base().Validate())
	for _, c := range []struct {
		name, field string
		edit        func(p *ilp.Problem)
	}{
		{"duplicate ID", `jobs[1]`, func(p *ilp.Problem) { p.Jobs[1].ID = "j0" }},
		{"NaN value", `jobs[1] "j1".options[0].value`, func(p *ilp.Problem) { p.Jobs[1].Options[0].Value = math.NaN() }},
		{"unknown type", `jobs[1] "j1".options[0].type`, func(p *ilp.Problem) { p.Jobs[1].Options[0].Type = "zz" }},
		{"negative GPUs", `jobs[1] "j1".options[0].gpus`, func(p *ilp.Problem) { p.Jobs[1].Options[0].GPUs = -4 }},
		{"off the grid", `jobs[1] "j1".options[0].value`, func(p *ilp.Problem) { p.Jobs[1].Options[0].Value = 1 }},
		{"second option of the same job", `jobs[0] "j0".options[1].gpus`, func(p *ilp.Problem) {
			p.Jobs[0].Options = append(p.Jobs[0].Options, ilp.Option{Type: "a", GPUs: 0, Value: 0})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := base()
			c.edit(p)
			err := p.Validate()
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
			assert.Contains(t, err.Error(), c.field)
			sol, err := ilp.Solve(context.Background(), p, nil)
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
			assert.NotEqual(t, ilp.Optimal, sol.Status)
		})
	}
}

// TestProbeValidateNeverPanics: problems with a field set to an extreme
// value are rejected with an error (never a panic) or validate; Solve agrees.
func TestProbeValidateNeverPanics(t *testing.T) {
	ints := []int{math.MinInt, -1, 0, 1, ilp.MaxGPUs, ilp.MaxGPUs + 1, math.MaxInt}
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1), -math.MaxFloat64, -ilp.MaxValueSum, -1, -0.0, 5e-324, 1e-310, 1, ilp.MaxValueSum, math.MaxFloat64}
	cases := 0
	try := func(name string, edit func(p *ilp.Problem)) {
		cases++
		p := hostileBase()
		edit(p)
		verr := p.Validate()
		sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{MaxNodes: 100})
		if verr != nil {
			require.Error(t, err, name)
			assert.True(t, errors.Is(err, ilp.ErrInvalidInput) || errors.Is(err, ilp.ErrInfeasible), name)
			assert.NotEqual(t, ilp.Optimal, sol.Status, name)
			return
		}
		require.NoError(t, err, name)
		require.NoError(t, p.Check(sol.Assignment), name)
	}
	for _, v := range ints {
		try(fmt.Sprint("capacity ", v), func(p *ilp.Problem) { p.Capacity["a"] = v })
		try(fmt.Sprint("reserved ", v), func(p *ilp.Problem) { p.Reserved = map[string]int{"a": v} })
		try(fmt.Sprint("gpus ", v), func(p *ilp.Problem) { p.Jobs[0].Options[0].GPUs = v })
		try(fmt.Sprint("pin ", v), func(p *ilp.Problem) { p.Jobs[0].Pin = v })
		try(fmt.Sprint("quota limit ", v), func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{AllJobs: true, Limit: v}} })
		try(fmt.Sprint("quota min ", v), func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{AllJobs: true, Limit: 3, MinGPUs: v}} })
		try(fmt.Sprint("quota job ", v), func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Jobs: []int{v}, Limit: 3}} })
		try(fmt.Sprint("sense ", v), func(p *ilp.Problem) { p.Sense = ilp.Sense(v) })
	}
	for _, v := range floats {
		for _, g := range []float64{0, 1e-310, 0.5} {
			try(fmt.Sprint("value ", v, " grid ", g), func(p *ilp.Problem) { p.Grid = g; p.Jobs[1].Options[1].Value = v })
			try(fmt.Sprint("unallocated ", v, " grid ", g), func(p *ilp.Problem) { p.Grid = g; p.Jobs[1].Unallocated = v })
		}
		try(fmt.Sprint("grid ", v), func(p *ilp.Problem) { p.Grid = v })
	}
	t.Logf("%d cases", cases)
}
