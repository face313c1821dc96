package goodput

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testParams = Params{AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.05, BetaR: 0.01, Gamma: 2}

func TestIterTimeFormula(t *testing.T) {
	p := testParams
	tests := []struct {
		name            string
		nodes, replicas int
		b               float64
		s               int
		net             float64
	}{
		{"one GPU", 1, 1, 32, 0, Epsilon + Epsilon*Epsilon},
		{"one node two GPUs", 1, 2, 32, 0, p.AlphaR + p.BetaR*Epsilon},
		{"one node eight GPUs", 1, 8, 16, 2, p.AlphaR + p.BetaR*6},
		{"two nodes", 2, 8, 16, 1, p.AlphaN + p.BetaN*6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acc := p.AlphaC + p.BetaC*tc.b
			sync := math.Pow(math.Pow(acc, p.Gamma)+math.Pow(tc.net, p.Gamma), 1/p.Gamma)
			assert.InDelta(t, tc.net, p.NetTime(tc.nodes, tc.replicas), 1e-15)
			assert.InDelta(t, acc, p.AccumTime(tc.b), 1e-15)
			assert.InDelta(t, sync, p.SyncTime(tc.nodes, tc.replicas, tc.b), 1e-12)
			iter := float64(tc.s)*acc + sync
			assert.InDelta(t, iter, p.IterTime(tc.nodes, tc.replicas, tc.b, tc.s), 1e-12)
			want := float64(tc.replicas) * tc.b * float64(tc.s+1) / iter
			assert.InDelta(t, want, p.Throughput(tc.nodes, tc.replicas, tc.b, tc.s), 1e-9*want)
		})
	}
}

func TestPnormStable(t *testing.T) {
	// γ = 10 with large times must not overflow; γ = 1 adds.
	assert.InDelta(t, 3.0, pnorm(1, 2, 1), 1e-15)
	v := pnorm(1e40, 1e40, 10)
	assert.InDelta(t, 1e40*math.Pow(2, 0.1), v, 1e27)
	assert.Equal(t, 0.0, pnorm(0, 0, 3))
	// The γ-norm lies between the max and the sum.
	for _, g := range []float64{1, 1.5, 3, 10} {
		v := pnorm(0.3, 0.2, g)
		assert.GreaterOrEqual(t, v, 0.3)
		assert.LessOrEqual(t, v, 0.5+1e-15)
	}
}

func TestEfficiency(t *testing.T) {
	stats := []GradStats{{Sqr: 1, Var: 0}, {Sqr: 1, Var: 10}, {Sqr: 0.01, Var: 100}, {Sqr: 3e11, Var: 6e15}}
	for _, g := range stats {
		for _, m0 := range []float64{1, 12, 128, 256} {
			assert.InDelta(t, 1, Efficiency(g, m0, m0), 1e-12, "E(M0) = 1 for %+v", g)
			prev := 1.0
			for k := 1; k <= 64; k++ {
				e := Efficiency(g, m0, m0*(1+float64(k)/4))
				assert.Less(t, e, prev+1e-15, "E decreases in M")
				assert.Greater(t, e, 0.0)
				prev = e
			}
			// Closed form with the gradient noise scale φ = M0·var/sqr.
			phi := m0 * g.Var / g.Sqr
			m := 7 * m0
			assert.InDelta(t, (phi+m0)/(phi+m), Efficiency(g, m0, m), 1e-12)
		}
	}
	// No statistics: gain 1, efficiency M0/M.
	assert.InDelta(t, 0.25, Efficiency(GradStats{}, 10, 40), 1e-15)
}

