package bootstrap

import (
	"encoding/json"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// truth are the "real" parameters of a synthetic job on three types.
var truth = map[string]goodput.Params{
	"fast": {AlphaC: 0.01, BetaC: 0.0002, AlphaN: 0.05, BetaN: 0.01, AlphaR: 0.01, BetaR: 0.004, Gamma: 1.3},
	"mid":  {AlphaC: 0.02, BetaC: 0.0005, AlphaN: 0.08, BetaN: 0.02, AlphaR: 0.02, BetaR: 0.006, Gamma: 1.3},
	"slow": {AlphaC: 0.03, BetaC: 0.0010, AlphaN: 0.10, BetaN: 0.03, AlphaR: 0.03, BetaR: 0.008, Gamma: 1.3},
}

func testSpec() Spec {
	return Spec{
		InitBatch: 128, MaxBatch: 4096,
		Limits: map[string]goodput.Limits{
			"fast": {MinLocalBatch: 16, MaxLocalBatch: 1024},
			"mid":  {MinLocalBatch: 16, MaxLocalBatch: 512},
			"slow": {MinLocalBatch: 16, MaxLocalBatch: 256},
		},
		Grad: goodput.GradStats{Sqr: 1, Var: 20},
	}
}

// obs returns a noiseless observation of the truth on a type.
func obs(t string, nodes, replicas, b int) goodput.Observation {
	p := truth[t]
	step := p.IterTime(nodes, replicas, float64(b), 0)
	return goodput.Observation{Nodes: nodes, Replicas: replicas, LocalBatch: b, StepTime: step, SyncTime: step - p.AccumTime(float64(b))}
}

func meas(t string, nodes, replicas, b int) Measurement {
	o := obs(t, nodes, replicas, b)
	return Measurement{Nodes: o.Nodes, Replicas: o.Replicas, LocalBatch: o.LocalBatch, StepTime: o.StepTime, SyncTime: o.SyncTime}
}

// seedAll seeds every type with a 1-GPU profile over several batch sizes.
func seedAll(t *testing.T, tr *Tracker) {
	t.Helper()
	for _, ty := range []string{"fast", "mid", "slow"} {
		var rows []goodput.Observation
		for b := 16; b <= testSpec().Limits[ty].MaxLocalBatch; b *= 2 {
			rows = append(rows, obs(ty, 1, 1, b))
		}
		require.NoError(t, tr.Seed(ty, rows...))
	}
}

func TestLifeCycle(t *testing.T) {
	tr, err := New(testSpec(), nil)
	require.NoError(t, err)
	for _, ty := range tr.Types() {
		assert.Equal(t, None, tr.Source(ty), ty)
	}
	seedAll(t, tr)
	assert.Equal(t, 3, tr.Refits(), "one fit per seeded type")
	for _, ty := range tr.Types() {
		assert.Equal(t, Seeded, tr.Source(ty), ty)
		// A fit on 1-GPU data predicts near-perfect scaling: the first
		// multi-GPU step assumes doubling.
		m, _ := tr.Model(ty)
		x1 := m.Params.Throughput(1, 1, 64, 0)
		x2 := m.Params.Throughput(1, 2, 64, 0)
		assert.InDelta(t, 2, x2/x1, 0.05, ty)
	}
	// The job runs on 2 and 4 GPUs of "mid": mid becomes Measured and the
	// others are projected from it.
	for _, m := range []Measurement{meas("mid", 1, 2, 256), meas("mid", 1, 4, 256)} {
		refit, err := tr.Observe("mid", m)
		require.NoError(t, err)
		assert.True(t, refit)
	}
	assert.Equal(t, Measured, tr.Source("mid"))
	for _, ty := range []string{"fast", "slow"} {
		assert.Equal(t, Projected, tr.Source(ty), ty)
		ref, ok := tr.Reference(ty)
		require.True(t, ok)
		assert.Equal(t, "mid", ref)
	}
	// A repeated key costs no refit.
	n := tr.Refits()
	refit, err := tr.Observe("mid", meas("mid", 1, 4, 256))
	require.NoError(t, err)
	assert.False(t, refit)
	assert.Equal(t, n, tr.Refits())
	// Once "slow" runs multi-GPU itself, its projection is dropped.
	_, err = tr.Observe("slow", meas("slow", 2, 8, 128))
	require.NoError(t, err)
	assert.Equal(t, Measured, tr.Source("slow"))
	assert.Equal(t, Projected, tr.Source("fast"))
}

// TestProjectionFormula: est_B(N) = x_B(1)/x_A(1) · x_A(N) at the common
// per-GPU batch.
func TestProjectionFormula(t *testing.T) {
	tr, err := New(testSpec(), nil)
	require.NoError(t, err)
	seedAll(t, tr)
	for _, m := range []Measurement{meas("mid", 1, 2, 256), meas("mid", 1, 4, 128), meas("mid", 2, 8, 64)} {
		_, err := tr.Observe("mid", m)
		require.NoError(t, err)
	}
	ma, src := tr.Model("mid")
	require.Equal(t, Measured, src)
	seedB := tr.lookup("fast").params
	mb, src := tr.Model("fast")
	require.Equal(t, Projected, src)
	bref := float64(min(testSpec().Limits["mid"].MaxLocalBatch, testSpec().Limits["fast"].MaxLocalBatch))
	ratio := seedB.Throughput(1, 1, bref, 0) / ma.Params.Throughput(1, 1, bref, 0)
	for _, c := range []struct{ n, r int }{{1, 1}, {1, 2}, {1, 4}, {2, 8}, {4, 16}} {
		want := ratio * ma.Params.Throughput(c.n, c.r, bref, 0)
		assert.InEpsilon(t, want, mb.Params.Throughput(c.n, c.r, bref, 0), 1e-9, "%+v", c)
	}
	// The projected model keeps B's memory limits.
	assert.Equal(t, testSpec().Limits["fast"], mb.Limits)
}

// TestReferenceChoice: the projection source is the type with the most
// multi-GPU evidence, not the first type.
func TestReferenceChoice(t *testing.T) {
	tr, err := New(testSpec(), nil)
	require.NoError(t, err)
	seedAll(t, tr)
	_, err = tr.Observe("fast", meas("fast", 1, 2, 128))
	require.NoError(t, err)
	for _, m := range []Measurement{meas("slow", 1, 2, 128), meas("slow", 1, 4, 128)} {
		_, err = tr.Observe("slow", m)
		require.NoError(t, err)
	}
	ref, ok := tr.Reference("mid")
	require.True(t, ok)
	assert.Equal(t, "slow", ref)
	// Tie on multi-GPU observations: the type with more observations wins.
	_, err = tr.Observe("fast", meas("fast", 1, 4, 128))
	require.NoError(t, err)
	_, err = tr.Observe("fast", meas("fast", 1, 1, 100))
	require.NoError(t, err)
	ref, ok = tr.Reference("mid")
	require.True(t, ok)
	assert.Equal(t, "fast", ref)
	_, ok = tr.Reference("fast")
	assert.False(t, ok, "a Measured type has no reference")
}

func TestModes(t *testing.T) {
	// Oracle: full profiles allowed, no projection.
	tr, err := New(testSpec(), &Options{Mode: Oracle})
	require.NoError(t, err)
	require.NoError(t, tr.Seed("fast", obs("fast", 1, 1, 64), obs("fast", 1, 2, 64), obs("fast", 2, 8, 64)))
	require.NoError(t, tr.Seed("mid", obs("mid", 1, 1, 64), obs("mid", 1, 1, 128)))
	assert.Equal(t, Measured, tr.Source("fast"))
	assert.Equal(t, Seeded, tr.Source("mid"))
	assert.Equal(t, None, tr.Source("slow"))

	// Profiled: multi-GPU seed rows are refused.
	tr, err = New(testSpec(), nil)
	require.NoError(t, err)
	err = tr.Seed("fast", obs("fast", 1, 2, 64))
	require.ErrorIs(t, err, ErrInvalidInput)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "fast", ie.Type)

	// No profiling: no seeds, no projection.
	tr, err = New(testSpec(), &Options{Mode: NoProfiling})
	require.NoError(t, err)
	require.ErrorIs(t, tr.Seed("fast", obs("fast", 1, 1, 64)), ErrInvalidInput)
	_, err = tr.Observe("fast", meas("fast", 1, 2, 64))
	require.NoError(t, err)
	_, err = tr.Observe("fast", meas("fast", 1, 4, 64))
	require.NoError(t, err)
	assert.Equal(t, Measured, tr.Source("fast"))
	assert.Equal(t, None, tr.Source("mid"))
	m, src := tr.Model("mid")
	assert.Equal(t, None, src)
	assert.Equal(t, testSpec().Limits["mid"], m.Limits, "a None model still carries the limits")
}

