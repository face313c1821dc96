package ilp_test

// Hostile inputs a new user would try, of the classes of issue 10 (numbers,
// grids, tolerances, pins, quotas, JSON readers), each with the expected
// result: an error naming the field, or an answer that brute force confirms.

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

func hostileBase() *ilp.Problem {
	return &ilp.Problem{
		Sense:    ilp.Maximize,
		Capacity: map[string]int{"a": 4, "b": 2},
		Jobs: []ilp.Job{
			{ID: "j0", Pin: -1, Unallocated: -1, Options: []ilp.Option{{Type: "a", GPUs: 2, Value: 3}, {Type: "b", GPUs: 1, Value: 2}}},
			{ID: "j1", Pin: -1, Unallocated: -1, Options: []ilp.Option{{Type: "a", GPUs: 4, Value: 5}, {Type: "b", GPUs: 2, Value: 1}}},
		},
	}
}

func TestHostileProblemRejected(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(p *ilp.Problem)
		field string
	}{
		{"option GPUs 0", func(p *ilp.Problem) { p.Jobs[0].Options[0].GPUs = 0 }, "jobs[0]"},
		{"option GPUs negative", func(p *ilp.Problem) { p.Jobs[1].Options[1].GPUs = -3 }, "jobs[1]"},
		{"option GPUs MinInt", func(p *ilp.Problem) { p.Jobs[1].Options[1].GPUs = math.MinInt }, "jobs[1]"},
		{"value NaN", func(p *ilp.Problem) { p.Jobs[0].Options[1].Value = math.NaN() }, "jobs[0]"},
		{"value -Inf", func(p *ilp.Problem) { p.Jobs[0].Options[1].Value = math.Inf(-1) }, "jobs[0]"},
		{"unallocated +Inf", func(p *ilp.Problem) { p.Jobs[1].Unallocated = math.Inf(1) }, "jobs[1]"},
		{"unallocated NaN", func(p *ilp.Problem) { p.Jobs[1].Unallocated = math.NaN() }, "jobs[1]"},
		{"values sum over MaxValueSum", func(p *ilp.Problem) {
			p.Jobs[0].Options[0].Value = 0.9 * math.MaxFloat64
			p.Jobs[1].Options[0].Value = 0.9 * math.MaxFloat64
		}, ""},
		{"option on unknown type", func(p *ilp.Problem) { p.Jobs[0].Options[0].Type = "A" }, "jobs[0]"},
		{"option type with space", func(p *ilp.Problem) { p.Jobs[0].Options[0].Type = "a " }, "jobs[0]"},
		{"duplicate job ID", func(p *ilp.Problem) { p.Jobs[1].ID = "j0" }, "jobs[1]"},
		{"empty job ID", func(p *ilp.Problem) { p.Jobs[1].ID = "" }, "jobs[1]"},
		{"pin out of range", func(p *ilp.Problem) { p.Jobs[0].Pin = 2 }, "jobs[0]"},
		{"pin below -1", func(p *ilp.Problem) { p.Jobs[0].Pin = -2 }, "jobs[0]"},
		{"capacity negative", func(p *ilp.Problem) { p.Capacity["b"] = -1 }, "capacity"},
		{"capacity MaxInt", func(p *ilp.Problem) { p.Capacity["b"] = math.MaxInt }, "capacity"},
		{"capacity empty type", func(p *ilp.Problem) { p.Capacity[""] = 1 }, "capacity"},
		{"reserved over capacity", func(p *ilp.Problem) { p.Reserved = map[string]int{"a": 5} }, "reserved"},
		{"reserved negative", func(p *ilp.Problem) { p.Reserved = map[string]int{"a": -1} }, "reserved"},
		{"reserved unknown type", func(p *ilp.Problem) { p.Reserved = map[string]int{"c": 0} }, "reserved"},
		{"grid NaN", func(p *ilp.Problem) { p.Grid = math.NaN() }, "grid"},
		{"grid -Inf", func(p *ilp.Problem) { p.Grid = math.Inf(-1) }, "grid"},
		{"grid negative", func(p *ilp.Problem) { p.Grid = -1 }, "grid"},
		{"grid larger than every value", func(p *ilp.Problem) { p.Grid = 1e6 }, ""},
		{"grid tiny: values are not multiples within 0.1% of a step", func(p *ilp.Problem) { p.Grid = 1e-300 }, "grid"},
		{"grid 0.7 off-grid values", func(p *ilp.Problem) { p.Grid = 0.7 }, ""},
		{"quota unknown type", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Type: "c", Jobs: []int{0}, Limit: 1}} }, "quota"},
		{"quota job index out of range", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Jobs: []int{2}, Limit: 1}} }, "quota"},
		{"quota job index negative", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Jobs: []int{-1}, Limit: 1}} }, "quota"},
		{"quota job twice", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Jobs: []int{1, 1}, Limit: 1}} }, "quota"},
		{"quota negative limit", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Limit: -1}} }, "quota"},
		{"quota negative MinGPUs", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, MinGPUs: -1, Limit: 1}} }, "quota"},
		{"quota Type and Types", func(p *ilp.Problem) {
			p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Type: "a", Types: []string{"b"}, Limit: 1}}
		}, "quota"},
		{"quota AllJobs and Jobs", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Jobs: []int{0}, Limit: 1}} }, "quota"},
		{"quota Types names unknown type", func(p *ilp.Problem) {
			p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Types: []string{"a", "zz"}, Limit: 1}}
		}, "quota"},
		{"quota Types twice", func(p *ilp.Problem) {
			p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Types: []string{"a", "a"}, Limit: 1}}
		}, "quota"},
		{"sense 7", func(p *ilp.Problem) { p.Sense = 7 }, "sense"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := hostileBase()
			c.edit(p)
			require.Error(t, p.Validate())
			sol, err := ilp.Solve(context.Background(), p, nil)
			require.Error(t, err)
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
			assert.NotEqual(t, ilp.Optimal, sol.Status)
			assert.Contains(t, strings.ToLower(err.Error()), strings.ToLower(c.field))
		})
	}
}

