package goodput

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simpleBest is the batch-size search written plainly (the published
// artifact's GoodputFunction.optimize): every candidate of the grid is
// evaluated and the first with the highest goodput wins. It is the twin of
// Model.Best and Searcher.Best, which must return exactly its result.
func simpleBest(m Model, nodes, replicas int) (Choice, bool) {
	if nodes < 1 || replicas < nodes || m.Validate() != nil {
		return Choice{}, false
	}
	if m.Hybrid() {
		return m.bestHybrid(nodes, replicas)
	}
	bmin, bmax := m.Limits.MinLocalBatch, m.Limits.MaxLocalBatch
	lo := math.Max(float64(m.InitBatch), float64(bmin)*float64(replicas))
	hi := float64(m.MaxBatch)
	if m.FixedBatch > 0 {
		hi = float64(m.FixedBatch)
	}
	if lo > hi {
		return Choice{}, false
	}
	n := GridPoints
	if m.FixedBatch > 0 || lo == hi {
		n = 1
	}
	r := float64(replicas)
	m0 := float64(m.InitBatch)
	var best Choice
	found := false
	logLo, step := math.Log(lo), 0.0
	if n > 1 {
		step = (math.Log(hi) - logLo) / float64(n-1)
	}
	for i := 0; i < n; i++ {
		var batch float64
		switch {
		case n == 1:
			batch = hi
		case i == 0:
			batch = lo
		case i == n-1:
			batch = hi
		default:
			batch = math.Exp(logLo + float64(i)*step)
		}
		local := batch / r
		s := int(math.Ceil(local/float64(bmax)-1e-8)) - 1
		if s < 0 {
			s = 0
		}
		if replicas == 1 && local > m0+1e-8 && s < 1 {
			s = 1
		}
		b := int(math.Ceil(local/float64(s+1) - 1e-8))
		if b < bmin || b > bmax {
			continue
		}
		c := m.Evaluate(nodes, replicas, b, s)
		if !found || c.Goodput > best.Goodput {
			best, found = c, true
		}
	}
	return best, found
}

// TestSearchMatchesSimple: the pruned search (Model.Best, and a Searcher
// reused over many models as a scheduler's round does) returns exactly the
// simple search's choice on random models and configurations.
func TestSearchMatchesSimple(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var s Searcher
	exp := func(lo, hi float64) float64 { return lo * math.Pow(hi/lo, rng.Float64()) }
	for it := 0; it < 20000; it++ {
		m0 := 1 + rng.IntN(256)
		bmin := 1 + rng.IntN(64)
		m := Model{
			Params: Params{
				AlphaC: exp(1e-4, 1), BetaC: exp(1e-6, 0.1),
				AlphaN: exp(1e-8, 1), BetaN: exp(1e-8, 0.1),
				AlphaR: exp(1e-8, 0.5), BetaR: exp(1e-8, 0.05),
				Gamma: 1 + 9*rng.Float64()*rng.Float64(),
			},
			Grad:      GradStats{Sqr: exp(1e-3, 10), Var: exp(1e-3, 1000)},
			InitBatch: m0,
			MaxBatch:  m0 * (1 + rng.IntN(128)),
			Limits:    Limits{MinLocalBatch: bmin, MaxLocalBatch: bmin + rng.IntN(2048)},
		}
		if rng.IntN(10) == 0 {
			m.FixedBatch = m.MaxBatch
		}
		if rng.IntN(10) == 0 {
			m.Grad = GradStats{}
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
		want, wok := simpleBest(m, nodes, replicas)
		got, gok := m.Best(nodes, replicas)
		require.Equal(t, wok, gok, "model %+v n=%d r=%d", m, nodes, replicas)
		require.Equal(t, want, got, "model %+v n=%d r=%d", m, nodes, replicas)
		got, gok = s.Best(&m, nodes, replicas)
		require.Equal(t, wok, gok, "searcher: model %+v n=%d r=%d", m, nodes, replicas)
		require.Equal(t, want, got, "searcher: model %+v n=%d r=%d", m, nodes, replicas)
	}
	// Also on the models of the other property tests (fixed batches, few
	// points).
	for trial := 0; trial < 3000; trial++ {
		m := randomModel(rng)
		nodes := 1 + rng.IntN(4)
		replicas := nodes * (1 + rng.IntN(8))
		want, wok := simpleBest(m, nodes, replicas)
		got, gok := m.Best(nodes, replicas)
		require.Equal(t, wok, gok)
		require.Equal(t, want, got, "trial %d", trial)
	}
}

// TestSplitBatch: the split covers the global batch with the fewest
// accumulation steps and per-GPU batches within the limit.
func TestSplitBatch(t *testing.T) {
	cases := []struct{ global, replicas, maxLocal, local, accum int }{
		{128, 1, 256, 128, 0},
		{128, 4, 256, 32, 0},
		{1000, 3, 100, 84, 3}, // 334 per replica: 4 micro-batches of 84
		{7, 8, 4, 1, 0},       // fewer samples than replicas: one each
		{0, 4, 8, 1, 0},
		{10, 0, 8, 1, 0},
		{10, 2, 0, 1, 0},
	}
	for _, c := range cases {
		local, accum := SplitBatch(c.global, c.replicas, c.maxLocal)
		assert.Equal(t, c.local, local, "%+v", c)
		assert.Equal(t, c.accum, accum, "%+v", c)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 5000; i++ {
		g, r, bmax := 1+rng.IntN(100000), 1+rng.IntN(64), 1+rng.IntN(4096)
		local, accum := SplitBatch(g, r, bmax)
		require.LessOrEqual(t, local, bmax)
		require.GreaterOrEqual(t, r*local*(accum+1), g, "covers the batch")
		per := (g + r - 1) / r
		require.Equal(t, (per+bmax-1)/bmax-1, accum, "fewest steps: g=%d r=%d bmax=%d", g, r, bmax)
	}
}