func TestCloneAndJSON(t *testing.T) {
	tr, err := New(testSpec(), nil)
	require.NoError(t, err)
	seedAll(t, tr)
	_, err = tr.Observe("mid", Measurement{Nodes: 1, Replicas: 2, LocalBatch: 256, StepTime: obs("mid", 1, 2, 256).StepTime,
		SyncTime: obs("mid", 1, 2, 256).SyncTime, Grad: &goodput.GradStats{Sqr: 2, Var: 30}})
	require.NoError(t, err)

	c := tr.Clone()
	_, err = c.Observe("fast", meas("fast", 1, 4, 128))
	require.NoError(t, err)
	assert.Equal(t, Projected, tr.Source("fast"), "the original is unaffected by the clone")
	assert.Equal(t, Measured, c.Source("fast"))

	data, err := json.Marshal(tr)
	require.NoError(t, err)
	var back Tracker
	require.NoError(t, json.Unmarshal(data, &back))
	for _, ty := range tr.Types() {
		m1, s1 := tr.Model(ty)
		m2, s2 := back.Model(ty)
		assert.Equal(t, s1, s2, ty)
		assert.Equal(t, m1, m2, ty)
	}
	assert.Equal(t, tr.Refits(), back.Refits())
	assert.Equal(t, tr.Grad(), back.Grad())

	// Corrupt state is refused with a typed error.
	for _, bad := range []string{
		`{"spec":{"InitBatch":0}}`,
		`{"spec":{"InitBatch":1,"MaxBatch":2,"Limits":{"x":{"MinLocalBatch":1,"MaxLocalBatch":2}}},"types":[{"name":"y","observations":[]}]}`,
		`{"spec":{"InitBatch":1,"MaxBatch":2,"Limits":{"x":{"MinLocalBatch":1,"MaxLocalBatch":2}}},"types":[{"name":"x","observations":[{"Nodes":1,"Replicas":1,"LocalBatch":1,"StepTime":-1,"SyncTime":0}]}]}`,
		`{"spec":{"InitBatch":1,"MaxBatch":2,"Limits":{"x":{"MinLocalBatch":1,"MaxLocalBatch":2}}},"types":[{"name":"x","observations":[],"params":{"Gamma":1,"AlphaC":1}}]}`,
	} {
		var tr Tracker
		assert.ErrorIs(t, json.Unmarshal([]byte(bad), &tr), ErrInvalidInput, bad)
	}
}

