package placement

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlaceContextCut: with its ctx ended from the start, placement makes
// no eviction (the 4-GPU job that TestEviction places by evicting k1
// waits), every kept job keeps its GPUs, a job that fits on free GPUs is
// still placed, the result follows Place's rules and says it was cut. With
// a live ctx it is Place's result.
func TestPlaceContextCut(t *testing.T) {
	nodes := mkNodes("a", 3, 4)
	reqs := []Request{
		{Job: "k1", Type: "a", GPUs: 1, Current: gpus("a-0", 0)},
		{Job: "k2", Type: "a", GPUs: 1, Current: gpus("a-1", 0)},
		{Job: "k3", Type: "a", GPUs: 2, Current: gpus("a-2", 0, 1)},
		{Job: "n", Type: "a", GPUs: 4},
		{Job: "s", Type: "a", GPUs: 2},
	}
	full, err := Place(nodes, reqs)
	require.NoError(t, err)
	require.NotEmpty(t, full.Evicted, "the uncut placement evicts to place n")
	assert.False(t, full.Cut)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := PlaceContext(ctx, nodes, reqs)
	require.NoError(t, err)
	assert.True(t, res.Cut)
	assert.Empty(t, res.Evicted, "no eviction after ctx ended")
	assert.Empty(t, res.Migrated)
	for _, r := range reqs[:3] {
		assert.Equal(t, r.Current, res.Placements[r.Job], "kept job %s keeps its GPUs", r.Job)
	}
	assert.Equal(t, []string{"n"}, res.Unplaced)
	assert.Len(t, res.Placements["s"], 2, "a job that fits on free GPUs is placed")
	checkResult(t, nodes, reqs, res, false)

	live, err := PlaceContext(context.Background(), nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, full, live)
}
