package ilp_test

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

// cliffBase9 is a problem with small GPU counts (1-4 per option): 3-7 jobs
// (brute force) or 10-17 jobs with quotas over types, MinGPUs thresholds,
// listed jobs, pins and reservations (the shapes whose exact search took
// several nodes when every count was a multiple of 1,000,003).
func cliffBase9(rng *rand.Rand, big bool) *ilp.Problem {
	if !big {
		return ilptest.Small(rng, 7, rng.IntN(2) == 0)
	}
	p := &ilp.Problem{Sense: ilp.Sense(rng.IntN(2)), Capacity: map[string]int{}, Reserved: map[string]int{}}
	ts := []string{"t0", "t1", "t2"}[:2+rng.IntN(2)]
	for _, t := range ts {
		p.Capacity[t] = 4 + rng.IntN(9)
		if rng.IntN(4) == 0 {
			p.Reserved[t] = rng.IntN(p.Capacity[t] + 1)
		}
	}
	used := map[string]int{}
	n := 10 + rng.IntN(16)
	for i := 0; i < n; i++ {
		j := ilp.Job{ID: fmt.Sprint("j", i), Pin: -1}
		if rng.IntN(2) == 0 {
			j.Unallocated = math.Round((rng.Float64()*4-1)*100) / 100
		}
		for k := rng.IntN(5); k > 0; k-- {
			j.Options = append(j.Options, ilp.Option{Type: ts[rng.IntN(len(ts))], GPUs: 1 + rng.IntN(4), Value: math.Round((rng.Float64()*4-1)*100) / 100})
		}
		if len(j.Options) > 0 && rng.IntN(8) == 0 {
			k := rng.IntN(len(j.Options))
			if o := j.Options[k]; used[o.Type]+o.GPUs <= p.Capacity[o.Type]-p.Reserved[o.Type] {
				used[o.Type] += o.GPUs
				j.Pin = k
			}
		}
		p.Jobs = append(p.Jobs, j)
	}
	for q := rng.IntN(3); q > 0; q-- {
		qu := ilp.Quota{Name: fmt.Sprint("q", q), MinGPUs: rng.IntN(3), Limit: rng.IntN(10)}
		switch rng.IntN(3) {
		case 0:
			qu.AllJobs = true
		case 1:
			qu.Type = ts[rng.IntN(len(ts))]
			qu.AllJobs = true
		default:
			qu.Types = ts[:2]
			for i := range p.Jobs {
				if rng.IntN(2) == 0 {
					qu.Jobs = append(qu.Jobs, i)
				}
			}
		}
		p.Quotas = append(p.Quotas, qu)
	}
	return p
}

// timesUnit9 multiplies every GPU count of p (options, capacities,
// reservations, quota limits and thresholds) by u, and adds less than a
// unit to capacities and limits when ragged: the feasible assignments are
// p's (a count of k·u fits a capacity of c·u + r < (c+1)·u exactly when k
// fits c; an option of k·u reaches a threshold of m·u − r exactly when k
// reaches m).
func timesUnit9(p *ilp.Problem, u int, ragged bool, rng *rand.Rand) *ilp.Problem {
	q := cloneProblem7(p)
	extra := func() int {
		if ragged {
			return rng.IntN(u)
		}
		return 0
	}
	for t, c := range q.Capacity {
		q.Capacity[t] = c*u + extra()
		q.Reserved[t] *= u // (Capacity − Reserved keeps its whole units)
	}
	for i := range q.Jobs {
		for k := range q.Jobs[i].Options {
			q.Jobs[i].Options[k].GPUs *= u
		}
	}
	for i := range q.Quotas {
		q.Quotas[i].Limit = q.Quotas[i].Limit*u + extra()
		if m := q.Quotas[i].MinGPUs; m > 0 {
			q.Quotas[i].MinGPUs = m*u - extra()
		}
	}
	return q
}

