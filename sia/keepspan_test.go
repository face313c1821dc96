package sia

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sia-sched/sia/sia/siatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeptRowSpanning: a running job whose minimum no pool of its type holds
// runs on a configuration spanning the type's pools (20 GPUs on two 8-GPU
// nodes and one 4-GPU node). A round out of time keeps it (its row is its
// current configuration only): the row offers no other spanning
// configuration, so the round cannot resize or move it. Before, a kept row
// took every spanning configuration of the job's bounds, and the solver
// could pick one of them (17 GPUs: a resize) for a job the round had no
// time to value.
func TestKeptRowSpanning(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tbl := siatest.Table{"A": {}}
	for g := 1; g <= 40; g++ {
		tbl["A"][g] = float64(g)
	}
	nodes := []Node{{ID: "a0", Type: "A", GPUs: 8}, {ID: "a1", Type: "A", GPUs: 8}, {ID: "b0", Type: "A", GPUs: 4}, {ID: "b1", Type: "A", GPUs: 4}, {ID: "b2", Type: "A", GPUs: 4}}
	j := Job{ID: "big", MinGPUs: 17, Models: tbl, Submitted: t0}
	j.State.Current = Allocation{Type: "A", Nodes: 3, GPUs: 20}
	for n, k := range map[string]int{"a0": 8, "a1": 8, "b0": 4} {
		for i := range k {
			j.State.Current.Placement = append(j.State.Current.Placement, GPU{Node: n, Index: i})
		}
	}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: nodes, Jobs: []Job{j}}
	// Enough queued jobs that a round out of time cuts the rows short.
	for i := range 40 {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("q%d", i), Models: tbl, Submitted: t0})
	}

	// With time, the job's row has several spanning configurations.
	s, err := New(nil)
	require.NoError(t, err)
	full, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &full)
	spans := 0
	for _, e := range full.matrix.Rows[0].Entries {
		if e.Config.Spanning() {
			spans++
		}
	}
	require.Greater(t, spans, 1, "the full row offers several spanning configurations")

	// Out of time, its kept row is its current configuration only.
	p := roundOutOfTime(t, s, snap)
	checkPlan(t, &snap, &p)
	row := p.matrix.Rows[0]
	require.True(t, row.Partial)
	require.Len(t, row.Entries, 1, "kept row: %+v", row.Entries)
	assert.True(t, row.Entries[0].Current)
	// Whether the job then keeps its GPUs is up to the span solver
	// (solveSpans) and placement, not tested here: a round out of time
	// preempts it (ReasonDeadline), the solver's warm start having no
	// option for a spanning current configuration.
}
