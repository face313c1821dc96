package goodput

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Catalogue of bad inputs: every entry point of the package that takes caller
// data, with each kind of bad value (NaN, ±Inf, negative, zero, out of order,
// too large). Each must give an error wrapping ErrInvalidInput whose message
// names the offending field (and, for observations, the index); none may
// panic.

var (
	nan  = math.NaN()
	pinf = math.Inf(1)
	ninf = math.Inf(-1)
)

func goodModel() Model {
	return Model{Params: testParams, Grad: GradStats{Sqr: 1, Var: 100}, InitBatch: 128, MaxBatch: 4096, Limits: Limits{32, 1024}}
}

func TestCatalogueParams(t *testing.T) {
	fields := map[string]func(*Params, float64){
		"AlphaC": func(p *Params, v float64) { p.AlphaC = v },
		"BetaC":  func(p *Params, v float64) { p.BetaC = v },
		"AlphaN": func(p *Params, v float64) { p.AlphaN = v },
		"BetaN":  func(p *Params, v float64) { p.BetaN = v },
		"AlphaR": func(p *Params, v float64) { p.AlphaR = v },
		"BetaR":  func(p *Params, v float64) { p.BetaR = v },
	}
	type tc struct {
		name string
		p    Params
		want string
	}
	var cases []tc
	for _, f := range []string{"AlphaC", "BetaC", "AlphaN", "BetaN", "AlphaR", "BetaR"} {
		for _, v := range []float64{nan, pinf, ninf, -1, -math.SmallestNonzeroFloat64} {
			p := testParams
			fields[f](&p, v)
			cases = append(cases, tc{f, p, "Params." + f})
		}
	}
	for _, g := range []float64{nan, pinf, ninf, 0, 0.999, 10.001, -1} {
		p := testParams
		p.Gamma = g
		cases = append(cases, tc{"Gamma", p, "Params.Gamma"})
	}
	zero := testParams
	zero.AlphaC, zero.BetaC = 0, 0
	cases = append(cases, tc{"zero compute", zero, "Params.AlphaC + "})
	cases = append(cases, tc{"zero value", Params{}, "Params."})
	for _, c := range cases {
		err := c.p.Validate()
		require.Error(t, err, "%s %+v", c.name, c.p)
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), c.want)
		// The same parameters inside a Model, as a fit start, and for Loss.
		m := goodModel()
		m.Params = c.p
		err = m.Validate()
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "Model."+c.want)
		_, ok := m.Best(1, 1)
		assert.False(t, ok, "Best on invalid %s", c.name)
		init := c.p
		_, err = Fit([]Observation{{1, 1, 8, 0.5, 0.01, 0}}, &FitOptions{Init: &init})
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "FitOptions.Init."+c.want[len("Params."):])
		_, err = Loss([]Observation{{1, 1, 8, 0.5, 0.01, 0}}, c.p)
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), c.want)
	}
	t.Logf("%d bad Params", len(cases))
}

