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
	// That it then keeps its GPUs: TestRoundKeepsSpanningOutOfTime.
}

// spanKeepSnap is a snapshot with job "big" running on 20 GPUs spanning the
// pools of type A (two 8-GPU nodes and one 4-GPU node), and queued jobs: on
// type A (which has two more 4-GPU nodes), or, with bNodes > 0, on type B
// only (bNodes 8-GPU nodes; A then has no other node and big runs on A
// only, so that keeping big is also what a round with time decides).
func spanKeepSnap(queued, bNodes int) Snapshot {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tbl := siatest.Table{"A": {}}
	qtbl := siatest.Table{"A": tbl["A"]}
	for g := 1; g <= 40; g++ {
		tbl["A"][g] = float64(g)
	}
	nodes := []Node{{ID: "a0", Type: "A", GPUs: 8}, {ID: "a1", Type: "A", GPUs: 8}, {ID: "b0", Type: "A", GPUs: 4}}
	if bNodes == 0 {
		nodes = append(nodes, Node{ID: "b1", Type: "A", GPUs: 4}, Node{ID: "b2", Type: "A", GPUs: 4})
	} else {
		tbl["B"] = map[int]float64{} // excluded: A only
		qtbl = siatest.Table{"A": {}, "B": {}}
		for g := 1; g <= 8; g++ {
			qtbl["B"][g] = float64(g)
		}
		for n := range bNodes {
			nodes = append(nodes, Node{ID: fmt.Sprintf("B%d", n), Type: "B", GPUs: 8})
		}
	}
	j := Job{ID: "big", MinGPUs: 17, Models: tbl, Submitted: t0}
	j.State.Current = Allocation{Type: "A", Nodes: 3, GPUs: 20}
	for _, n := range []struct {
		id string
		k  int
	}{{"a0", 8}, {"a1", 8}, {"b0", 4}} {
		for i := range n.k {
			j.State.Current.Placement = append(j.State.Current.Placement, GPU{Node: n.id, Index: i})
		}
	}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: nodes, Jobs: []Job{j}}
	for i := range queued {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("q%d", i), Models: qtbl, Submitted: t0})
	}
	return snap
}

// TestRoundKeepsSpanningOutOfTime (issue 10): a round out of time keeps a
// running job on a configuration spanning its type's pools (Action Keep,
// same GPUs), with an expired ctx and with a few milliseconds on a larger
// snapshot (whose queued jobs run on another type: keeping the job is then
// also the optimum). Before, it preempted it (ReasonDeadline): the
// solver's warm start had no option for the spanning current
// configuration, and solveSpans, out of time, solved only its first branch
// (no spanning entry taken).
func TestRoundKeepsSpanningOutOfTime(t *testing.T) {
	for _, tc := range []struct {
		name           string
		queued, bNodes int
		timeout        time.Duration // 0: roundOutOfTime
	}{
		{"expired", 40, 0, 0},
		{"expired/other type", 40, 8, 0},
		{"few ms", 800, 64, 3 * time.Millisecond},
		{"with time", 800, 64, time.Minute}, // the control: the optimum keeps big
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := spanKeepSnap(tc.queued, tc.bNodes)
			s, err := New(nil)
			require.NoError(t, err)
			var p Plan
			if tc.timeout == 0 {
				p = roundOutOfTime(t, s, snap)
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
				defer cancel()
				p, err = s.Round(ctx, snap)
				require.NoError(t, err)
			}
			checkPlan(t, &snap, &p)
			d := p.Decisions[0]
			assert.Equal(t, Keep, d.Action, "big: %+v", d)
			assert.ElementsMatch(t, snap.Jobs[0].State.Current.Placement, d.Allocation.Placement)
		})
	}
}
