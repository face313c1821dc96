package ilp

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// withKnapsack runs f with improveByType, mckp and forcedBounds on their
// tables (sparse false) or on their breakpoints whatever the capacity and
// the points' number (sparse true).
func withKnapsack(sparse bool, f func()) {
	min0, unl0 := knapSparseMin, sparseUnlimited
	defer func() { knapSparseMin, sparseUnlimited = min0, unl0 }()
	if sparse {
		knapSparseMin, sparseUnlimited = 0, true
	} else {
		knapSparseMin = math.MaxInt
	}
	f()
}

// TestMag10SparseMckpTwin: mckp on breakpoints picks what the table picks,
// item for item (ties included: gains repeat and sizes collide), on
// random groups, units and capacities.
func TestMag10SparseMckpTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 1))
	m := newModel(randomCoreProblem(rng, true))
	sr := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{})
	for it := 0; it < 2000; it++ {
		unit := []int{1, 1, 3, 7}[it%4]
		groups := make([][]mcItem, rng.IntN(9))
		for k := range groups {
			for n := rng.IntN(5); n > 0; n-- {
				gain := math.Round((rng.Float64()*3-0.5)*4) / 4 // (many ties)
				groups[k] = append(groups[k], mcItem{g: unit * (1 + rng.IntN(12)), gain: gain, opt: n})
			}
		}
		C := rng.IntN(40 * unit)
		var dense, sparse []int
		withKnapsack(false, func() { dense = sr.mckp(groups, C) })
		withKnapsack(true, func() { sparse = sr.mckp(groups, C) })
		require.Equal(t, dense, sparse, "it %d C %d groups %v", it, C, groups)
	}
}

// TestMag10SparseForcedTwin: forcedBounds on breakpoints gives the tables'
// bounds to the bit, on every kept row and row 0, at the dual's and at
// random multipliers, with random allowed lists.
func TestMag10SparseForcedTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 2))
	compared := 0
	for it := 0; it < 600; it++ {
		m, sr, free := twinSearch(t, rng, it)
		lam := twinMultipliers(rng, m, sr, free, it)
		allowed := make([][]cand, len(free))
		for k, i := range free {
			allowed[k] = append(allowed[k], cand{o: -1})
			for oi := range m.jobs[i].opts {
				if it%4 != 3 || rng.IntN(2) == 0 {
					allowed[k] = append(allowed[k], cand{o: oi})
				}
			}
		}
		for _, t0 := range append(sr.keptRows(lam), 0) {
			capv, lx := sr.keptRow(m.cap, lam, t0)
			var dense, sparse [][]float64
			withKnapsack(false, func() { dense = sr.forcedBounds(free, capv, lx, t0, allowed) })
			withKnapsack(true, func() { sparse = sr.forcedBounds(free, capv, lx, t0, allowed) })
			require.Equal(t, dense, sparse, "instance %d row %d", it, t0)
			compared++
		}
	}
	require.Greater(t, compared, 800)
}

// TestMag10SparseSolveTwin: whole solves with every knapsack program of
// improveByType, mckp (seqDP, aggregateChoice) and forcedBounds on
// breakpoints return the tables' solutions to the bit (assignment,
// objective, bound, nodes), with and without a node limit.
func TestMag10SparseSolveTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 3))
	for it := 0; it < 400; it++ {
		p := randomCoreProblem(rng, it%2 == 0)
		require.NoError(t, p.Validate())
		s := &Settings{}
		if it%5 == 4 {
			s.MaxNodes = 1
		}
		var dense, sparse Solution
		var errD, errS error
		withKnapsack(false, func() { dense, errD = Solve(context.Background(), p, s) })
		withKnapsack(true, func() { sparse, errS = Solve(context.Background(), p, s) })
		require.NoError(t, errD)
		require.NoError(t, errS)
		require.Equal(t, dense, sparse, "instance %d", it)
	}
}

// TestMag10SparseImproveTwin: improveByType on breakpoints takes the
// tables' steps, choice for choice, from random starting choices (which
// may break the rows: repaired), with one to three sweeps.
func TestMag10SparseImproveTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 5))
	steps := 0
	for it := 0; it < 1500; it++ {
		m, sr, free := twinSearch(t, rng, it)
		start := make([]int, len(free))
		for k, i := range free {
			start[k] = rng.IntN(len(m.jobs[i].opts)+1) - 1
		}
		repair := it%3 == 0
		sweeps := 1 + rng.IntN(3)
		dense, sparse := append([]int(nil), start...), append([]int(nil), start...)
		var okD, okS bool
		withKnapsack(false, func() { okD = sr.improveByType(free, m.cap, dense, sweeps, repair) })
		withKnapsack(true, func() { okS = sr.improveByType(free, m.cap, sparse, sweeps, repair) })
		require.Equal(t, okD, okS, "instance %d", it)
		require.Equal(t, dense, sparse, "instance %d from %v", it, start)
		if !slices.Equal(dense, start) {
			steps++
		}
	}
	require.Greater(t, steps, 300)
}
