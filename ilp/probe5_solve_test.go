package ilp_test

// Probes of ilp's exported API with settings at their limits (tolerances
// from the smallest subnormal to MaxFloat64, grids at the ends of float64,
// MaxNodes with TimeLimit and an expired ctx, warm starts out of range), on
// capacities far larger than the options (up to MaxGPUs), and of the
// solver's answers against each other on problems too large for brute
// force (the same problem with its jobs and options shuffled).

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// limitSettings draws settings at the edges of their ranges.
func limitSettings(rng *rand.Rand, n int) (*ilp.Settings, float64) {
	s := &ilp.Settings{}
	tol := []float64{0, 0, math.SmallestNonzeroFloat64, 1e-320, 1e-9, 1, math.MaxFloat64, math.MaxFloat64 / 2}[rng.IntN(8)]
	s.Tolerance = tol
	s.MaxNodes = []int{0, 0, 1, 2, 7, math.MaxInt}[rng.IntN(6)]
	s.TimeLimit = []time.Duration{0, 0, 0, 1, time.Microsecond, time.Millisecond, math.MaxInt64}[rng.IntN(7)]
	switch rng.IntN(4) {
	case 1: // out of range entries: ignored
		s.WarmStart = make([]int, n)
		for i := range s.WarmStart {
			s.WarmStart[i] = []int{math.MinInt, -2, 1 << 30, math.MaxInt}[rng.IntN(4)]
		}
	case 2: // the wrong length: ignored
		s.WarmStart = make([]int, n+1+rng.IntN(3))
	case 3: // all unallocated
		s.WarmStart = make([]int, n)
		for i := range s.WarmStart {
			s.WarmStart[i] = -1
		}
	}
	return s, tol
}

// limitProblem is ilptest.Small with, in some draws, capacities (and
// quota limits) multiplied far beyond the options' GPUs, values on a grid at
// an end of float64, or every value equal.
func limitProblem(rng *rand.Rand) (*ilp.Problem, string) {
	p := ilptest.Small(rng, 6, rng.IntN(3) == 0)
	desc := "small"
	switch rng.IntN(6) {
	case 0, 1: // huge capacities, tiny options
		k := []int{1 << 20, 1e9 + 7, 1 << 40, ilp.MaxGPUs / 32}[rng.IntN(4)]
		for t := range p.Capacity {
			if rng.IntN(3) > 0 {
				p.Capacity[t] = p.Capacity[t]*k + rng.IntN(3)
			}
		}
		for q := range p.Quotas {
			if rng.IntN(2) == 0 {
				p.Quotas[q].Limit = p.Quotas[q].Limit*k + rng.IntN(2)
			}
		}
		desc = fmt.Sprintf("capacities ×%d", k)
	case 2: // a grid of subnormal or tiny steps
		g := []float64{math.SmallestNonzeroFloat64, 1e-310, 0x1p-1000}[rng.IntN(3)]
		p.Grid = g
		for i := range p.Jobs {
			p.Jobs[i].Unallocated = float64(rng.IntN(5)-2) * g
			for k := range p.Jobs[i].Options {
				p.Jobs[i].Options[k].Value = float64(rng.IntN(9)-4) * g
			}
		}
		desc = fmt.Sprintf("grid %g", g)
	case 3: // every value equal, ties everywhere
		v := float64(rng.IntN(3) - 1)
		for i := range p.Jobs {
			p.Jobs[i].Unallocated = v
			for k := range p.Jobs[i].Options {
				p.Jobs[i].Options[k].Value = v
			}
		}
		desc = "equal values"
	}
	return p, desc
}