func TestValidate(t *testing.T) {
	good := Model{Params: testParams, Grad: GradStats{Sqr: 1, Var: 1}, InitBatch: 32, MaxBatch: 1024, Limits: Limits{8, 128}}
	require.NoError(t, good.Validate())
	tests := []struct {
		name  string
		edit  func(*Model)
		field string
	}{
		{"negative alpha", func(m *Model) { m.Params.AlphaN = -1 }, "AlphaN"},
		{"NaN beta", func(m *Model) { m.Params.BetaC = math.NaN() }, "BetaC"},
		{"gamma low", func(m *Model) { m.Params.Gamma = 0.5 }, "Gamma"},
		{"zero compute", func(m *Model) { m.Params.AlphaC, m.Params.BetaC = 0, 0 }, "AlphaC"},
		{"grad", func(m *Model) { m.Grad.Var = math.Inf(1) }, "Var"},
		{"init", func(m *Model) { m.InitBatch = 0 }, "InitBatch"},
		{"max below init", func(m *Model) { m.MaxBatch = 16 }, "MaxBatch"},
		{"fixed below init", func(m *Model) { m.FixedBatch = 16 }, "FixedBatch"},
		{"fixed negative", func(m *Model) { m.FixedBatch = -1 }, "FixedBatch"},
		{"fixed too large", func(m *Model) { m.FixedBatch = MaxBatchSize + 1 }, "FixedBatch"},
		{"limits", func(m *Model) { m.Limits = Limits{0, 4} }, "MinLocalBatch"},
		{"limits order", func(m *Model) { m.Limits = Limits{8, 4} }, "MaxLocalBatch"},
		{"hybrid half", func(m *Model) { m.Stages = 2 }, "MicroBatches"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			tc.edit(&m)
			err := m.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), tc.field)
			_, ok := m.Best(1, 1)
			assert.False(t, ok, "Best on an invalid model")
		})
	}
	// A fixed batch needs no MaxBatch: MaxBatch bounds only adaptive jobs.
	fixed := good
	fixed.MaxBatch, fixed.FixedBatch = 0, 64
	require.NoError(t, fixed.Validate())
	c, ok := fixed.Best(1, 2)
	require.True(t, ok)
	assert.Equal(t, 64, c.GlobalBatch)
}

// TestBestAccumulates checks that the search accumulates gradients when the
// per-GPU batch would exceed the memory limit.
func TestBestAccumulates(t *testing.T) {
	m := Model{
		Params:     Params{AlphaC: 0.01, BetaC: 0.001, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.05, BetaR: 0.01, Gamma: 1.5},
		Grad:       GradStats{Sqr: 1, Var: 1e6}, // huge noise scale: larger batches pay off
		InitBatch:  64,
		MaxBatch:   4096,
		Limits:     Limits{MinLocalBatch: 16, MaxLocalBatch: 256},
		FixedBatch: 4096,
	}
	c, ok := m.Best(1, 4)
	require.True(t, ok)
	// 4096 over 4 GPUs is 1024 per GPU: four micro-batches of 256.
	assert.Equal(t, 256, c.LocalBatch)
	assert.Equal(t, 3, c.AccumSteps)
	assert.Equal(t, 4096, c.GlobalBatch)
	assert.LessOrEqual(t, c.LocalBatch, m.Limits.MaxLocalBatch)

	// Adaptive: with a huge noise scale the largest batch wins and needs accumulation.
	m.FixedBatch = 0
	c, ok = m.Best(2, 8)
	require.True(t, ok)
	assert.Equal(t, 4096, c.GlobalBatch)
	assert.Equal(t, 1, c.AccumSteps)
	assert.Equal(t, 256, c.LocalBatch)

	// One GPU above M0 always accumulates at least once (statistics need two micro-batches).
	m.FixedBatch = 128
	c, ok = m.Best(1, 1)
	require.True(t, ok)
	assert.Equal(t, 1, c.AccumSteps)
	assert.Equal(t, 64, c.LocalBatch)

	// But not at exactly M0.
	m.FixedBatch = 64
	c, ok = m.Best(1, 1)
	require.True(t, ok)
	assert.Equal(t, 0, c.AccumSteps)
	assert.Equal(t, 64, c.LocalBatch)
}

func TestBestInfeasible(t *testing.T) {
	m := Model{Params: testParams, Grad: GradStats{Sqr: 1, Var: 1}, InitBatch: 32, MaxBatch: 256, Limits: Limits{16, 64}}
	_, ok := m.Best(4, 32) // 32 replicas × 16 > 256
	assert.False(t, ok)
	_, ok = m.Best(2, 1) // replicas < nodes
	assert.False(t, ok)
	_, ok = m.Best(0, 0)
	assert.False(t, ok)
	c, ok := m.Best(2, 16) // exactly 256 = 16 × 16
	require.True(t, ok)
	assert.Equal(t, 16, c.LocalBatch)
}