func TestBadInputs(t *testing.T) {
	good := testSpec()
	specs := map[string]func(s *Spec){
		"InitBatch":     func(s *Spec) { s.InitBatch = 0 },
		"MaxBatch":      func(s *Spec) { s.MaxBatch = 1 },
		"no types":      func(s *Spec) { s.Limits = nil },
		"bad limits":    func(s *Spec) { s.Limits = map[string]goodput.Limits{"x": {MinLocalBatch: 4, MaxLocalBatch: 2}} },
		"empty type":    func(s *Spec) { s.Limits = map[string]goodput.Limits{"": {MinLocalBatch: 1, MaxLocalBatch: 2}} },
		"grad":          func(s *Spec) { s.Grad.Var = math.NaN() },
		"hybrid micro":  func(s *Spec) { s.Stages = map[string]int{"x": 2} },
		"hybrid stages": func(s *Spec) { s.MicroBatches = 4; s.Stages = map[string]int{"x": 0} },
		"fixed below":   func(s *Spec) { s.FixedBatch = s.InitBatch - 1 },
		"fixed <0":      func(s *Spec) { s.FixedBatch = -1 },
		"fixed huge":    func(s *Spec) { s.FixedBatch = MaxCount + 1 },
	}
	for name, mut := range specs {
		s := good
		s.Limits = map[string]goodput.Limits{}
		for k, v := range good.Limits {
			s.Limits[k] = v
		}
		mut(&s)
		_, err := New(s, nil)
		assert.ErrorIs(t, err, ErrInvalidInput, name)
	}
	_, err := New(good, &Options{Mode: 7})
	assert.ErrorIs(t, err, ErrInvalidInput)
	fixed := good
	fixed.MaxBatch, fixed.FixedBatch = 0, good.InitBatch
	_, err = New(fixed, nil)
	assert.NoError(t, err, "a fixed batch needs no MaxBatch")

	tr, err := New(good, nil)
	require.NoError(t, err)
	ok := meas("fast", 1, 1, 64)
	bad := map[string]Measurement{
		"nodes":    {Nodes: 0, Replicas: 1, LocalBatch: 1, StepTime: 1},
		"replicas": {Nodes: 2, Replicas: 1, LocalBatch: 1, StepTime: 1},
		"batch":    {Nodes: 1, Replicas: 1, LocalBatch: 0, StepTime: 1},
		"step":     {Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: math.Inf(1)},
		"negative": {Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: -1},
		"sync":     {Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 1, SyncTime: 1},
		"nan sync": {Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 1, SyncTime: math.NaN()},
		"grad":     {Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 1, Grad: &goodput.GradStats{Sqr: -1}},
	}
	for name, m := range bad {
		_, err := tr.Observe("fast", m)
		assert.ErrorIs(t, err, ErrInvalidInput, name)
		var ie *InputError
		if assert.ErrorAs(t, err, &ie, name) {
			assert.Equal(t, "fast", ie.Type, name)
		}
	}
	_, err = tr.Observe("unknown", ok)
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorIs(t, tr.Seed("fast"), ErrInvalidInput, "no rows")
	assert.ErrorIs(t, tr.SetGrad(goodput.GradStats{Var: -1}), ErrInvalidInput)
	assert.Equal(t, 0, tr.Refits(), "rejected input changes nothing")
}

