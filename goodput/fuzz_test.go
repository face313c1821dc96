package goodput

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzBestHybrid checks the hybrid-parallel (pipeline) search: no panic, and
// a feasible answer has a positive global batch of MicroBatches·replicas
// within MaxBatch (no overflow) and a goodput that is a number ≥ 0.
func FuzzBestHybrid(f *testing.F) {
	f.Add(0.1, 0.01, 0.3, 0.02, 2.0, 1.0, 1.0, 48, 384, 4, 48, 2, 8)
	f.Add(0.0, 1e-3, 1e-8, 1e-8, 1.0, 0.0, 0.0, 1, MaxBatchSize, 2, MaxBatchSize, 1, 1)
	f.Add(0.1, 0.01, 0.3, 0.02, 2.0, 1.0, 1.0, 1, MaxBatchSize, 2, math.MaxInt/2, 1, math.MaxInt)
	f.Add(0.1, 0.01, 0.3, 0.02, 2.0, 1.0, 1.0, 4, 64, 4, 4, 2, 1)           // one pipeline over 2 nodes
	f.Add(0.1, 0.01, 0.3, 0.02, 2.0, 1.0, 1.0, 4, 64, 4, 4, math.MaxInt, 2) // nodes no pipelines cover
	f.Fuzz(func(t *testing.T, ac, bc, an, bn, g, sqr, vr float64, m0, mmax, stages, micro, nodes, replicas int) {
		m := Model{Params: Params{AlphaC: ac, BetaC: bc, AlphaN: an, BetaN: bn, AlphaR: an, BetaR: bn, Gamma: g},
			Grad: GradStats{sqr, vr}, InitBatch: m0, MaxBatch: mmax, Stages: stages, MicroBatches: micro}
		c, ok := m.Best(nodes, replicas)
		if !ok {
			return
		}
		require.NoError(t, m.Validate())
		require.True(t, CoversNodes(nodes, replicas, stages), "%d pipelines of %d stages cannot span %d nodes", replicas, stages, nodes)
		var s Searcher
		c2, ok2 := s.Best(&m, nodes, replicas)
		require.True(t, ok2)
		require.Equal(t, c, c2)
		require.Equal(t, micro*replicas, c.GlobalBatch)
		require.Greater(t, c.GlobalBatch, 0)
		require.LessOrEqual(t, c.GlobalBatch, mmax)
		require.Equal(t, micro-1, c.AccumSteps)
		require.False(t, math.IsNaN(c.Goodput))
		require.GreaterOrEqual(t, c.Goodput, 0.0)
	})
}

// FuzzLoss checks that Loss never panics, rejects bad data with
// ErrInvalidInput and otherwise returns a number ≥ 0 (the loss is a sum of
// RMSEs and non-negative penalties) that does not depend on the order of the
// observations.
func FuzzLoss(f *testing.F) {
	f.Add(1, 1, 8, 0.5, 0.01, 2, 8, 16, 0.9, 0.3, 0.1, 0.01, 0.3, 0.02, 2.0)
	f.Add(1, 1, 1, 1e-300, 0.0, 1, 1, 1, 1e300, 0.0, 0.0, 1e-8, 1e-8, 1e-8, 1.0)
	f.Fuzz(func(t *testing.T, n1, r1, b1 int, st1, sy1 float64, n2, r2, b2 int, st2, sy2 float64, ac, bc, an, bn, g float64) {
		obs := []Observation{{n1, r1, b1, st1, sy1, 0}, {n2, r2, b2, st2, sy2, 0}}
		p := Params{AlphaC: ac, BetaC: bc, AlphaN: an, BetaN: bn, AlphaR: an, BetaR: bn, Gamma: g}
		l, err := Loss(obs, p)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			return
		}
		require.False(t, math.IsNaN(l))
		require.GreaterOrEqual(t, l, 0.0)
		l2, err := Loss([]Observation{obs[1], obs[0]}, p)
		require.NoError(t, err)
		require.Equal(t, l, l2)
	})
}
