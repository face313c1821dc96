package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/shareddata"
)

func loadTrace(t *testing.T) *TraceTruth {
	t.Helper()
	dir := shareddata.Path(t, "profiles")
	c, err := ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	tr, err := LoadTrace(dir, c.Types())
	require.NoError(t, err)
	return tr
}

func TestTraceConstants(t *testing.T) {
	tr := loadTrace(t)
	for _, tc := range []struct {
		app                  string
		m0, maxB, epochs     int
		delay, slow, penalty float64
	}{
		{"cifar10", 128, 4096, 100, 50, 1.8, 30},
		{"bert", 12, 384, 2, 120, 1.2, 120},
		{"imagenet", 200, 12800, 90, 250, 1.2, 250},
		{"yolov3", 8, 512, 50, 80, 1.2, 45},
		{"deepspeech2", 20, 640, 80, 25, 1.2, 25},
	} {
		a, ok := tr.App(tc.app)
		require.True(t, ok, tc.app)
		assert.Equal(t, tc.m0, a.InitBatch, tc.app)
		assert.Equal(t, tc.maxB, a.MaxBatch, tc.app)
		assert.Equal(t, tc.epochs, a.MaxEpochs, tc.app)
		assert.Equal(t, tc.delay, a.RestartDelay, tc.app)
		assert.Equal(t, tc.slow, a.Slowdown, tc.app)
		assert.Equal(t, tc.penalty, a.RestartCost, tc.app)
	}
	// Memory limits (the published artifact's table), including the deepspeech2/rtx override.
	_, hi := tr.LocalRange("deepspeech2", "rtx")
	assert.Equal(t, 57, hi)
	lo, hi := tr.LocalRange("bert", "a100")
	assert.Equal(t, 4, lo)
	assert.Equal(t, 48, hi)
	assert.InDelta(t, 10062.6, tr.Xput1("cifar10", "a100"), 0.1)
}

func TestTraceStepTimeInterpolation(t *testing.T) {
	tr := loadTrace(t)
	seed := tr.SeedProfile("cifar10", "t4")
	require.NotEmpty(t, seed)
	// Exact at measured 1-GPU rows (placement "1" has one row per batch).
	for _, o := range seed {
		s, y, ok := tr.StepTime("cifar10", "t4", []int{1}, o.LocalBatch)
		require.True(t, ok)
		assert.InDelta(t, o.StepTime, s, 1e-12)
		assert.InDelta(t, o.SyncTime, y, 1e-12)
	}
	// Between two measured batches: between their times.
	a, b := seed[0], seed[1]
	mid := (a.LocalBatch + b.LocalBatch) / 2
	s, _, ok := tr.StepTime("cifar10", "t4", []int{1}, mid)
	require.True(t, ok)
	assert.GreaterOrEqual(t, s, min(a.StepTime, b.StepTime))
	assert.LessOrEqual(t, s, max(a.StepTime, b.StepTime))
	// Rotations are the same placement.
	s1, _, _ := tr.StepTime("cifar10", "t4", []int{1, 3}, 64)
	s2, _, _ := tr.StepTime("cifar10", "t4", []int{3, 1}, 64)
	assert.Equal(t, s1, s2)
	// A placement absent from the placement file: interpolated over
	// (nodes, replicas, batch), positive and finite.
	s, y, ok := tr.StepTime("cifar10", "t4", []int{4, 4, 4, 4, 4, 4, 4, 4, 4}, 128)
	require.True(t, ok)
	assert.Greater(t, s, 0.0)
	assert.GreaterOrEqual(t, y, 0.0)
	assert.Less(t, s, 10.0)
}

func TestTraceGradStatsAndProgress(t *testing.T) {
	tr := loadTrace(t)
	cv := tr.Curves("cifar10")
	require.Len(t, cv, 6)
	for _, c := range cv {
		g := tr.GradStats("cifar10", c.Batch, 3)
		assert.InDelta(t, c.Sqr[3], g.Sqr, 1e-12)
		assert.InDelta(t, c.Var[3], g.Var, 1e-12)
	}
	// Linear between validated batch sizes.
	g := tr.GradStats("cifar10", (cv[0].Batch+cv[1].Batch)/2, 5)
	assert.InDelta(t, (cv[0].Sqr[5]+cv[1].Sqr[5])/2, g.Sqr, 1e-9)
	prev := 0.0
	for e := 1; e <= 100; e++ {
		p := tr.Progress("cifar10", e)
		assert.Greater(t, p, prev)
		prev = p
	}
	assert.InDelta(t, 39062.9, tr.Progress("cifar10", 100), 1)
}

func TestModelTruth(t *testing.T) {
	m, err := LoadModel()
	require.NoError(t, err)
	for _, app := range []string{"bert", "cifar10", "deepspeech2", "imagenet", "yolov3"} {
		a, ok := m.App(app)
		require.True(t, ok, app)
		for _, typ := range []string{"t4", "a100", "rtx"} {
			require.True(t, m.Supports(app, typ), "%s/%s", app, typ)
			lo, hi := m.LocalRange(app, typ)
			require.Greater(t, hi, 0)
			s, y, ok := m.StepTime(app, typ, []int{4}, hi)
			require.True(t, ok)
			assert.Greater(t, s, 0.0)
			assert.GreaterOrEqual(t, y, 0.0)
			assert.Less(t, y, s)
			assert.Greater(t, lo, 0)
			assert.NotEmpty(t, m.SeedProfile(app, typ))
		}
		g := m.GradStats(app, float64(a.InitBatch), 0)
		assert.Greater(t, g.Var, 0.0)
		assert.Greater(t, m.Progress(app, a.MaxEpochs), m.Progress(app, 1))
	}
	// A short simulation with the fixed policy finishes.
	wl := &Workload{Name: "w", Jobs: []JobSpec{{Name: "cifar10-0", App: "cifar10", Replicas: 4, Batch: 2048}}}
	c, _ := ParseCluster("t4:2x4", 1)
	res, err := Run(context.Background(), Config{Cluster: c, Truth: m}, wl, Fixed{GPUs: 4})
	require.NoError(t, err)
	assert.Greater(t, res.Jobs[0].JCT, 0.0)
}

func TestFTFToy(t *testing.T) {
	// One job alone on a 1-GPU cluster: its isolated run is the same
	// simulation, so ρ = 1.
	cl := Cluster{Groups: []NodeGroup{{Type: "a", Nodes: 1, GPUsPerNode: 1}}}
	wl := toyWorkload(JobSpec{Name: "j"})
	res, err := Run(context.Background(), Config{Cluster: cl, Truth: toyTruth{}, Round: 60, Rigid: true}, wl, Fixed{GPUs: 1})
	require.NoError(t, err)
	rs, err := FTF(context.Background(), cl, toyTruth{}, wl, res, true)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.InDelta(t, 1.0, rs[0].Rho, 1e-9)
}