func TestCatalogueModel(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Model)
		want string
	}{
		{"Grad.Sqr NaN", func(m *Model) { m.Grad.Sqr = nan }, "Model.Grad.Sqr"},
		{"Grad.Sqr -Inf", func(m *Model) { m.Grad.Sqr = ninf }, "Model.Grad.Sqr"},
		{"Grad.Sqr negative", func(m *Model) { m.Grad.Sqr = -1 }, "Model.Grad.Sqr"},
		{"Grad.Var +Inf", func(m *Model) { m.Grad.Var = pinf }, "Model.Grad.Var"},
		{"Grad.Var NaN", func(m *Model) { m.Grad.Var = nan }, "Model.Grad.Var"},
		{"Grad.Var negative", func(m *Model) { m.Grad.Var = -1e-300 }, "Model.Grad.Var"},
		{"InitBatch zero", func(m *Model) { m.InitBatch = 0 }, "Model.InitBatch"},
		{"InitBatch negative", func(m *Model) { m.InitBatch = -5 }, "Model.InitBatch"},
		{"InitBatch MinInt", func(m *Model) { m.InitBatch = math.MinInt }, "Model.InitBatch"},
		{"MaxBatch below InitBatch", func(m *Model) { m.MaxBatch = 64 }, "Model.MaxBatch"},
		{"MaxBatch zero", func(m *Model) { m.MaxBatch = 0 }, "Model.MaxBatch"},
		{"MaxBatch MaxInt", func(m *Model) { m.MaxBatch = math.MaxInt }, "Model.MaxBatch"},
		{"MaxBatch above MaxBatchSize", func(m *Model) { m.MaxBatch = MaxBatchSize + 1 }, "Model.MaxBatch"},
		{"InitBatch and MaxBatch MaxInt", func(m *Model) { m.InitBatch, m.MaxBatch = math.MaxInt, math.MaxInt }, "Model.MaxBatch"},
		{"MinLocalBatch zero", func(m *Model) { m.Limits.MinLocalBatch = 0 }, "Model.Limits.MinLocalBatch"},
		{"MinLocalBatch negative", func(m *Model) { m.Limits.MinLocalBatch = -1 }, "Model.Limits.MinLocalBatch"},
		{"MaxLocalBatch below min", func(m *Model) { m.Limits.MaxLocalBatch = 16 }, "Model.Limits.MaxLocalBatch"},
		{"MaxLocalBatch MaxInt", func(m *Model) { m.Limits.MaxLocalBatch = math.MaxInt }, "Model.Limits.MaxLocalBatch"},
		{"zero Limits", func(m *Model) { m.Limits = Limits{} }, "Model.Limits.MinLocalBatch"},
		{"Stages without MicroBatches", func(m *Model) { m.Stages = 4 }, "Model.Stages"},
		{"MicroBatches without Stages", func(m *Model) { m.MicroBatches = 4 }, "Model.MicroBatches"},
		{"negative Stages", func(m *Model) { m.Stages, m.MicroBatches = -1, 4 }, "Model.Stages"},
		{"negative MicroBatches", func(m *Model) { m.Stages, m.MicroBatches = 2, -4 }, "Model.MicroBatches"},
		{"MicroBatches MaxInt", func(m *Model) { m.Stages, m.MicroBatches = 2, math.MaxInt }, "Model.MicroBatches"},
		{"Stages MaxInt", func(m *Model) { m.Stages, m.MicroBatches = math.MaxInt, 2 }, "Model.Stages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := goodModel()
			c.edit(&m)
			err := m.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), c.want)
			for _, nr := range [][2]int{{1, 1}, {1, 4}, {2, 8}} {
				_, ok := m.Best(nr[0], nr[1])
				assert.False(t, ok)
			}
		})
	}
	// Bad configurations of a valid model: infeasible, never a panic.
	m := goodModel()
	for _, nr := range [][2]int{{0, 1}, {-1, 4}, {2, 1}, {1, 0}, {1, -3}, {math.MinInt, math.MinInt}, {math.MaxInt, math.MaxInt}, {1, math.MaxInt}} {
		_, ok := m.Best(nr[0], nr[1])
		assert.False(t, ok, "Best(%d, %d)", nr[0], nr[1])
	}
}

// TestBestHugeButValid checks results (not just "no panic") at the largest
// accepted sizes: a feasible choice has a positive, finite goodput and a
// global batch that matches its parts without overflow.
func TestBestHugeButValid(t *testing.T) {
	models := []Model{
		{Params: testParams, Grad: GradStats{Sqr: 1, Var: 100}, InitBatch: 1, MaxBatch: MaxBatchSize, Limits: Limits{1, MaxBatchSize}},
		{Params: testParams, Grad: GradStats{Sqr: 1, Var: 100}, InitBatch: 1, MaxBatch: MaxBatchSize, Limits: Limits{1, 1}},
		{Params: testParams, Grad: GradStats{Sqr: 1e300, Var: 1e300}, InitBatch: MaxBatchSize, Limits: Limits{1, 1}, FixedBatch: MaxBatchSize},
		// Hybrid with the largest micro-batch count: MicroBatches·replicas
		// used to overflow into a negative global batch and goodput.
		{Params: testParams, Grad: GradStats{Sqr: 1, Var: 1}, InitBatch: 1, MaxBatch: MaxBatchSize, Stages: 2, MicroBatches: MaxBatchSize},
		{Params: testParams, Grad: GradStats{Sqr: 1, Var: 1}, InitBatch: 1, MaxBatch: MaxBatchSize, Stages: MaxBatchSize, MicroBatches: 1},
	}
	for i, m := range models {
		require.NoError(t, m.Validate(), "model %d", i)
		for _, nr := range [][2]int{{1, 1}, {1, 2}, {2, 4}, {3, MaxBatchSize}, {4, 1 << 20}, {1, math.MaxInt}} {
			c, ok := m.Best(nr[0], nr[1])
			if !ok {
				continue
			}
			assert.Greater(t, c.GlobalBatch, 0, "model %d %v", i, nr)
			assert.True(t, c.Goodput > 0 && !math.IsInf(c.Goodput, 0), "model %d %v goodput %v", i, nr, c.Goodput)
			assert.GreaterOrEqual(t, c.AccumSteps, 0)
			if m.Hybrid() {
				assert.LessOrEqual(t, c.GlobalBatch, m.MaxBatch)
				assert.Equal(t, m.MicroBatches*nr[1], c.GlobalBatch)
			} else {
				assert.Equal(t, nr[1]*c.LocalBatch*(c.AccumSteps+1), c.GlobalBatch)
			}
		}
	}
}

