package sia_test

// Probes (issue 10, snapshot rules): a host lets its users edit a running
// job — its Kind, its bounds, a rigid job's count. An unpinned job is then
// re-decided within its new bounds (a Resize, Migrate or Preempt: never
// kept at a count its bounds no longer allow), whatever its Kind, as
// Job.Types' edits already are; a pinned job that its edit puts outside
// its bounds is an error naming the job and Jobs[i].State.Current.GPUs.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

func TestProbe5RunningJobEdited(t *testing.T) {
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.9, cross: 0.95}
	nodes := []sia.Node{{ID: "n0", Type: "g", GPUs: 8}, {ID: "n1", Type: "g", GPUs: 8}}
	on := func(k int) sia.Allocation {
		a := sia.Allocation{Type: "g", Nodes: 1, GPUs: k}
		for g := 0; g < k; g++ {
			a.Placement = append(a.Placement, sia.GPU{Node: "n0", Index: g})
		}
		return a
	}
	type edit struct {
		name string
		cur  int
		job  sia.Job // the job as edited (Models, ID and State are set below)
	}
	var edits []edit
	for _, cur := range []int{1, 2, 4, 8} {
		for _, g := range []int{1, 2, 3, 4, 8, 12} {
			if g != cur {
				edits = append(edits, edit{fmt.Sprintf("rigid %d->%d", cur, g), cur, sia.Job{Kind: sia.Rigid, GPUs: g}})
			}
		}
		edits = append(edits,
			edit{fmt.Sprintf("adaptive on %d to rigid %d", cur, cur*2), cur, sia.Job{Kind: sia.Rigid, GPUs: cur * 2}},
			edit{fmt.Sprintf("strong on %d, max %d", cur, max(cur/2, 1)), cur, sia.Job{Kind: sia.StrongScaling, MaxGPUs: max(cur/2, 1)}},
			edit{fmt.Sprintf("adaptive on %d, min %d", cur, cur+1), cur, sia.Job{MinGPUs: cur + 1}},
		)
	}
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	for _, e := range edits {
		for _, pin := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pinned=%v", e.name, pin), func(t *testing.T) {
				j := e.job
				j.ID, j.Models, j.NonPreemptible = "edited", m, pin
				j.State = sia.JobState{Current: on(e.cur), PeakReplicas: e.cur}
				other := sia.Job{ID: "other", Models: m, MaxGPUs: 2}
				snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{other, j}}
				inBounds := e.cur >= max(j.MinGPUs, 1) && (j.MaxGPUs == 0 || e.cur <= j.MaxGPUs)
				if j.Kind == sia.Rigid {
					inBounds = e.cur == j.GPUs
				}
				plan, err := s.Round(context.Background(), snap)
				if pin && !inBounds {
					var ie *sia.InputError
					require.True(t, errors.As(err, &ie), "a pinned job outside its bounds is accepted: %v", err)
					assert.Equal(t, "edited", ie.Job)
					assert.Equal(t, "Jobs[1].State.Current.GPUs", ie.Field)
					return
				}
				require.NoError(t, err)
				probeCheck(t, snap, s.Options(), plan)
				d := plan.Decisions[1]
				if !inBounds {
					assert.NotEqual(t, sia.Keep, d.Action, "kept on %d GPUs outside its new bounds", e.cur)
				}
				if j.Kind == sia.Rigid && j.GPUs <= 16 {
					assert.Equal(t, j.GPUs, d.Allocation.GPUs, "the edited rigid job does not run at its new count (%v, %v)", d.Action, d.Reason)
				}
			})
		}
	}
}
