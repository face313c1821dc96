package ilp

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomCoreProblem is a small problem for the core program's tests: two or
// three types, up to seven jobs, values on a 0.01 grid when grid is set,
// sometimes a quota row (over all jobs or a group, per type or for all,
// with or without a MinGPUs threshold).
func randomCoreProblem(rng *rand.Rand, grid bool) *Problem {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{}}
	if rng.IntN(2) == 0 {
		p.Sense = Minimize
	}
	for _, t := range []string{"a", "b", "c"}[:2+rng.IntN(2)] {
		p.Capacity[t] = rng.IntN(9)
	}
	types := slices.Sorted(maps.Keys(p.Capacity))
	val := func() float64 {
		v := rng.Float64() * 3
		if grid {
			return math.Round(v*100) / 100
		}
		return v
	}
	if grid {
		p.Grid = 0.01
	}
	for i := 0; i < 1+rng.IntN(7); i++ {
		j := Job{ID: fmt.Sprint(i), Pin: -1, Unallocated: val()}
		for k := rng.IntN(5); k > 0; k-- {
			v := val()
			if rng.IntN(4) == 0 && len(j.Options) > 0 {
				v = j.Options[0].Value // exact ties, as rounded values have
			}
			j.Options = append(j.Options, Option{Type: types[rng.IntN(len(types))], GPUs: 1 << rng.IntN(3), Value: v})
		}
		p.Jobs = append(p.Jobs, j)
	}
	if rng.IntN(3) == 0 {
		q := Quota{Limit: rng.IntN(8), MinGPUs: rng.IntN(3)}
		if rng.IntN(2) == 0 {
			q.Type = types[rng.IntN(len(types))]
		}
		if rng.IntN(2) == 0 {
			q.AllJobs = true
		} else {
			for i := range p.Jobs {
				if rng.IntN(2) == 0 {
					q.Jobs = append(q.Jobs, i)
				}
			}
		}
		p.Quotas = append(p.Quotas, q)
	}
	return p
}

// enumerate returns every choice (option index or -1 per model job).
func enumerate(m *model) [][]int {
	all := [][]int{{}}
	for k := range m.jobs {
		var next [][]int
		for _, c := range all {
			for o := -1; o < len(m.jobs[k].opts); o++ {
				next = append(next, append(slices.Clone(c), o))
			}
		}
		all = next
	}
	return all
}

// TestCoreDPExact checks the exact core program against enumeration: from
// an empty, a random feasible or the runner-up incumbent, at the root's
// multipliers, it
// settles the problem and leaves the optimum as the incumbent, never an
// assignment that breaks a row.
func TestCoreDPExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for it := 0; it < 3000; it++ {
		p := randomCoreProblem(rng, it%2 == 0)
		require.NoError(t, p.Validate())
		m := newModel(p)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		free := m.allJobs()
		all := enumerate(m)
		best := math.Inf(-1)
		var feasible [][]int
		for _, c := range all {
			if sr.fitsAll(free, m.cap, c) {
				feasible = append(feasible, c)
				best = math.Max(best, sr.profit(c))
			}
		}
		sr.cur = make([]int, len(m.jobs))
		for i := range sr.cur {
			sr.cur[i] = -1
		}
		sr.offer(slices.Clone(sr.cur))
		switch it % 3 {
		case 1:
			sr.offer(feasible[rng.IntN(len(feasible))])
		case 2:
			// the runner-up: the gap is as small as it gets
			var second []int
			for _, c := range feasible {
				if pv := sr.profit(c); pv < best-1e-6 && (second == nil || pv > sr.profit(second)) {
					second = c
				}
			}
			if second != nil {
				sr.offer(second)
			}
		}
		lam, f := m.minimizeDual(free, m.cap, nil, sr.dualTol, 300)
		require.True(t, sr.coreDP(free, slices.Clone(m.cap), lam, f, coreMaxStates), "instance %d", it)
		require.True(t, sr.feasible(sr.best), "instance %d", it)
		require.InDelta(t, best, sr.bestP, 1e-9, "instance %d: %+v", it, p)
	}
}

// TestAggregateRowBound checks the aggregate row's knapsack bound: it holds
// (no feasible assignment has more profit) and is never weaker than the
// Lagrangian bound at the same multipliers; its maximiser fits the total
// capacity.
func TestAggregateRowBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	checked := 0
	for it := 0; it < 2000; it++ {
		p := randomCoreProblem(rng, false)
		require.NoError(t, p.Validate())
		m := newModel(p)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		free := m.allJobs()
		// any multipliers give valid bounds: the dual's and random ones
		lam, f := m.minimizeDual(free, m.cap, nil, sr.dualTol, 300)
		if it%2 == 1 {
			for r := range lam {
				lam[r] = rng.Float64()
			}
			f = m.dual(free, m.cap, lam, make([]float64, m.nrows))
		}
		agg := m.nrows
		if !slices.Contains(sr.keptRows(lam), agg) {
			continue
		}
		checked++
		cx, lx := sr.keptRow(m.cap, lam, agg)
		b := sr.rowBound(free, cx, lx, agg, nil)
		assert.LessOrEqual(t, b, f+1e-9, "instance %d", it)
		for _, c := range enumerate(m) {
			if sr.fitsAll(free, m.cap, c) {
				require.LessOrEqual(t, sr.profit(c), b+1e-9, "instance %d", it)
			}
		}
		choice := sr.aggregateChoice(free, m.cap, lam)
		total := 0
		for k, o := range choice {
			if o >= 0 {
				total += m.jobs[free[k]].opts[o].g
			}
		}
		require.LessOrEqual(t, total, cx[agg], "instance %d", it)
	}
	require.Greater(t, checked, 500)
}

// TestCoreIndex checks the core program's hash table against a map, across
// stages (resets) and growth.
func TestCoreIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var ix coreIndex
	for stage := 0; stage < 50; stage++ {
		ix.reset()
		want := map[coreKey]int32{}
		for i, n := 0, rng.IntN(5000); i < n; i++ {
			k := coreKey{rng.Uint64() % 97, rng.Uint64() % 89}
			v, found := ix.find(k, int32(len(want)))
			if w, ok := want[k]; ok {
				require.True(t, found)
				require.Equal(t, w, v)
			} else {
				require.False(t, found)
				want[k] = v
			}
		}
	}
}
