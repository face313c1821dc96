package bootstrap

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRatio(t *testing.T) *RatioProjection {
	t.Helper()
	tr, err := New(testSpec(), &Options{Mode: NoProfiling})
	require.NoError(t, err)
	return &RatioProjection{
		Tracker: tr,
		Order:   []string{"slow", "fast", "mid"},
		Xput1:   map[string]float64{"fast": 400, "mid": 200, "slow": 100},
		PerNode: map[string]int{"fast": 8, "mid": 8, "slow": 4},
	}
}

// runOn feeds a few measurements of the job on a type, up to maxReplicas.
func runOn(t *testing.T, tr *Tracker, ty string, maxReplicas int) {
	t.Helper()
	for r := 1; r <= maxReplicas; r *= 2 {
		for _, b := range []int{32, 64, 128} {
			_, err := tr.Observe(ty, meas(ty, 1, r, b))
			require.NoError(t, err)
		}
	}
}

func TestRatioProjectionNoModelBeforeFirstRun(t *testing.T) {
	p := newRatio(t)
	require.NoError(t, p.Validate())
	for _, ty := range p.Order {
		_, src := p.Model(ty)
		assert.Equal(t, None, src, ty)
		_, ok := p.Evaluate(ty, 1, 1)
		assert.False(t, ok, ty)
	}
}

func TestRatioProjectionFormula(t *testing.T) {
	p := newRatio(t)
	runOn(t, p.Tracker, "fast", 4)
	_, src := p.Model("fast")
	require.Equal(t, Measured, src)
	own, _ := p.Tracker.Model("fast")
	for _, tc := range []struct {
		ty          string
		nodes, r    int
		sourceNodes int
		ratio       float64
	}{
		// slow (4 GPUs per node) is projected from fast (8 per node): 8
		// replicas on two slow nodes use fast's one-node 8-replica goodput.
		{"slow", 2, 8, 1, 100.0 / 400},
		{"slow", 1, 4, 1, 100.0 / 400},
		{"mid", 2, 16, 2, 200.0 / 400},
		{"mid", 1, 1, 1, 200.0 / 400},
	} {
		_, src := p.Model(tc.ty)
		require.Equal(t, Projected, src, tc.ty)
		got, ok := p.Evaluate(tc.ty, tc.nodes, tc.r)
		require.True(t, ok, "%+v", tc)
		want, ok := own.Best(tc.sourceNodes, tc.r)
		require.True(t, ok)
		assert.InDelta(t, want.Goodput*tc.ratio, got.Goodput, 1e-9*want.Goodput, "%+v", tc)
		assert.InDelta(t, want.Throughput*tc.ratio, got.Throughput, 1e-9*want.Throughput, "%+v", tc)
		assert.Equal(t, want.GlobalBatch, got.GlobalBatch, "%+v: the source's batch choice", tc)
	}
	// Own model on the source type.
	got, ok := p.Evaluate("fast", 1, 4)
	require.True(t, ok)
	want, _ := own.Best(1, 4)
	assert.Equal(t, want, got)
}

// The source is the first type of Order with a model, even when another type
// has more multi-GPU evidence; a type's own 1-GPU run replaces its
// projection.
func TestRatioProjectionSourceAndReplacement(t *testing.T) {
	p := newRatio(t)
	runOn(t, p.Tracker, "fast", 8)
	runOn(t, p.Tracker, "slow", 1)
	_, src := p.Model("slow")
	require.Equal(t, Seeded, src, "slow's own 1-GPU model replaces the projection")
	slow, _ := p.Tracker.Model("slow")
	got, ok := p.Evaluate("mid", 1, 2)
	require.True(t, ok)
	want, ok := slow.Best(1, 2)
	require.True(t, ok)
	assert.InDelta(t, want.Goodput*2, got.Goodput, 1e-9*want.Goodput, "mid is projected from slow (first in Order), not fast")
	gs, ok := p.Evaluate("slow", 1, 2)
	require.True(t, ok)
	ws, _ := slow.Best(1, 2)
	assert.Equal(t, ws, gs)
}

func TestRatioProjectionWithoutRatio(t *testing.T) {
	p := newRatio(t)
	delete(p.Xput1, "mid")
	runOn(t, p.Tracker, "fast", 2)
	_, src := p.Model("mid")
	assert.Equal(t, None, src, "no static throughput: no projection")
	_, src = p.Model("slow")
	assert.Equal(t, Projected, src)
}

func TestRatioProjectionValidate(t *testing.T) {
	p := newRatio(t)
	p.Xput1["mid"] = math.NaN()
	err := p.Validate()
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidInput))
	assert.Contains(t, err.Error(), "mid")
	p = newRatio(t)
	p.PerNode["slow"] = 0
	assert.ErrorContains(t, p.Validate(), "slow")
	assert.Error(t, (&RatioProjection{}).Validate())
	var nilP *RatioProjection
	assert.Error(t, nilP.Validate())
}
