package ilp

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPairImprove checks the two-type program against enumeration: on
// problems with two types and no quotas, starting from all-unallocated it
// reaches the optimum; started from any feasible choice it never breaks a
// capacity nor lowers the profit.
func TestPairImprove(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 1500; it++ {
		p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": rng.IntN(9), "b": rng.IntN(9)}}
		if it%3 == 0 {
			p.Capacity["c"] = rng.IntN(5) // a third type the program leaves alone
		}
		types := slices.Sorted(maps.Keys(p.Capacity))
		for i := 0; i < 1+rng.IntN(6); i++ {
			j := Job{ID: fmt.Sprint(i), Pin: -1}
			for k := rng.IntN(5); k > 0; k-- {
				j.Options = append(j.Options, Option{Type: types[rng.IntN(len(types))], GPUs: 1 + rng.IntN(4), Value: float64(rng.IntN(100)) / 10})
			}
			p.Jobs = append(p.Jobs, j)
		}
		require.NoError(t, p.Validate())
		m := newModel(p)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		free := m.allJobs()
		ta, tb := 0, 1 // rows of "a" and "b" (types are sorted)
		// enumerate every choice of the model jobs
		bestAB, all := -1.0, enumerate(m)
		for _, c := range all {
			onAB := true
			for k, o := range c {
				if o >= 0 && !m.jobs[k].onType(o, ta) && !m.jobs[k].onType(o, tb) {
					onAB = false
				}
			}
			if onAB && sr.fitsAll(free, m.cap, c) && sr.profit(c) > bestAB {
				bestAB = sr.profit(c)
			}
		}
		none := make([]int, len(free))
		for k := range none {
			none[k] = -1
		}
		got := append([]int(nil), none...)
		improved := sr.pairImprove(free, m.cap, got, ta, tb)
		require.True(t, sr.fitsAll(free, m.cap, got), "instance %d", it)
		require.InDelta(t, bestAB, sr.profit(got), 1e-9, "instance %d", it)
		require.Equal(t, bestAB > 1e-9, improved, "instance %d", it)
		// from a random feasible start: feasible, never worse
		start := all[rng.IntN(len(all))]
		if !sr.fitsAll(free, m.cap, start) {
			continue
		}
		got = append([]int(nil), start...)
		sr.pairImprove(free, m.cap, got, ta, tb)
		require.True(t, sr.fitsAll(free, m.cap, got), "instance %d", it)
		require.GreaterOrEqual(t, sr.profit(got), sr.profit(start)-1e-9, "instance %d", it)
		for k, o := range start { // choices on the third type stay
			if o >= 0 && !m.jobs[k].onType(o, ta) && !m.jobs[k].onType(o, tb) && got[k] != o {
				require.GreaterOrEqual(t, got[k], 0, "instance %d: a job on the third type is never dropped", it)
				require.True(t, m.jobs[k].onType(got[k], ta) || m.jobs[k].onType(got[k], tb), "instance %d", it)
			}
		}
	}
}

// TestPairHeuristicQuotas runs the root two-type heuristic on random problems
// with quota rows (which its programs ignore): the incumbent stays feasible
// and never gets worse.
func TestPairHeuristicQuotas(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gains := 0
	for it := 0; it < 500; it++ {
		p := &Problem{Sense: Minimize, Capacity: map[string]int{"a": rng.IntN(12), "b": rng.IntN(12), "c": rng.IntN(12)}}
		types := slices.Sorted(maps.Keys(p.Capacity))
		for i := 0; i < 2+rng.IntN(8); i++ {
			j := Job{ID: fmt.Sprint(i), Pin: -1, Unallocated: 1}
			for k := rng.IntN(6); k > 0; k-- {
				j.Options = append(j.Options, Option{Type: types[rng.IntN(3)], GPUs: 1 + rng.IntN(6), Value: float64(rng.IntN(100)) / 100})
			}
			p.Jobs = append(p.Jobs, j)
		}
		p.Quotas = []Quota{{Name: "big", AllJobs: true, Type: types[rng.IntN(3)], MinGPUs: 1 + rng.IntN(5), Limit: rng.IntN(6)}}
		require.NoError(t, p.Validate())
		m := newModel(p)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		free := m.allJobs()
		none := make([]int, len(free))
		for k := range none {
			none[k] = -1
		}
		sr.offer(none)
		sr.cur = none
		lam := make([]float64, m.nrows)
		sr.offerFree(free, sr.greedy(free, m.cap, lam))
		before := sr.bestP
		sr.pairHeuristic(free, m.cap, lam, 1e18)
		require.True(t, sr.feasible(sr.best), "instance %d", it)
		require.GreaterOrEqual(t, sr.bestP, before, "instance %d", it)
		require.InDelta(t, sr.profit(sr.best), sr.bestP, 1e-9, "instance %d", it)
		if sr.bestP > before {
			gains++
		}
	}
	require.Positive(t, gains, "the heuristic improves some greedy incumbents")
}

// TestPairBound checks the two-row bound on small random problems with
// quotas: at random multipliers it lies between the optimum (enumerated) and
// the full Lagrangian dual value.
func TestPairBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for it := 0; it < 800; it++ {
		p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": rng.IntN(9), "b": rng.IntN(9), "c": rng.IntN(9)}}
		types := slices.Sorted(maps.Keys(p.Capacity))
		for i := 0; i < 1+rng.IntN(5); i++ {
			j := Job{ID: fmt.Sprint(i), Pin: -1}
			for k := rng.IntN(5); k > 0; k-- {
				j.Options = append(j.Options, Option{Type: types[rng.IntN(3)], GPUs: 1 + rng.IntN(4), Value: float64(rng.IntN(100)) / 10})
			}
			p.Jobs = append(p.Jobs, j)
		}
		if it%2 == 0 {
			p.Quotas = []Quota{{Name: "q", AllJobs: true, Type: types[rng.IntN(3)], MinGPUs: rng.IntN(4), Limit: rng.IntN(8)}}
		}
		require.NoError(t, p.Validate())
		m := newModel(p)
		sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
		free := m.allJobs()
		opt, all := 0.0, enumerate(m)
		for _, c := range all {
			if sr.fitsAll(free, m.cap, c) {
				opt = max(opt, sr.profit(c))
			}
		}
		lam := make([]float64, m.nrows)
		for r := range lam {
			if rng.IntN(2) == 0 {
				lam[r] = rng.Float64() * 3
			}
		}
		sg := make([]float64, m.nrows)
		dual := m.dual(free, m.cap, lam, sg)
		for _, pr := range [][2]int{{0, 1}, {0, 2}, {1, 2}} {
			b, ok := sr.pairBound(free, m.cap, lam, pr[0], pr[1])
			require.True(t, ok)
			require.GreaterOrEqual(t, b, opt-1e-9, "instance %d pair %v", it, pr)
			require.LessOrEqual(t, b, dual+1e-9, "instance %d pair %v", it, pr)
		}
		lb := sr.pairBounds(free, m.cap, lam, dual)
		require.GreaterOrEqual(t, lb, opt-1e-9, "instance %d", it)
	}
}