func TestHostileSettingsRejected(t *testing.T) {
	for name, s := range map[string]*ilp.Settings{
		"tolerance NaN":       {Tolerance: math.NaN()},
		"tolerance +Inf":      {Tolerance: math.Inf(1)},
		"tolerance negative":  {Tolerance: -1e-12},
		"max nodes negative":  {MaxNodes: -1},
		"time limit negative": {TimeLimit: -time.Nanosecond},
	} {
		t.Run(name, func(t *testing.T) {
			sol, err := ilp.Solve(context.Background(), hostileBase(), s)
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
			assert.Equal(t, ilp.Unsolved, sol.Status)
		})
	}
}

// TestHostileAnswers: valid but unusual problems, each solved exactly and
// checked against brute force (status Optimal means the brute-force
// optimum).
func TestHostileAnswers(t *testing.T) {
	cases := []struct {
		name string
		edit func(p *ilp.Problem)
		s    *ilp.Settings
	}{
		{"option larger than capacity", func(p *ilp.Problem) { p.Jobs[1].Options[0].GPUs = 1 << 40 }, nil},
		{"option MaxInt GPUs", func(p *ilp.Problem) { p.Jobs[0].Options[0].GPUs = math.MaxInt }, nil},
		{"all options too large", func(p *ilp.Problem) {
			for i := range p.Jobs {
				for k := range p.Jobs[i].Options {
					p.Jobs[i].Options[k].GPUs = 1000
				}
			}
		}, nil},
		{"capacity zero", func(p *ilp.Problem) { p.Capacity = map[string]int{"a": 0, "b": 0} }, nil},
		{"reserved all", func(p *ilp.Problem) { p.Reserved = map[string]int{"a": 4, "b": 2} }, nil},
		{"no jobs", func(p *ilp.Problem) { p.Jobs = nil }, nil},
		{"job without options", func(p *ilp.Problem) { p.Jobs[0].Options = nil }, nil},
		{"ids differing in case and space", func(p *ilp.Problem) { p.Jobs[0].ID, p.Jobs[1].ID = "J", "j " }, nil},
		{"negative values grid 0.5", func(p *ilp.Problem) {
			p.Grid = 0.5
			p.Jobs[0].Options[0].Value, p.Jobs[0].Options[1].Value = -2.5, -0.5
			p.Jobs[1].Options[0].Value, p.Jobs[1].Options[1].Value = -1, 1.5
			p.Jobs[0].Unallocated, p.Jobs[1].Unallocated = -3, -3
		}, nil},
		{"grid 3 with values multiples of 3", func(p *ilp.Problem) {
			p.Grid = 3
			p.Jobs[0].Options[0].Value, p.Jobs[0].Options[1].Value = 6, 3
			p.Jobs[1].Options[0].Value, p.Jobs[1].Options[1].Value = 9, 3
			p.Jobs[0].Unallocated, p.Jobs[1].Unallocated = -3, 0
		}, nil},
		{"grid min subnormal with zero values", func(p *ilp.Problem) {
			p.Grid = math.SmallestNonzeroFloat64
			for i := range p.Jobs {
				p.Jobs[i].Unallocated = 0
				for k := range p.Jobs[i].Options {
					p.Jobs[i].Options[k].Value = 0
				}
			}
		}, nil},
		{"minimise", func(p *ilp.Problem) { p.Sense = ilp.Minimize }, nil},
		{"huge values", func(p *ilp.Problem) {
			p.Jobs[0].Options[0].Value, p.Jobs[1].Options[0].Value = 1e270, -1e270
		}, nil},
		{"tiny values", func(p *ilp.Problem) {
			p.Jobs[0].Options[0].Value, p.Jobs[0].Options[1].Value = 3e-300, 2e-300
			p.Jobs[1].Options[0].Value, p.Jobs[1].Options[1].Value = 5e-300, 1e-300
			p.Jobs[0].Unallocated, p.Jobs[1].Unallocated = 0, 0
		}, nil},
		{"tolerance huge", func(p *ilp.Problem) {}, &ilp.Settings{Tolerance: 1e300}},
		{"warm start out of range", func(p *ilp.Problem) {}, &ilp.Settings{WarmStart: []int{7, -5}}},
		{"warm start wrong length", func(p *ilp.Problem) {}, &ilp.Settings{WarmStart: []int{0}}},
		{"warm start infeasible", func(p *ilp.Problem) {}, &ilp.Settings{WarmStart: []int{0, 0}}},
		{"pin to option of full type", func(p *ilp.Problem) { p.Jobs[1].Pin = 0 }, nil},
		{"quota limit 0", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, Limit: 0}} }, nil},
		{"quota MinGPUs huge", func(p *ilp.Problem) {
			p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, MinGPUs: math.MaxInt, Limit: 0}}
		}, nil},
		{"quota limit MaxInt", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Jobs: []int{0, 1}, Limit: math.MaxInt}} }, nil},
		{"quota empty jobs", func(p *ilp.Problem) { p.Quotas = []ilp.Quota{{Name: "q", Limit: 0}} }, nil},
		{"max nodes 1", func(p *ilp.Problem) {}, &ilp.Settings{MaxNodes: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := hostileBase()
			c.edit(p)
			require.NoError(t, p.Validate())
			sol, err := ilp.Solve(context.Background(), p, c.s)
			require.NoError(t, err)
			if c.s != nil && c.s.Tolerance > 0 {
				// optimal within the tolerance: Bound may differ from Objective
				require.NoError(t, p.Check(sol.Assignment))
				require.Equal(t, p.Objective(sol.Assignment), sol.Objective)
			} else {
				checkSolution(t, p, sol)
			}
			_, want, ok := ilptest.BruteForce(p)
			require.True(t, ok)
			tol := 1e-9 * max(1, math.Abs(want))
			if c.s != nil && c.s.Tolerance > 0 {
				tol = c.s.Tolerance
			}
			if sol.Status == ilp.Optimal {
				assert.InDelta(t, want, sol.Objective, tol, "optimal objective")
			}
			// The bound is a bound on the brute-force optimum.
			if p.Sense == ilp.Maximize {
				assert.GreaterOrEqual(t, sol.Bound+tol, want)
			} else {
				assert.LessOrEqual(t, sol.Bound-tol, want)
			}
			// Same input, same answer.
			again, err := ilp.Solve(context.Background(), p, c.s)
			require.NoError(t, err)
			assert.Equal(t, sol, again)
		})
	}
}

