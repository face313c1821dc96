package sia

import (
	"context"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrackerThroughRounds drives a job with a bootstrap.Tracker through
// rounds: seeded models first, then the type it ran on multi-GPU becomes
// Measured and the other type Projected from it, visible in the matrix.
func TestTrackerThroughRounds(t *testing.T) {
	truth := map[string]goodput.Params{
		"A": {AlphaC: 0.01, BetaC: 0.0002, AlphaN: 0.05, BetaN: 0.01, AlphaR: 0.01, BetaR: 0.004, Gamma: 1.3},
		"B": {AlphaC: 0.02, BetaC: 0.0005, AlphaN: 0.08, BetaN: 0.02, AlphaR: 0.02, BetaR: 0.006, Gamma: 1.3},
	}
	measure := func(ty string, n, r, b int) goodput.Observation {
		p := truth[ty]
		step := p.IterTime(n, r, float64(b), 0)
		return goodput.Observation{Nodes: n, Replicas: r, LocalBatch: b, StepTime: step, SyncTime: step - p.AccumTime(float64(b))}
	}
	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 64, MaxBatch: 2048, Grad: goodput.GradStats{Sqr: 1, Var: 30},
		Limits: map[string]goodput.Limits{"A": {MinLocalBatch: 16, MaxLocalBatch: 512}, "B": {MinLocalBatch: 16, MaxLocalBatch: 256}}}, nil)
	require.NoError(t, err)
	for _, ty := range []string{"A", "B"} {
		require.NoError(t, tr.Seed(ty, measure(ty, 1, 1, 16), measure(ty, 1, 1, 64), measure(ty, 1, 1, 256)))
	}
	snap := Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "j", Submitted: t0, Models: tr}}}
	s, err := New(nil)
	require.NoError(t, err)
	sources := func(m *goodputMatrix) map[string]bootstrap.Source {
		out := map[string]bootstrap.Source{}
		for _, e := range m.Rows[0].Entries {
			out[e.Config.Type] = e.Source
		}
		return out
	}
	var seen []map[string]bootstrap.Source
	for round := 0; round < 5; round++ {
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		checkPlan(t, &snap, &p)
		seen = append(seen, sources(p.matrix))
		d := p.Decisions[0]
		require.True(t, d.Allocation.Running())
		applyPlan(&snap, &p, 10*time.Minute)
		o := measure(d.Allocation.Type, d.Allocation.Nodes, d.Replicas, d.LocalBatch)
		_, err = tr.Observe(d.Allocation.Type, bootstrap.Measurement{Nodes: o.Nodes, Replicas: o.Replicas, LocalBatch: o.LocalBatch, StepTime: o.StepTime, SyncTime: o.SyncTime})
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]bootstrap.Source{"A": bootstrap.Seeded, "B": bootstrap.Seeded}, seen[0])
	last := seen[len(seen)-1]
	assert.Equal(t, bootstrap.Measured, last["A"], "the job ran multi-GPU on A (the faster type)")
	assert.Equal(t, bootstrap.Projected, last["B"], "B is projected from A")
	assert.Greater(t, snap.Jobs[0].State.PeakReplicas, 1, "Advance keeps the peak")
}