// TestHybrid: hybrid-parallel jobs project across types with their own
// stage counts.
func TestHybrid(t *testing.T) {
	spec := Spec{InitBatch: 48, MaxBatch: 384, Stages: map[string]int{"rtx": 8, "a100": 2}, MicroBatches: 48, Grad: goodput.GradStats{Sqr: 1, Var: 10}}
	tr, err := New(spec, nil)
	require.NoError(t, err)
	require.NoError(t, tr.Seed("rtx", goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 0.12, SyncTime: 0.02},
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 2, StepTime: 0.2, SyncTime: 0.02}))
	require.NoError(t, tr.Seed("a100", goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 0.16, SyncTime: 0.02},
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 2, StepTime: 0.28, SyncTime: 0.02}))
	_, err = tr.Observe("rtx", Measurement{Nodes: 2, Replicas: 2, LocalBatch: 1, StepTime: 0.2, SyncTime: 0.09})
	require.NoError(t, err)
	m, src := tr.Model("a100")
	assert.Equal(t, Projected, src)
	assert.Equal(t, 2, m.Stages)
	assert.Equal(t, 48, m.MicroBatches)
	c, ok := m.Best(1, 2)
	require.True(t, ok)
	assert.Equal(t, 96, c.GlobalBatch)
}

// TestSeedProfiles seeds trackers from the shared seed profiles (skipped
// without the data) and checks the fit reproduces the 1-GPU step times.
func TestSeedProfiles(t *testing.T) {
	rows, err := ReadSeedFile(filepath.Join(shareddata.Dir(t), "seed-profiles", "cifar10.csv"))
	require.NoError(t, err)
	byType := map[string][]goodput.Observation{}
	limits := map[string]goodput.Limits{}
	for _, r := range rows {
		o := r.Observation()
		byType[r.GPUType] = append(byType[r.GPUType], o)
		l := limits[r.GPUType]
		if l.MinLocalBatch == 0 || o.LocalBatch < l.MinLocalBatch {
			l.MinLocalBatch = o.LocalBatch
		}
		l.MaxLocalBatch = max(l.MaxLocalBatch, o.LocalBatch)
		limits[r.GPUType] = l
	}
	tr, err := New(Spec{InitBatch: 128, MaxBatch: 4096, Limits: limits}, nil)
	require.NoError(t, err)
	for _, ty := range slices.Sorted(maps.Keys(byType)) {
		require.NoError(t, tr.Seed(ty, byType[ty]...), ty)
		m, src := tr.Model(ty)
		require.Equal(t, Seeded, src)
		// The linear compute model fits the measured 1-GPU times well on
		// average (the measurements are not exactly linear in b).
		sum, worst := 0.0, 0.0
		for _, o := range byType[ty] {
			pred := m.Params.AccumTime(float64(o.LocalBatch))
			e := math.Abs(pred/(o.StepTime-o.SyncTime) - 1)
			sum += e
			worst = math.Max(worst, e)
		}
		assert.Less(t, sum/float64(len(byType[ty])), 0.12, ty)
		assert.Less(t, worst, 0.4, ty)
	}
	assert.Equal(t, len(byType), tr.Refits())
}