func TestHostilePinsInfeasible(t *testing.T) {
	p := hostileBase()
	p.Jobs[0].Pin, p.Jobs[1].Pin = 0, 0 // 2 + 4 GPUs of a on 4
	sol, err := ilp.Solve(context.Background(), p, nil)
	require.ErrorIs(t, err, ilp.ErrInfeasible)
	assert.Equal(t, ilp.Infeasible, sol.Status)
	assert.Nil(t, sol.Assignment)

	p = hostileBase()
	p.Jobs[0].Options[0].GPUs = math.MaxInt
	p.Jobs[0].Pin = 0
	_, err = ilp.Solve(context.Background(), p, nil)
	require.ErrorIs(t, err, ilp.ErrInfeasible)

	p = hostileBase()
	p.Jobs[0].Pin = 1
	p.Quotas = []ilp.Quota{{Name: "tenant", Type: "b", Jobs: []int{0}, Limit: 0}}
	_, err = ilp.Solve(context.Background(), p, nil)
	require.ErrorIs(t, err, ilp.ErrInfeasible)
	assert.Contains(t, err.Error(), "tenant")
}

// TestHostileRandomGrids: small random problems on unusual grids (steps
// from 1e-6 to 1e3, negative values), exact against brute force.
func TestHostileRandomGrids(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	steps := []float64{1e-6, 0.003, 0.25, 0.7, 1, 3, 1000}
	for it := range 300 {
		p := ilptest.Small(rng, 5, false)
		step := steps[it%len(steps)]
		p.Grid = step
		for i := range p.Jobs {
			p.Jobs[i].Unallocated = float64(rng.IntN(21)-10) * step
			for k := range p.Jobs[i].Options {
				p.Jobs[i].Options[k].Value = float64(rng.IntN(41)-20) * step
			}
		}
		if it%2 == 1 {
			p.Sense = 1 - p.Sense
		}
		require.NoError(t, p.Validate())
		sol, err := ilp.Solve(context.Background(), p, nil)
		if errors.Is(err, ilp.ErrInfeasible) {
			_, _, ok := ilptest.BruteForce(p)
			require.False(t, ok, "iteration %d: infeasible but brute force found one", it)
			continue
		}
		require.NoError(t, err, "iteration %d", it)
		checkSolution(t, p, sol)
		_, want, ok := ilptest.BruteForce(p)
		require.True(t, ok)
		require.Equal(t, ilp.Optimal, sol.Status, "iteration %d", it)
		require.InDelta(t, want, sol.Objective, step/2, "iteration %d grid %v", it, step)
	}
}