func TestCatalogueObservations(t *testing.T) {
	good := Observation{1, 1, 8, 0.5, 0.01, 0}
	bad := []struct {
		name string
		o    Observation
		want string
	}{
		{"Nodes zero", Observation{0, 1, 8, 0.5, 0.01, 0}, "Nodes"},
		{"Nodes negative", Observation{-1, 1, 8, 0.5, 0.01, 0}, "Nodes"},
		{"Nodes MinInt", Observation{math.MinInt, 1, 8, 0.5, 0.01, 0}, "Nodes"},
		{"Replicas below Nodes", Observation{2, 1, 8, 0.5, 0.01, 0}, "Replicas"},
		{"Replicas zero", Observation{1, 0, 8, 0.5, 0.01, 0}, "Replicas"},
		{"Replicas negative", Observation{1, -4, 8, 0.5, 0.01, 0}, "Replicas"},
		{"LocalBatch zero", Observation{1, 1, 0, 0.5, 0.01, 0}, "LocalBatch"},
		{"LocalBatch negative", Observation{1, 1, -8, 0.5, 0.01, 0}, "LocalBatch"},
		{"StepTime zero", Observation{1, 1, 8, 0, 0, 0}, "StepTime"},
		{"StepTime negative", Observation{1, 1, 8, -0.5, 0.01, 0}, "StepTime"},
		{"StepTime NaN", Observation{1, 1, 8, nan, 0.01, 0}, "StepTime"},
		{"StepTime +Inf", Observation{1, 1, 8, pinf, 0.01, 0}, "StepTime"},
		{"StepTime -Inf", Observation{1, 1, 8, ninf, 0.01, 0}, "StepTime"},
		{"SyncTime negative", Observation{1, 1, 8, 0.5, -0.01, 0}, "SyncTime"},
		{"SyncTime NaN", Observation{1, 1, 8, 0.5, nan, 0}, "SyncTime"},
		{"SyncTime +Inf", Observation{1, 1, 8, 0.5, pinf, 0}, "SyncTime"},
		{"SyncTime equal StepTime", Observation{1, 1, 8, 0.5, 0.5, 0}, "SyncTime"},
		{"SyncTime above StepTime", Observation{1, 1, 8, 0.5, 0.6, 0}, "SyncTime"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			obs := []Observation{good, good, c.o, good}
			for name, call := range map[string]func() error{
				"Fit":  func() error { _, err := Fit(obs, nil); return err },
				"Loss": func() error { _, err := Loss(obs, testParams); return err },
			} {
				err := call()
				require.Error(t, err, name)
				assert.ErrorIs(t, err, ErrInvalidInput, name)
				var oe *ObservationError
				require.True(t, errors.As(err, &oe), name)
				assert.Equal(t, 2, oe.Index, name)
				assert.Equal(t, c.want, oe.Field, name)
				assert.Contains(t, err.Error(), "observation 2: "+c.want, name)
			}
		})
	}
	for _, obs := range [][]Observation{nil, {}} {
		_, err := Fit(obs, nil)
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), "no observations")
		_, err = Loss(obs, testParams)
		assert.ErrorIs(t, err, ErrInvalidInput)
	}
	// Loss divides by AlphaN and AlphaR.
	p := testParams
	p.AlphaN = 0
	_, err := Loss([]Observation{good}, p)
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "AlphaN")
}

