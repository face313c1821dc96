package sia

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLateCheapRows: the queued jobs whose cheap row is built even out of
// time are bounded by the free GPUs and by a quarter of the allowance, and
// are at least minCheapRows.
func TestLateCheapRows(t *testing.T) {
	// 40 free GPUs, 2 types; a 2 ms allowance affords 500 µs / (2 types × 5 µs) = 50 rows
	for _, c := range []struct {
		left    time.Duration
		workers int
		want    int
	}{
		{0, 1, 40},                      // the free GPUs bound
		{0, 3, 13},                      // per worker
		{time.Second, 1, 40},            // more time, still the free GPUs
		{-time.Second, 8, minCheapRows}, // at least minCheapRows
	} {
		assert.Equal(t, c.want, lateCheapRows(40, 2, c.left, c.workers), "left %v, workers %d", c.left, c.workers)
	}
	assert.Equal(t, 50, lateCheapRows(4000, 2, 0, 1), "the time bound")
}

// TestRoundOutOfTimeStartsFreeGPUs: a round already out of time starts as
// many queued jobs as its free GPUs take (within the time bound), not only
// minCheapRows of them.
func TestRoundOutOfTimeStartsFreeGPUs(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: []Node{{ID: "a0", Type: "A", GPUs: 64}}}
	for i := range 60 {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("j%02d", i), Models: linear, Submitted: t0})
	}
	s, err := New(nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	p, err := s.Round(ctx, snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &p)
	started := 0
	for _, d := range p.Decisions {
		if d.Action == Start {
			started++
		}
	}
	assert.Greater(t, started, 4*minCheapRows, "queued jobs started on 64 free GPUs")
}
