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

// TestProbe7RunningJobBecomesPipeline: a host resubmits a running job under
// the same ID as a hybrid-parallel job (its models now have pipeline
// stages) while it holds a count that is not whole replicas of them. An
// unpinned job outside its bounds (the replica size is one) is resized,
// migrated or preempted, as for MinGPUs and MaxGPUs; only a pinned one is
// an error.
func TestProbe7RunningJobBecomesPipeline(t *testing.T) {
	nodes := []sia.Node{{ID: "a0", Type: "a", GPUs: 8}, {ID: "b0", Type: "b", GPUs: 6}}
	for _, c := range []struct {
		name   string
		stages int
		gpus   int
		pinned bool
	}{
		{"4 GPUs, now 3 stages", 3, 4, false},
		{"1 GPU, now 2 stages", 2, 1, false},
		{"5 GPUs, now 4 stages", 4, 5, false},
		{"7 GPUs, now 8 stages", 8, 7, false},
		{"4 GPUs, now 3 stages, non-preemptible", 3, 4, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := probeModel{speed: map[string]float64{"a": 1, "b": 0.9}, gain: 0.9, cross: 0.9, stages: c.stages}
			cur := sia.Allocation{Type: "a", Nodes: 1, GPUs: c.gpus}
			for g := 0; g < c.gpus; g++ {
				cur.Placement = append(cur.Placement, sia.GPU{Node: "a0", Index: g})
			}
			snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{
				{ID: "j", Models: m, NonPreemptible: c.pinned, State: sia.JobState{Current: cur, Restarts: 2, PeakReplicas: c.gpus}},
				{ID: "k", Models: probeModel{speed: map[string]float64{"a": 1, "b": 1}, gain: 0.9, cross: 0.9}},
			}}
			s, err := sia.New(&sia.Options{RoundTimeout: -1})
			require.NoError(t, err)
			for _, d := range []time.Duration{-1, 0} { // no deadline; out of time
				ctx, cancel := context.Background(), func() {}
				if d == 0 {
					ctx, cancel = context.WithTimeout(context.Background(), 0)
				}
				plan, err := s.Round(ctx, snap)
				cancel()
				if c.pinned {
					var ie *sia.InputError
					require.ErrorAs(t, err, &ie)
					assert.Equal(t, "Jobs[0].State.Current.GPUs", ie.Field)
					return
				}
				require.NoError(t, err, "deadline %v", d)
				probeCheck(t, snap, s.Options(), plan)
				a := plan.Decisions[0].Allocation
				assert.Zero(t, a.GPUs%c.stages, "deadline %v: job j given %d GPUs, not whole %d-stage replicas (%v)", d, a.GPUs, c.stages, plan.Decisions[0].Action)
				assert.NotEqual(t, sia.Keep, plan.Decisions[0].Action)
			}
		})
	}
}