func TestBestHybrid(t *testing.T) {
	m := Model{Params: Params{AlphaC: 0.05, BetaC: 0.049, AlphaN: 0.4, BetaN: 0.01, AlphaR: 0.3, BetaR: 0.01, Gamma: 1},
		Grad: GradStats{Sqr: 1, Var: 50}, InitBatch: 12, MaxBatch: 384, Stages: 8, MicroBatches: 48}
	c, ok := m.Best(2, 2)
	require.True(t, ok)
	fwd := 0.05 + 0.049
	tt := 3*float64(7+48)*fwd + (0.4 + 0.01*Epsilon)
	assert.InDelta(t, 96/tt, c.Throughput, 1e-9)
	assert.Equal(t, 96, c.GlobalBatch)
	assert.Equal(t, 1, c.LocalBatch)
	assert.Equal(t, 47, c.AccumSteps)
	assert.InDelta(t, c.Throughput*Efficiency(m.Grad, 12, 96), c.Goodput, 1e-12)
	_, ok = m.Best(9, 9) // 48·9 > 384
	assert.False(t, ok)
}

// naiveBest is a brute-force twin of Best written independently: the grid by
// repeated multiplication and the rules spelled out literally.
func naiveBest(m Model, nodes, replicas int) (Choice, bool) {
	lo := float64(m.InitBatch)
	if v := float64(m.Limits.MinLocalBatch * replicas); v > lo {
		lo = v
	}
	hi := float64(m.MaxBatch)
	if m.FixedBatch > 0 {
		hi = float64(m.FixedBatch)
	}
	if lo > hi {
		return Choice{}, false
	}
	var cands []float64
	if m.FixedBatch > 0 {
		cands = []float64{hi}
	} else {
		ratio := math.Pow(hi/lo, 1.0/49)
		for i := 0; i < 50; i++ {
			cands = append(cands, lo*math.Pow(ratio, float64(i)))
		}
		cands[49] = hi
	}
	best, found := Choice{}, false
	for _, mm := range cands {
		local := mm / float64(replicas)
		s := 0
		for float64(s+1)*float64(m.Limits.MaxLocalBatch) < local-1e-6 {
			s++
		}
		if replicas == 1 && local > float64(m.InitBatch)+1e-8 && s == 0 {
			s = 1
		}
		b := int(math.Ceil(local/float64(s+1) - 1e-8))
		if b < m.Limits.MinLocalBatch || b > m.Limits.MaxLocalBatch {
			continue
		}
		glob := replicas * b * (s + 1)
		x := float64(glob) / (float64(s)*(m.Params.AlphaC+m.Params.BetaC*float64(b)) + m.Params.SyncTime(nodes, replicas, float64(b)))
		g := x * Efficiency(m.Grad, float64(m.InitBatch), float64(glob))
		if !found || g > best.Goodput*(1+1e-12) {
			best, found = Choice{Goodput: g, LocalBatch: b, AccumSteps: s, GlobalBatch: glob}, true
		}
	}
	return best, found
}

func randomModel(rng *rand.Rand) Model {
	m0 := 1 << rng.IntN(9)
	bmin := 1 + rng.IntN(16)
	m := Model{
		Params: Params{
			AlphaC: rng.Float64() * 0.2, BetaC: 1e-4 + rng.Float64()*0.02,
			AlphaN: rng.Float64(), BetaN: rng.Float64() * 0.1,
			AlphaR: rng.Float64() * 0.3, BetaR: rng.Float64() * 0.05,
			Gamma: 1 + 9*rng.Float64(),
		},
		Grad:      GradStats{Sqr: rng.Float64(), Var: rng.Float64() * math.Pow(10, float64(rng.IntN(5)))},
		InitBatch: m0,
		MaxBatch:  m0 * (1 + rng.IntN(64)),
		Limits:    Limits{MinLocalBatch: bmin, MaxLocalBatch: bmin + rng.IntN(300)},
	}
	if rng.IntN(4) == 0 { // fixed at the largest batch
		m.FixedBatch = m.MaxBatch
	}
	return m
}

func TestBestMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 1500; trial++ {
		m := randomModel(rng)
		nodes := 1 + rng.IntN(4)
		replicas := nodes * (1 + rng.IntN(8))
		if nodes == 1 && rng.IntN(3) == 0 {
			replicas = 1
		}
		got, ok := m.Best(nodes, replicas)
		want, wantOK := naiveBest(m, nodes, replicas)
		require.Equal(t, wantOK, ok, "trial %d %+v (%d,%d)", trial, m, nodes, replicas)
		if !ok {
			continue
		}
		require.InDelta(t, want.Goodput, got.Goodput, 1e-9*want.Goodput, "trial %d", trial)
		// Constraints of the result.
		assert.GreaterOrEqual(t, got.LocalBatch, m.Limits.MinLocalBatch)
		assert.LessOrEqual(t, got.LocalBatch, m.Limits.MaxLocalBatch)
		assert.Equal(t, replicas*got.LocalBatch*(got.AccumSteps+1), got.GlobalBatch)
		assert.GreaterOrEqual(t, got.GlobalBatch, m.InitBatch)
		assert.Less(t, got.GlobalBatch, m.MaxBatch+replicas*(got.AccumSteps+1))
		if replicas == 1 && got.GlobalBatch > m.InitBatch {
			assert.GreaterOrEqual(t, got.AccumSteps, 1)
		}
		// The exhaustive optimum over every feasible (b, s) in range is at
		// most a few per cent better than the 50-point grid.
		ex := 0.0
		for s := 0; s <= m.MaxBatch/replicas; s++ {
			for b := m.Limits.MinLocalBatch; b <= m.Limits.MaxLocalBatch; b++ {
				glob := replicas * b * (s + 1)
				if glob < m.InitBatch || glob > m.MaxBatch || (m.FixedBatch > 0 && glob != m.FixedBatch) {
					continue
				}
				if replicas == 1 && glob > m.InitBatch && s == 0 {
					continue
				}
				ex = math.Max(ex, m.Evaluate(nodes, replicas, b, s).Goodput)
			}
			if replicas*m.Limits.MinLocalBatch*(s+1) > m.MaxBatch {
				break
			}
		}
		if ex > 0 && m.FixedBatch == 0 {
			assert.GreaterOrEqual(t, got.Goodput, 0.9*ex, "trial %d: grid far from exhaustive optimum", trial)
		}
	}
}

func TestBestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100; i++ {
		m := randomModel(rng)
		a, okA := m.Best(1, 4)
		b, okB := m.Best(1, 4)
		assert.Equal(t, okA, okB)
		assert.Equal(t, a, b)
	}
}

// synthetic returns noise-free observations of p over single-GPU,
// single-node and multi-node configurations.
func synthetic(p Params, multiNode bool) []Observation {
	var obs []Observation
	add := func(n, r, b int) {
		step := p.SyncTime(n, r, float64(b))
		obs = append(obs, Observation{Nodes: n, Replicas: r, LocalBatch: b, StepTime: step, SyncTime: step - p.AccumTime(float64(b))})
	}
	for _, b := range []int{4, 8, 16, 32, 64} {
		add(1, 1, b)
		add(1, 2, b)
		add(1, 4, b)
		add(1, 8, b)
		if multiNode {
			add(2, 2, b)
			add(2, 8, b)
			add(4, 16, b)
		}
	}
	return obs
}