func TestHostileJSON(t *testing.T) {
	const ok = `{"sense":"max","unallocated":-1,"capacity":{"a":4},"jobs":[{"id":"j","options":[{"type":"a","gpus":2,"value":1}]}]}`
	_, _, err := ilp.ParseJSON([]byte(ok))
	require.NoError(t, err)
	bad := map[string]string{
		"trailing object":       ok + `{}`,
		"trailing garbage":      ok + ` x`,
		"two documents":         ok + "\n" + ok,
		"BOM":                   "\ufeff" + ok,
		"gpus above int range":  strings.Replace(ok, `"gpus":2`, `"gpus":9223372036854775808`, 1),
		"gpus 1e3":              strings.Replace(ok, `"gpus":2`, `"gpus":1e3`, 1),
		"gpus fractional":       strings.Replace(ok, `"gpus":2`, `"gpus":2.5`, 1),
		"gpus string":           strings.Replace(ok, `"gpus":2`, `"gpus":"2"`, 1),
		"capacity above int":    strings.Replace(ok, `{"a":4}`, `{"a":1e30}`, 1),
		"capacity negative":     strings.Replace(ok, `{"a":4}`, `{"a":-4}`, 1),
		"value above float":     strings.Replace(ok, `"value":1`, `"value":1e999`, 1),
		"value NaN string":      strings.Replace(ok, `"value":1`, `"value":"NaN"`, 1),
		"value null":            strings.Replace(ok, `"value":1`, `"value":null`, 1) + "",
		"value missing":         strings.Replace(ok, `,"value":1`, ``, 1),
		"gpus missing":          strings.Replace(ok, `"gpus":2,`, ``, 1),
		"type null":             strings.Replace(ok, `"type":"a"`, `"type":null`, 1),
		"quota limit missing":   strings.Replace(ok, `"jobs":[{`, `"quotas":[{"name":"q","jobs":["j"]}],"jobs":[{`, 1),
		"quota limit null":      strings.Replace(ok, `"jobs":[{`, `"quotas":[{"name":"q","jobs":["j"],"limit":null}],"jobs":[{`, 1),
		"unallocated null":      strings.Replace(ok, `"unallocated":-1`, `"unallocated":null`, 1),
		"nested unknown key":    strings.Replace(ok, `"value":1`, `"value":1,"extra":{"deep":[1]}`, 1),
		"unknown key in job":    strings.Replace(ok, `"id":"j"`, `"id":"j","pinned":true`, 1),
		"wrong case in option":  strings.Replace(ok, `"gpus":2`, `"GPUs":2`, 1),
		"wrong case in job":     strings.Replace(ok, `"id":"j"`, `"ID":"j"`, 1),
		"wrong case top":        strings.Replace(ok, `"sense"`, `"Sense"`, 1),
		"duplicate in option":   strings.Replace(ok, `"gpus":2`, `"gpus":2,"gpus":1`, 1),
		"duplicate in capacity": strings.Replace(ok, `{"a":4}`, `{"a":4,"a":400}`, 1),
		"duplicate jobs key":    strings.Replace(ok, `"jobs":`, `"jobs":[],"jobs":`, 1),
		"duplicate in quota":    strings.Replace(ok, `"jobs":[{`, `"quotas":[{"name":"q","jobs":["j"],"limit":1,"limit":9}],"jobs":[{`, 1),
		"wrong case in quota":   strings.Replace(ok, `"jobs":[{`, `"quotas":[{"name":"q","Jobs":["j"],"limit":1}],"jobs":[{`, 1),
		"quota unknown job":     strings.Replace(ok, `"jobs":[{`, `"quotas":[{"name":"q","jobs":["J"],"limit":1}],"jobs":[{`, 1),
		"pin out of range":      strings.Replace(ok, `"id":"j"`, `"id":"j","pin":5`, 1),
		"pin huge":              strings.Replace(ok, `"id":"j"`, `"id":"j","pin":99999999999999999999`, 1),
		"grid negative":         strings.Replace(ok, `"sense"`, `"grid":-0.01,"sense"`, 1),
		"grid off values":       strings.Replace(ok, `"sense"`, `"grid":0.3,"sense"`, 1),
		"top level array":       `[` + ok + `]`,
		"empty":                 ``,
		"whitespace only":       " \n\t ",
		"null":                  `null`,
		"deep nesting":          strings.Replace(ok, `"value":1`, `"value":1,"x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000), 1),
		"optimum Inf string":    strings.Replace(ok, `"sense"`, `"optimum":1e400,"sense"`, 1),
	}
	for name, in := range bad {
		t.Run(name, func(t *testing.T) {
			p, _, err := ilp.ParseJSON([]byte(in))
			require.Error(t, err, "accepted: %+v", p)
			require.ErrorIs(t, err, ilp.ErrInvalidInput)
		})
	}
	// CRLF line ends and a trailing newline are fine.
	_, _, err = ilp.ParseJSON([]byte(strings.ReplaceAll(`{"sense":"max",
"unallocated":-1,"capacity":{"a":4},
"jobs":[]}`, "\n", "\r\n") + "\r\n"))
	require.NoError(t, err)
}

// TestHostileToleranceBound: with a Settings.Tolerance the answer is
// accepted as optimal within it, but Bound stays a proven bound: no
// assignment (brute force) is better than it, and it is within Tolerance
// of Objective.
func TestHostileToleranceBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for it := range 200 {
		p := ilptest.Small(rng, 6, false)
		_, want, ok := ilptest.BruteForce(p)
		for k, tol := range []float64{1e-12, 0.5, 10, 1e300, 1e-12, 0.5, 10, 1e300} {
			sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{Tolerance: tol, MaxNodes: k / 4 * (1 + it%3)})
			if !ok {
				require.ErrorIs(t, err, ilp.ErrInfeasible)
				continue
			}
			require.NoError(t, err)
			slack := 1e-9 * max(1, math.Abs(want))
			if p.Sense == ilp.Maximize {
				require.GreaterOrEqual(t, sol.Bound+slack, want, "iteration %d tolerance %v: %+v", it, tol, sol)
				require.GreaterOrEqual(t, sol.Bound, sol.Objective)
			} else {
				require.LessOrEqual(t, sol.Bound-slack, want, "iteration %d tolerance %v: %+v", it, tol, sol)
				require.LessOrEqual(t, sol.Bound, sol.Objective)
			}
			if sol.Status == ilp.Optimal {
				require.LessOrEqual(t, math.Abs(sol.Bound-sol.Objective), tol+slack)
				require.LessOrEqual(t, math.Abs(want-sol.Objective), tol+slack)
			}
		}
	}
}

// TestHostileDeterministic: a problem of many types (map iteration over
// Capacity and Reserved) gives the same Solution, JSON and LP text on every
// call.
func TestHostileDeterministic(t *testing.T) {
	p := ilptest.Hard(ilptest.HardConfig{Jobs: 40, GPUs: 120, Types: 8, Seed: 77, Power: 0.5, Quotas: true})
	p.Reserved = map[string]int{}
	for ty, c := range p.Capacity {
		p.Reserved[ty] = c / 7
	}
	first, err := ilp.Solve(context.Background(), p, &ilp.Settings{MaxNodes: 30})
	require.NoError(t, err)
	var js, lp strings.Builder
	require.NoError(t, ilp.WriteJSON(&js, p, ilp.Meta{Name: "x"}))
	require.NoError(t, ilp.WriteLP(&lp, p))
	for range 10 {
		sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{MaxNodes: 30})
		require.NoError(t, err)
		require.Equal(t, first, sol)
		var js2, lp2 strings.Builder
		require.NoError(t, ilp.WriteJSON(&js2, p, ilp.Meta{Name: "x"}))
		require.NoError(t, ilp.WriteLP(&lp2, p))
		require.Equal(t, js.String(), js2.String())
		require.Equal(t, lp.String(), lp2.String())
	}
}
