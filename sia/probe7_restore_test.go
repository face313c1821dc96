package sia_test

// Probes (issue 10, snapshot rules): Advance keeps a job's RestoreUntil
// while the job keeps its allocation, so every job that ever restarted and
// still runs carries a RestoreUntil in the past. When such a job's Models
// come to exclude the type it runs on (its owner learned it runs out of
// memory there, a tracker's Limits changed), the job is not pinned: the
// round must migrate or preempt it, not fail as if it could not move.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

func TestProbe7EndedRestoreExcludedType(t *testing.T) {
	onA := probeModel{speed: map[string]float64{"a": 1, "b": 0.8}, gain: 0.9, cross: 0.9}
	onlyB := probeModel{speed: map[string]float64{"b": 0.8}, gain: 0.9, cross: 0.9}
	nodes := []sia.Node{{ID: "a0", Type: "a", GPUs: 8}, {ID: "b0", Type: "b", GPUs: 4}}
	cur := sia.Allocation{Type: "a", Nodes: 1, GPUs: 2, Placement: []sia.GPU{{Node: "a0", Index: 0}, {Node: "a0", Index: 1}}}
	for name, c := range map[string]struct {
		restoreUntil time.Time
		restoring    bool
		np           bool
		wantErr      bool
	}{
		"restore ended a minute ago":    {restoreUntil: probeT0.Add(-time.Minute)},
		"restore ended a year ago":      {restoreUntil: probeT0.AddDate(-1, 0, 0)},
		"restore ends now":              {restoreUntil: probeT0},
		"never restored":                {},
		"restore still running":         {restoreUntil: probeT0.Add(time.Minute), wantErr: true},
		"host says restoring":           {restoring: true, wantErr: true},
		"non-preemptible, restore over": {restoreUntil: probeT0.Add(-time.Minute), np: true, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{
				{ID: "j", Models: onlyB, NonPreemptible: c.np, State: sia.JobState{Current: cur, RestoreUntil: c.restoreUntil, Restoring: c.restoring, Restarts: 1}},
				{ID: "k", Models: onA},
			}}
			s, err := sia.New(&sia.Options{RoundTimeout: -1})
			require.NoError(t, err)
			plan, err := s.Round(context.Background(), snap)
			if c.wantErr {
				assert.ErrorIs(t, err, sia.ErrInvalidInput)
				return
			}
			require.NoError(t, err)
			probeCheck(t, snap, s.Options(), plan)
			d := plan.Decisions[0]
			assert.NotEqual(t, "a", d.Allocation.Type, "job j kept on a type its models exclude")
			assert.Contains(t, []sia.Action{sia.Migrate, sia.Preempt}, d.Action)
		})
	}
}