// TestFitRecoversParams fits noise-free data of known parameters. The network
// times are chosen large enough against compute to be visible through the
// γ-norm; otherwise the loss's regularisers, not the data, decide them.
func TestFitRecoversParams(t *testing.T) {
	truth := []Params{
		{AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.05, BetaR: 0.01, Gamma: 2},
		{AlphaC: 0.02, BetaC: 0.003, AlphaN: 0.2, BetaN: 0.01, AlphaR: 0.03, BetaR: 0.004, Gamma: 1.3},
		{AlphaC: 0.3, BetaC: 0.05, AlphaN: 1.5, BetaN: 0.1, AlphaR: 0.6, BetaR: 0.08, Gamma: 4},
	}
	for i, want := range truth {
		obs := synthetic(want, true)
		got, err := Fit(obs, nil)
		require.NoError(t, err)
		// Parameters within 2 %.
		w, g := want.vec(), got.vec()
		for k := range w {
			assert.InDelta(t, w[k], g[k], 0.02*w[k], "case %d param %d: want %+v got %+v", i, k, want, got)
		}
		// Predictions within 0.1 %.
		for _, o := range obs {
			assert.InDelta(t, o.StepTime, got.SyncTime(o.Nodes, o.Replicas, float64(o.LocalBatch)), 1e-3*o.StepTime)
		}
	}
}

func TestFitPinning(t *testing.T) {
	p := Params{AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.05, BetaR: 0.01, Gamma: 2}
	// Single node only: network-across-nodes parameters pinned, then raised
	// to 1.1× the intra-node ones.
	got, err := Fit(synthetic(p, false), nil)
	require.NoError(t, err)
	assert.InDelta(t, 1.1*got.AlphaR, got.AlphaN, 1e-12)
	assert.InDelta(t, 1.1*got.BetaR, got.BetaN, 1e-12)
	assert.InDelta(t, p.AlphaR, got.AlphaR, 0.02*p.AlphaR)

	// One GPU, one batch size: αc = mean accumulation time / 2, no network.
	obs := []Observation{{1, 1, 32, 0.5, 0.01, 0}, {1, 1, 32, 0.52, 0.01, 0}}
	got, err = Fit(obs, nil)
	require.NoError(t, err)
	assert.InDelta(t, (0.49+0.51)/2/2, got.AlphaC, 1e-12)
	assert.InDelta(t, 0.5, got.AccumTime(32), 0.01)
	assert.Equal(t, Epsilon, got.AlphaR)
	assert.Equal(t, Epsilon, got.BetaR)
	assert.InDelta(t, 1.1*Epsilon, got.AlphaN, 1e-20)

	// Only two replicas: the β slopes are pinned.
	var two []Observation
	for _, o := range synthetic(p, true) {
		if o.Replicas <= 2 {
			two = append(two, o)
		}
	}
	got, err = Fit(two, nil)
	require.NoError(t, err)
	assert.Equal(t, Epsilon, got.BetaN)
	assert.Equal(t, Epsilon, got.BetaR)
}

func TestFitDeterministicAndOrderFree(t *testing.T) {
	obs := synthetic(testParams, true)
	for i := range obs { // some noise
		obs[i].StepTime *= 1 + 0.05*math.Sin(float64(i))
	}
	a, err := Fit(obs, nil)
	require.NoError(t, err)
	rev := append([]Observation(nil), obs...)
	rng := rand.New(rand.NewPCG(5, 6))
	rng.Shuffle(len(rev), func(i, j int) { rev[i], rev[j] = rev[j], rev[i] })
	b, err := Fit(rev, nil)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	// More starts never give a worse loss than one start.
	one, err := Fit(obs, &FitOptions{Starts: 1})
	require.NoError(t, err)
	la, _ := Loss(obs, a)
	l1, _ := Loss(obs, one)
	assert.LessOrEqual(t, la, l1+1e-12)
	// Warm start from the answer stays there.
	w, err := Fit(obs, &FitOptions{Init: &a})
	require.NoError(t, err)
	lw, _ := Loss(obs, w)
	assert.LessOrEqual(t, lw, la+1e-9)
}