// TestProbe5SettingsAtLimits: on small problems with settings at their
// limits and capacities up to MaxGPUs, every answer is feasible, its Bound
// is a true bound, an Optimal one is the brute-force optimum within the
// tolerance (or grid step), a finished solve (Optimal, or stopped by
// MaxNodes) is the same answer twice, and each solve allocates within a
// bound that does not grow with the capacities.
func TestProbe5SettingsAtLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 5))
	n := 1500
	if testing.Short() || raceEnabled {
		n = 300
	}
	var ms runtime.MemStats
	var maxAlloc uint64
	worst := ""
	optimal := 0
	for it := 0; it < n; it++ {
		p, desc := limitProblem(rng)
		require.NoError(t, p.Validate(), desc)
		s, tol := limitSettings(rng, len(p.Jobs))
		ctx := context.Background()
		var cancel context.CancelFunc = func() {}
		if rng.IntN(10) == 0 {
			ctx, cancel = context.WithDeadline(ctx, time.Unix(0, 0))
		}
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		sol, err := ilp.Solve(ctx, p, s)
		runtime.ReadMemStats(&ms)
		cancel()
		name := fmt.Sprintf("it %d (%s, settings %+v)", it, desc, *s)
		if a := ms.TotalAlloc - before; a > maxAlloc {
			maxAlloc, worst = a, fmt.Sprintf("%s: %v, %d jobs, capacity %v", name, sol.Status, len(p.Jobs), p.Capacity)
		}
		require.NoError(t, err, name)
		require.NoError(t, p.Check(sol.Assignment), name)
		require.Equal(t, p.Objective(sol.Assignment), sol.Objective, name)
		require.False(t, math.IsNaN(sol.Bound), name)
		_, want, ok := ilptest.BruteForce(p)
		require.True(t, ok, name)
		better := func(a, b, by float64) bool {
			if p.Sense == ilp.Maximize {
				return a > b+by
			}
			return a < b-by
		}
		noise := 2e-12 * float64(len(p.Jobs)+1) * 4 // |values| ≤ 3 or on a tiny grid
		assert.False(t, better(want, sol.Bound, noise+1e-9), "%s: %v bound %v excludes the optimum %v", name, sol.Status, sol.Bound, want)
		if sol.Status == ilp.Optimal {
			optimal++
			allow := 1e-9 * 3
			switch {
			case p.Grid > 0:
				allow = p.Grid
			case tol > 0:
				allow = tol
			}
			assert.False(t, better(want, sol.Objective, allow+noise), "%s: optimal %v but brute force %v", name, sol.Objective, want)
			if s.TimeLimit == 0 && ctx.Err() == nil {
				again, err := ilp.Solve(context.Background(), p, s)
				require.NoError(t, err)
				assert.Equal(t, sol, again, "%s: not deterministic", name)
			}
		}
	}
	t.Logf("%d instances, %d optimal, largest allocation of a solve %d bytes (%s)", n, optimal, maxAlloc, worst)
	assert.Greater(t, optimal, n/4)
}

// TestProbe5ShuffledAgree: the same problem with its jobs and each job's
// options shuffled (quotas and pins remapped) is the same problem. On
// problems of 20–60 jobs, too large for brute force, each solve's Bound
// must admit the other's feasible objective, and two Optimal answers agree
// within the tolerance.
func TestProbe5ShuffledAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(56, 5))
	n := 200
	if testing.Short() || raceEnabled {
		n = 40
	}
	both := 0
	for it := 0; it < n; it++ {
		p := ilptest.Small(rng, 20+rng.IntN(41), rng.IntN(2) == 0)
		for t := range p.Capacity {
			p.Capacity[t] *= 1 + rng.IntN(6)
		}
		q := shuffled(rng, p)
		require.NoError(t, p.Validate())
		require.NoError(t, q.Validate())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		a, err := ilp.Solve(ctx, p, nil)
		require.NoError(t, err)
		b, err := ilp.Solve(ctx, q, nil)
		require.NoError(t, err)
		cancel()
		require.NoError(t, p.Check(a.Assignment))
		require.NoError(t, q.Check(b.Assignment))
		scale := 3.0
		allow := 1e-9*scale + 2e-12*scale*float64(len(p.Jobs)+1)
		if p.Grid > 0 {
			allow = p.Grid
		}
		excludes := func(bound, obj float64) bool {
			if p.Sense == ilp.Maximize {
				return obj > bound+allow
			}
			return obj < bound-allow
		}
		name := fmt.Sprintf("it %d: %d jobs, %v %v/%v and %v %v/%v", it, len(p.Jobs), a.Status, a.Objective, a.Bound, b.Status, b.Objective, b.Bound)
		assert.False(t, excludes(a.Bound, b.Objective), "%s: the first bound excludes the shuffled answer", name)
		assert.False(t, excludes(b.Bound, a.Objective), "%s: the shuffled bound excludes the first answer", name)
		if a.Status == ilp.Optimal && b.Status == ilp.Optimal {
			both++
			assert.InDelta(t, a.Objective, b.Objective, allow, name)
		}
	}
	t.Logf("%d pairs, %d both optimal", n, both)
	assert.Greater(t, both, n/2)
}

