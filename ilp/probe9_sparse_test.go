package ilp

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProbe9SparseRowBound: rowBound's program on the table's breakpoints
// (rowBoundSparse, which rowBound takes from sparseMinCap units on) gives
// the dense table's bound to the bit, on every type row and the aggregate
// row, at the dual's multipliers and at random ones, with and without an
// allowed list.
func TestProbe9SparseRowBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	compared := 0
	for it := 0; it < 800; it++ {
		m, sr, free := twinSearch(t, rng, it)
		lam := twinMultipliers(rng, m, sr, free, it)
		var allowed [][]cand
		if it%4 == 3 {
			allowed = make([][]cand, len(free))
			for k, i := range free {
				allowed[k] = append(allowed[k], cand{o: -1})
				for oi := range m.jobs[i].opts {
					if rng.IntN(2) == 0 {
						allowed[k] = append(allowed[k], cand{o: oi})
					}
				}
			}
		}
		for _, t0 := range append(sr.keptRows(lam), 0) {
			capv, lx := sr.keptRow(m.cap, lam, t0)
			want := sr.rowBound(free, capv, lx, t0, allowed)
			u := sr.rowUnit(free, t0)
			C := scaleCap(capv[t0], u)
			if C < 0 {
				continue
			}
			base := 0.0
			for r := range capv {
				if r != t0 {
					base += lx[r] * float64(capv[r])
				}
			}
			got, ok := sr.rowBoundSparse(free, lx, t0, allowed, C, u, base, dpMaxCells)
			require.True(t, ok)
			require.Equal(t, want, got, "instance %d row %d", it, t0)
			compared++
		}
	}
	require.Greater(t, compared, 1000)
}

// twinSearch is the twin tests' instance it: a random core problem's model
// (validated), a search on it without a deadline, and its jobs.
func twinSearch(t *testing.T, rng *rand.Rand, it int) (*model, *search, []int32) {
	p := randomCoreProblem(rng, it%2 == 0)
	require.NoError(t, p.Validate())
	m := newModel(p)
	return m, newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{}), m.allJobs()
}

// twinMultipliers is the dual's multipliers at the jobs free, or random
// ones for every third instance.
func twinMultipliers(rng *rand.Rand, m *model, sr *search, free []int32, it int) []float64 {
	lam, _ := m.minimizeDual(free, m.cap, nil, sr.dualTol, 300)
	if it%3 == 1 {
		for r := range lam {
			lam[r] = rng.Float64()
		}
	}
	return lam
}
