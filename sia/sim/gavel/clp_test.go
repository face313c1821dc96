//go:build clp

package gavel

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// objective returns Σ T·X after checking X against the LP's constraints.
func objective(t *testing.T, T [][]float64, X [][]float64, replicas, capacity []int) float64 {
	t.Helper()
	used := make([]float64, len(capacity))
	obj := 0.0
	for i := range T {
		sum := 0.0
		for c := range capacity {
			require.GreaterOrEqual(t, X[i][c], -1e-9, "job %d type %d", i, c)
			sum += X[i][c]
			used[c] += float64(replicas[i]) * X[i][c]
			obj += T[i][c] * X[i][c]
		}
		require.LessOrEqual(t, sum, 1+1e-9, "job %d", i)
	}
	for c := range capacity {
		require.LessOrEqual(t, used[c], float64(capacity[c])+1e-6, "type %d", c)
	}
	return obj
}

// TestCLPMatchesSimplex: on random time-share LPs (some jobs larger than a
// type, some with zero throughput somewhere) CLP's optimum equals the dense
// simplex's, and both are feasible.
func TestCLPMatchesSimplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		J, C := 1+rng.IntN(40), 1+rng.IntN(4)
		capacity := make([]int, C)
		for c := range capacity {
			capacity[c] = 4 * (1 + rng.IntN(8))
		}
		T := make([][]float64, J)
		replicas := make([]int, J)
		for i := range T {
			replicas[i] = 1 << rng.IntN(6)
			T[i] = make([]float64, C)
			for c := range T[i] {
				if rng.IntN(6) > 0 {
					T[i][c] = rng.Float64() * 10
				}
			}
		}
		xs, err := Simplex(T, replicas, capacity)
		require.NoError(t, err)
		xc, err := CLP(T, replicas, capacity)
		require.NoError(t, err)
		want := objective(t, T, xs, replicas, capacity)
		got := objective(t, T, xc, replicas, capacity)
		require.InDelta(t, want, got, 1e-6*(1+want), "trial %d (%d jobs, %d types)", trial, J, C)
	}
}