// shuffled returns p with its jobs and each job's options permuted, pins
// and quota members remapped.
func shuffled(rng *rand.Rand, p *ilp.Problem) *ilp.Problem {
	q := &ilp.Problem{Sense: p.Sense, Capacity: p.Capacity, Reserved: p.Reserved, Grid: p.Grid}
	perm := rng.Perm(len(p.Jobs)) // new position i holds old job perm[i]
	where := make([]int, len(p.Jobs))
	for i, old := range perm {
		where[old] = i
		j := p.Jobs[old]
		nj := ilp.Job{ID: j.ID, Unallocated: j.Unallocated, Pin: -1}
		op := rng.Perm(len(j.Options))
		for k, oldk := range op {
			nj.Options = append(nj.Options, j.Options[oldk])
			if j.Pin == oldk {
				nj.Pin = k
			}
		}
		q.Jobs = append(q.Jobs, nj)
	}
	for _, qu := range p.Quotas {
		nq := qu
		nq.Jobs = nil
		for _, m := range qu.Jobs {
			nq.Jobs = append(nq.Jobs, where[m])
		}
		q.Quotas = append(q.Quotas, nq)
	}
	return q
}

// TestProbe5CapacityBeyondDemand: a six-job problem whose options use at
// most 18 GPUs of type b, and a quota of 4 GPUs of b over every job,
// allocated in proportion to b's capacity up to the knapsack tables' cap
// (dpMaxCells): 140 kB at 24 GPUs, 4.5 MB at 2^16, 71 MB at 2^20, 285 MB
// (1.2 s) at 2^22, then 23 kB past the cap at 2^24. GPUs no job can use
// cannot change the answer: the model's rows are capped at the sum of the
// jobs' largest options (capToDemand) before anything is sized by them.
func TestProbe5CapacityBeyondDemand(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 2, "b": 0}, Jobs: []ilp.Job{
		{ID: "s0", Pin: -1, Unallocated: 0.53, Options: []ilp.Option{{Type: "b", GPUs: 4, Value: 0.57}, {Type: "b", GPUs: 3, Value: 1.62}}},
		{ID: "s1", Pin: -1, Unallocated: -0.53, Options: []ilp.Option{{Type: "b", GPUs: 3, Value: -0.98}}},
		{ID: "s2", Pin: -1, Unallocated: 0.31, Options: []ilp.Option{{Type: "a", GPUs: 4, Value: 2.80}, {Type: "b", GPUs: 4, Value: 2.91}, {Type: "a", GPUs: 2, Value: 2.07}}},
		{ID: "s3", Pin: -1, Unallocated: 1.57},
		{ID: "s4", Pin: -1, Unallocated: 2.89, Options: []ilp.Option{{Type: "b", GPUs: 3, Value: 0.2}, {Type: "a", GPUs: 1, Value: 1.58}, {Type: "a", GPUs: 4, Value: -0.41}, {Type: "b", GPUs: 4, Value: 1.73}}},
		{ID: "s5", Pin: -1, Unallocated: 0.58, Options: []ilp.Option{{Type: "b", GPUs: 2, Value: 0.97}, {Type: "a", GPUs: 4, Value: 2.19}, {Type: "b", GPUs: 2, Value: 2.99}}},
	}, Quotas: []ilp.Quota{{Name: "q2", AllJobs: true, Type: "b", Limit: 4}, {Name: "q1", Jobs: []int{3, 4, 5}, Type: "a", MinGPUs: 2}}}
	var want float64
	for i, c := range []int{24, 1 << 10, 1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 40} {
		p.Capacity["b"] = c
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		sol, err := ilp.Solve(context.Background(), p, nil)
		runtime.ReadMemStats(&ms)
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, sol.Status)
		if i == 0 {
			want = sol.Objective
		}
		assert.Equal(t, want, sol.Objective, "capacity %d", c)
		alloc := ms.TotalAlloc - before
		t.Logf("capacity %d: %d bytes allocated", c, alloc)
		assert.Less(t, alloc, uint64(1<<20), "capacity %d: a 6-job solve allocates %d bytes", c, alloc)
	}
}