// allocated9 returns the bytes of heap f allocates.
func allocated9(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestProbe9CapacityCliff: the exact search's cost does not depend on the
// magnitude of the GPU counts. With every count a multiple of 1,000,003
// (or 10^9+7, 2^40, up to a ragged remainder on the capacities and
// limits), a solve without a deadline explores the nodes the problem with
// the counts divided explores, allocates about what it allocates (a measure of the work
// within the nodes), and returns its optimum (the brute force's
// on small sizes). Before, 11-17 jobs took 1-2 s each, with 5-11 nodes
// where the divided problem needed 1: the knapsack programs' tables were
// indexed by GPU (up to 2^23 cells each, at every node) and the dual's
// cutting planes worked at multipliers 10^6 times smaller than usual.
func TestProbe9CapacityCliff(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	units := []int{1_000_003, 1_000_000_007, 1 << 40, 6}
	solved, multi := 0, 0
	for it := 0; it < 160; it++ {
		big := it%2 == 1
		p := cliffBase9(rng, big)
		if p.Validate() != nil {
			continue
		}
		var small ilp.Solution
		var err error
		smallBytes := allocated9(func() { small, err = ilp.Solve(context.Background(), p, nil) })
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, small.Status)
		want := small.Objective
		if !big {
			_, bf, ok := ilptest.BruteForce(p)
			require.True(t, ok)
			require.InDelta(t, bf, want, 1e-9)
		}
		u := units[it/2%len(units)]
		ragged := it%3 != 0
		q := timesUnit9(p, u, ragged, rng)
		require.NoError(t, q.Validate(), "it %d ×%d", it, u)
		var sol ilp.Solution
		bytes := allocated9(func() { sol, err = ilp.Solve(context.Background(), q, nil) })
		require.NoError(t, err, "it %d ×%d", it, u)
		require.Equal(t, ilp.Optimal, sol.Status, "it %d ×%d", it, u)
		require.NoError(t, q.Check(sol.Assignment))
		assert.InDelta(t, want, sol.Objective, 1e-9, "it %d ×%d ragged %v", it, u, ragged)
		assert.LessOrEqual(t, sol.Nodes, small.Nodes, "it %d ×%d ragged %v: nodes of the scaled problem against the divided one's", it, u, ragged)
		// the memory the solve allocates, as a measure of its work within
		// the nodes: knapsack tables indexed by GPU were megabytes each
		assert.LessOrEqual(t, bytes, 2*smallBytes+64<<10, "it %d ×%d ragged %v: bytes allocated by the scaled problem against the divided one's", it, u, ragged)
		solved++
		if small.Nodes > 1 {
			multi++
		}
	}
	t.Logf("%d scaled problems solved, %d with more than one node", solved, multi)
	assert.Greater(t, solved, 120)
}

// TestProbe9MixedMagnitudes: GPU counts of very different magnitudes in
// one problem (one type counted in units of 10^6+3 or 2^40, the others in
// GPUs; a quota over every type mixes both), so that no common factor
// divides them. Every solve without a deadline is Optimal at the brute
// force's optimum; under a MaxNodes limit or an expired deadline the
// answer is feasible, no worse than a feasible warm start, and its Bound
// is not beaten by the optimum. (Their cost against the same problem in
// small counts: TestMag10MixedMagnitudesCost.)
func TestProbe9MixedMagnitudes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	solved := 0
	for it := 0; it < 120; it++ {
		p := ilptest.Small(rng, 7, rng.IntN(2) == 0)
		if len(p.Capacity) < 2 || p.Validate() != nil {
			continue
		}
		u := []int{1_000_003, 1 << 40}[it%2]
		q := cloneProblem7(p)
		q.Capacity["a"] *= u
		q.Reserved["a"] *= u
		for i := range q.Jobs {
			for k := range q.Jobs[i].Options {
				if q.Jobs[i].Options[k].Type == "a" {
					q.Jobs[i].Options[k].GPUs *= u
				}
			}
		}
		if rng.IntN(2) == 0 {
			q.Quotas = append(q.Quotas, ilp.Quota{Name: "mixed", AllJobs: true, Limit: rng.IntN(3)*u + rng.IntN(9)})
		}
		if q.Validate() != nil {
			continue
		}
		want, opt, ok := ilptest.BruteForce(q)
		require.True(t, ok)
		_, noise, better := twinCompare7(q)
		sol, err := ilp.Solve(context.Background(), q, nil)
		require.NoError(t, err, "it %d", it)
		require.Equal(t, ilp.Optimal, sol.Status, "it %d", it)
		require.NoError(t, q.Check(sol.Assignment))
		require.InDelta(t, opt, sol.Objective, noise+1e-9, "it %d ×%d", it, u)
		warm := dropSome7(q, want, rng, 2)
		warmObj := q.Objective(warm)
		for _, s := range []*ilp.Settings{{MaxNodes: 1, WarmStart: warm}, {TimeLimit: time.Nanosecond, WarmStart: warm}, {TimeLimit: time.Millisecond}} {
			sol, err := ilp.Solve(context.Background(), q, s)
			require.NoError(t, err, "it %d", it)
			require.NoError(t, q.Check(sol.Assignment), "it %d", it)
			if s.WarmStart != nil {
				assert.False(t, better(warmObj, sol.Objective, noise), "it %d: %v worse than the warm start's %v", it, sol.Objective, warmObj)
			}
			assert.False(t, better(opt, sol.Bound, noise), "it %d: bound %v beaten by the optimum %v", it, sol.Bound, opt)
			if sol.Status == ilp.Optimal {
				assert.InDelta(t, opt, sol.Objective, noise+1e-9, "it %d", it)
			}
		}
		solved++
	}
	assert.Greater(t, solved, 60)
}
