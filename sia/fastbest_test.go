package sia

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sia-sched/sia/goodput"
	"github.com/stretchr/testify/require"
)

// TestFastBestMatchesBest checks the pruned batch-size search against
// goodput.Model.Best (its naive twin) on random models and configurations.
func TestFastBestMatchesBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	ev := newEvaluator()
	exp := func(lo, hi float64) float64 { return lo * pow(hi/lo, rng.Float64()) }
	for it := 0; it < 20000; it++ {
		m0 := 1 + rng.IntN(256)
		bmin := 1 + rng.IntN(64)
		m := goodput.Model{
			Params: goodput.Params{
				AlphaC: exp(1e-4, 1), BetaC: exp(1e-6, 0.1),
				AlphaN: exp(1e-8, 1), BetaN: exp(1e-8, 0.1),
				AlphaR: exp(1e-8, 0.5), BetaR: exp(1e-8, 0.05),
				Gamma: 1 + 9*rng.Float64()*rng.Float64(),
			},
			Grad:      goodput.GradStats{Sqr: exp(1e-3, 10), Var: exp(1e-3, 1000)},
			InitBatch: m0,
			MaxBatch:  m0 * (1 + rng.IntN(128)),
			Limits:    goodput.Limits{MinLocalBatch: bmin, MaxLocalBatch: bmin + rng.IntN(2048)},
		}
		if rng.IntN(10) == 0 {
			m.Grad = goodput.GradStats{}
		}
		if rng.IntN(10) == 0 {
			m.Params.Gamma = 1
		}
		nodes := 1 + rng.IntN(4)
		replicas := nodes * (1 + rng.IntN(16))
		if rng.IntN(3) == 0 {
			nodes, replicas = 1, 1<<rng.IntN(4)
		}
		require.NoError(t, m.Validate())
		want, wok := m.Best(nodes, replicas)
		got, gok := ev.best(&m, nodes, replicas)
		require.Equal(t, wok, gok, "model %+v n=%d r=%d", m, nodes, replicas)
		require.Equal(t, want, got, "model %+v n=%d r=%d", m, nodes, replicas)
	}
}

func pow(x, y float64) float64 { return math.Pow(x, y) }
