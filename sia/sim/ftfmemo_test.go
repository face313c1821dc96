package sim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIsolatedRunsKeyAndShare: an IsolatedRuns shared across FTF calls
// gives exactly the ratios of fresh calls, also when the same application
// and request come back in another category (adaptive, then
// strong-scaling: different isolated runs, which a key without the
// category confused).
func TestIsolatedRunsKeyAndShare(t *testing.T) {
	m, err := LoadModel()
	require.NoError(t, err)
	c, err := ParseCluster("t4:2x4", 1)
	require.NoError(t, err)
	ctx := context.Background()
	memo := NewIsolatedRuns(m)
	var fair []float64
	for _, cat := range []string{CategoryAdaptive, CategoryStrongScaled, CategoryAdaptive} {
		wl := &Workload{Name: cat, Jobs: []JobSpec{{Name: "j", App: "cifar10", Replicas: 2, Batch: 4096, Category: cat}}}
		res, err := Run(ctx, Config{Cluster: c, Truth: m}, wl, Fixed{GPUs: 2})
		require.NoError(t, err)
		fresh, err := FTF(ctx, c, m, wl, res, false)
		require.NoError(t, err)
		require.Len(t, fresh, 1)
		require.NotEmpty(t, fresh[0].PerType)
		fair = append(fair, fresh[0].PerType[0].FairJCT)
		shared, err := memo.FTF(ctx, c, wl, res, false)
		require.NoError(t, err)
		assert.Equal(t, fresh, shared, cat)
	}
	assert.NotEqual(t, fair[0], fair[1], "the categories' isolated runs differ")
}