func TestCatalogueFitOptions(t *testing.T) {
	obs := []Observation{{1, 1, 8, 0.5, 0.01, 0}}
	cases := []struct {
		opts FitOptions
		want string
	}{
		{FitOptions{Starts: -1}, "FitOptions.Starts"},
		{FitOptions{Starts: math.MinInt}, "FitOptions.Starts"},
		{FitOptions{Starts: MaxStarts + 1}, "FitOptions.Starts"},
		{FitOptions{Starts: math.MaxInt}, "FitOptions.Starts"},
		{FitOptions{MaxIterations: -1}, "FitOptions.MaxIterations"},
		{FitOptions{MaxIterations: MaxIterationsLimit + 1}, "FitOptions.MaxIterations"},
		{FitOptions{MaxIterations: math.MaxInt}, "FitOptions.MaxIterations"},
	}
	for _, c := range cases {
		_, err := Fit(obs, &c.opts)
		require.Error(t, err, "%+v", c.opts)
		assert.ErrorIs(t, err, ErrInvalidInput)
		assert.Contains(t, err.Error(), c.want)
	}
	// The bounds themselves are accepted.
	_, err := Fit(obs, &FitOptions{Starts: MaxStarts, MaxIterations: 5})
	assert.NoError(t, err)
}

// TestFitExtremeButValid: valid observations with extreme magnitudes give
// valid parameters (not NaN, within bounds), never a panic.
func TestFitExtremeButValid(t *testing.T) {
	sets := [][]Observation{
		{{1, 1, 1, 1e300, 0, 0}, {2, 1 << 40, 1 << 50, 1e308, 1e307, 0}},
		{{1, 1, 1, 1e-300, 0, 0}, {1, 2, 2, 1e-310, 1e-320, 0}},
		{{1, 1, math.MaxInt, 1, 0.5, 0}, {math.MaxInt, math.MaxInt, math.MaxInt, 1, 0.5, 0}},
		{{1, 1, 1, math.MaxFloat64, math.MaxFloat64 / 2, 0}},
		{{1, 1, 1, math.SmallestNonzeroFloat64, 0, 0}},
	}
	for i, obs := range sets {
		p, err := Fit(obs, &FitOptions{Starts: 2, MaxIterations: 50})
		require.NoError(t, err, "set %d", i)
		assert.NoError(t, p.Validate(), "set %d: %+v", i, p)
		l, err := Loss(obs, p)
		require.NoError(t, err)
		assert.False(t, math.IsNaN(l), "set %d", i)
	}
}

// TestCatalogueFormulas: the formula functions do not validate (they are
// called in inner loops after Validate); with any arguments, valid or not,
// they return a number (possibly NaN or ±Inf) and never panic. With valid
// parameters and counts they are finite and positive.
func TestCatalogueFormulas(t *testing.T) {
	floats := []float64{nan, pinf, ninf, -1, 0, 1e-320, 1, 1e308}
	ints := []int{math.MinInt, -1, 0, 1, 2, 3, math.MaxInt}
	bad := Params{AlphaC: nan, BetaC: ninf, AlphaN: -1, BetaN: pinf, AlphaR: 0, BetaR: 1e308, Gamma: 0}
	for _, p := range []Params{testParams, bad, {}} {
		for _, n := range ints {
			for _, r := range ints {
				for _, b := range floats {
					require.NotPanics(t, func() {
						p.AccumTime(b)
						p.NetTime(n, r)
						p.SyncTime(n, r, b)
						p.IterTime(n, r, b, r)
						p.Throughput(n, r, b, n)
						Gain(GradStats{b, b}, b, float64(r))
						Efficiency(GradStats{b, -b}, float64(n), b)
						Model{Params: p, InitBatch: n, MaxBatch: r}.Evaluate(n, r, n, r)
					})
				}
			}
		}
	}
	for _, nrb := range [][3]int{{1, 1, 1}, {1, 4, 32}, {4, 16, 1024}, {64, 512, 1 << 20}} {
		x := testParams.Throughput(nrb[0], nrb[1], float64(nrb[2]), 3)
		assert.True(t, x > 0 && !math.IsInf(x, 0), "%v: %v", nrb, x)
		e := Efficiency(GradStats{1, 100}, 128, float64(nrb[1]*nrb[2]))
		assert.True(t, e > 0 && !math.IsInf(e, 0), "%v: %v", nrb, e)
	}
}
