package simcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/shareddata"
)

// TestGPTScaling checks the hybrid-parallel GPT points against the profile
// rule written out by hand, and that the library's fitted model follows the
// measured throughput within 2 % wherever the batch fits.
func TestGPTScaling(t *testing.T) {
	pts, err := GPTScaling(filepath.Join(shareddata.Dir(t), "profiles"))
	require.NoError(t, err)
	seen := map[string]int{}
	for _, p := range pts {
		seen[p.Type]++
		require.Equal(t, GPTStages[p.Type], p.Stages)
		assert.Zero(t, p.GPUs%p.Stages, "%s %d GPUs: whole pipelines only", p.Type, p.GPUs)
		assert.Equal(t, p.GPUs/p.Stages, p.Replicas)
		assert.Equal(t, 48*p.Replicas, p.Batch)
		want := float64(p.Batch) / (3*float64(p.Stages-1+48)*p.MicroBatchTime + p.AllReduceTime)
		assert.InDelta(t, want, p.Profiled, 1e-9)
		if p.Batch <= 384 {
			require.Positive(t, p.Model, "%s %d GPUs", p.Type, p.GPUs)
			assert.InEpsilon(t, p.Profiled, p.Model, 0.02, "%s %d GPUs", p.Type, p.GPUs)
			assert.Greater(t, p.ModelEfficiency, 0.0)
			assert.LessOrEqual(t, p.ModelEfficiency, 1.0)
		} else {
			assert.Zero(t, p.Model, "%s %d GPUs: batch %d above the maximum", p.Type, p.GPUs, p.Batch)
		}
	}
	assert.Positive(t, seen["dgx-ext"])
	assert.Positive(t, seen["rtx"])
	// One A100 pipeline (2 GPUs, 21.2 s per 48 samples) against one RTX
	// pipeline (8 GPUs, 16.3 s plus its all-reduce).
	assert.InDelta(t, 48/(3*49*0.144+0.01617), pts[0].Profiled, 1e-6)

	dir := t.TempDir()
	require.NoError(t, WriteGPTScalingPlot(dir, pts))
	require.NoError(t, WriteGPTCSV(filepath.Join(dir, "gpt.csv"), pts))
	for _, f := range []string{"gpt_scaling.png", "gpt_scaling.svg", "gpt.csv"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Positive(t, st.Size())
	}
}

func TestGPTScalingMissingData(t *testing.T) {
	_, err := GPTScaling(t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gpt_pmp")
}