// TestSeedProfilesRename seeds from the shared seed-profiles file with the
// file's type names mapped to cluster names (skipped without the data).
func TestSeedProfilesRename(t *testing.T) {
	rows, err := ReadSeedFile(filepath.Join(shareddata.Dir(t), "seed-profiles", "bert.csv"))
	require.NoError(t, err)
	spec := Spec{InitBatch: 12, MaxBatch: 384, Limits: map[string]goodput.Limits{
		"aws": {MinLocalBatch: 4, MaxLocalBatch: 12}, "dgx-ext": {MinLocalBatch: 4, MaxLocalBatch: 48}, "rtx": {MinLocalBatch: 4, MaxLocalBatch: 12},
	}}
	tr, err := New(spec, nil)
	require.NoError(t, err)
	seeded, err := tr.SeedProfiles(rows, map[string]string{"t4": "aws", "dgx": "dgx-ext"})
	require.NoError(t, err)
	assert.Equal(t, []string{"aws", "dgx-ext", "rtx"}, seeded, "quad and v100 are not in the spec")
	for _, ty := range seeded {
		assert.Equal(t, Seeded, tr.Source(ty))
	}
	// A100 (dgx) is faster per sample than T4 at the same batch.
	a, _ := tr.Model("dgx-ext")
	b, _ := tr.Model("aws")
	assert.Greater(t, a.Params.Throughput(1, 1, 12, 0), b.Params.Throughput(1, 1, 12, 0))
}

// TestStaticSources: a Static offers its types as Measured and the others as
// None, except for a hybrid-parallel job, whose replica size (Stages) on an
// absent type is unknown: those types are Excluded.
func TestStaticSources(t *testing.T) {
	dp := Static{"a": {InitBatch: 1, MaxBatch: 8}}
	_, src := dp.Model("a")
	assert.Equal(t, Measured, src)
	_, src = dp.Model("b")
	assert.Equal(t, None, src)
	hybrid := Static{"a": {InitBatch: 1, MaxBatch: 8, Stages: 2, MicroBatches: 4}}
	m, src := hybrid.Model("a")
	assert.Equal(t, Measured, src)
	assert.Equal(t, 2, m.Stages)
	_, src = hybrid.Model("b")
	assert.Equal(t, Excluded, src)
}