func TestFitErrors(t *testing.T) {
	good := Observation{1, 1, 8, 0.5, 0.01, 0}
	tests := []struct {
		name  string
		obs   []Observation
		field string
	}{
		{"empty", nil, "no observations"},
		{"nodes", []Observation{good, {0, 1, 8, 0.5, 0.01, 0}}, "observation 1: Nodes"},
		{"replicas", []Observation{{2, 1, 8, 0.5, 0.01, 0}}, "Replicas"},
		{"batch", []Observation{{1, 1, 0, 0.5, 0.01, 0}}, "LocalBatch"},
		{"NaN step", []Observation{{1, 1, 8, math.NaN(), 0.01, 0}}, "StepTime"},
		{"negative sync", []Observation{{1, 1, 8, 0.5, -1, 0}}, "SyncTime"},
		{"sync above step", []Observation{{1, 1, 8, 0.5, 0.6, 0}}, "SyncTime"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(tc.obs, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), tc.field)
			if len(tc.obs) > 0 {
				var oe *ObservationError
				assert.True(t, errors.As(err, &oe))
			}
		})
	}
	_, err := Fit([]Observation{good}, &FitOptions{Starts: -1})
	assert.ErrorIs(t, err, ErrInvalidInput)
	bad := Params{Gamma: 0}
	_, err = Fit([]Observation{good}, &FitOptions{Init: &bad})
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// FuzzFit checks that Fit never panics and returns valid parameters or an
// error for arbitrary observations.
func FuzzFit(f *testing.F) {
	f.Add(1, 1, 8, 0.5, 0.01, 2, 8, 16, 0.9, 0.3)
	f.Add(1, 4, 32, 0.2, 0.05, 1, 1, 64, 0.3, 0.0)
	f.Fuzz(func(t *testing.T, n1, r1, b1 int, st1, sy1 float64, n2, r2, b2 int, st2, sy2 float64) {
		obs := []Observation{{n1, r1, b1, st1, sy1, 0}, {n2, r2, b2, st2, sy2, 0}}
		p, err := Fit(obs, &FitOptions{Starts: 2, MaxIterations: 50})
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			return
		}
		require.NoError(t, p.Validate())
	})
}

func benchObservations() []Observation {
	// About 30 observations with 5 % deterministic noise, as an online fit sees.
	p := Params{AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.05, BetaR: 0.01, Gamma: 2}
	obs := synthetic(p, true)[:30]
	for i := range obs {
		obs[i].StepTime *= 1 + 0.05*math.Sin(float64(3*i))
	}
	return obs
}

func BenchmarkFit(b *testing.B) {
	obs := benchObservations()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fit(obs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFitOneStart(b *testing.B) {
	obs := benchObservations()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Fit(obs, &FitOptions{Starts: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBest(b *testing.B) {
	m := Model{Params: testParams, Grad: GradStats{Sqr: 1, Var: 100}, InitBatch: 128, MaxBatch: 4096, Limits: Limits{32, 1024}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := m.Best(2, 16); !ok {
			b.Fatal("infeasible")
		}
	}
}

// FuzzBest checks that Best never panics and that a feasible answer keeps the
// limits and the accumulation rules.
func FuzzBest(f *testing.F) {
	f.Add(0.1, 0.01, 0.3, 0.02, 0.05, 0.01, 2.0, 1.0, 100.0, 128, 4096, 32, 1024, false, 2, 16)
	f.Add(0.0, 1e-3, 1e-8, 1e-8, 1e-8, 1e-8, 1.0, 0.0, 0.0, 1, 1, 1, 1, true, 1, 1)
	f.Fuzz(func(t *testing.T, ac, bc, an, bn, ar, br, g, sqr, vr float64, m0, mmax, bmin, bmax int, fixed bool, nodes, replicas int) {
		m := Model{Params: Params{ac, bc, an, bn, ar, br, g}, Grad: GradStats{sqr, vr}, InitBatch: m0, MaxBatch: mmax,
			Limits: Limits{bmin, bmax}}
		if fixed {
			m.FixedBatch = mmax
		}
		c, ok := m.Best(nodes, replicas)
		if !ok {
			return
		}
		require.NoError(t, m.Validate())
		require.GreaterOrEqual(t, c.LocalBatch, bmin)
		require.LessOrEqual(t, c.LocalBatch, bmax)
		require.GreaterOrEqual(t, c.AccumSteps, 0)
		require.Equal(t, replicas*c.LocalBatch*(c.AccumSteps+1), c.GlobalBatch)
		require.GreaterOrEqual(t, c.GlobalBatch, m0)
		require.Greater(t, c.GlobalBatch, 0)
		require.False(t, math.IsNaN(c.Goodput))
		require.GreaterOrEqual(t, c.Goodput, 0.0)
	})
}
