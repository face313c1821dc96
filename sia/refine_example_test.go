package sia_test

import (
	"context"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"time"

	"github.com/sia-sched/sia/sia"
)

// ExampleScheduler_WithGoodputEdit adds a stickiness bonus to every running
// job's current configuration (here it outweighs the poorly scaling 4-GPU
// configuration plain Sia picks); the round recomputes the values (rounding, clipping,
// dominance) before solving.
func ExampleScheduler_WithGoodputEdit() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := sia.Snapshot{
		Now:   t0.Add(time.Hour),
		Nodes: []sia.Node{{ID: "b0", Type: "B", GPUs: 4}},
		Jobs: []sia.Job{{ID: "J1", Submitted: t0, Models: siatest.Table{"B": {1: 1, 2: 1.9, 4: 2.6}},
			State: sia.JobState{Current: sia.Allocation{Type: "B", Nodes: 1, GPUs: 2,
				Placement: []sia.GPU{{Node: "b0", Index: 0}, {Node: "b0", Index: 1}}}}}},
	}
	s, _ := sia.New(&sia.Options{Artifact: &sia.ArtifactKnobs{Round: true, Clip: true}, NoScaleUpCap: true})
	sticky := s.WithGoodputEdit(func(_ *sia.Job, _ sia.Allocation, current bool, g float64) float64 {
		if current {
			return g * 1.5
		}
		return g
	})
	for _, sched := range []*sia.Scheduler{s, sticky} {
		plan, err := sched.Round(context.Background(), snap)
		if err != nil {
			panic(err)
		}
		d := plan.Decisions[0]
		fmt.Println(d.Action, d.Allocation.GPUs)
	}
	// Output:
	// resize 4
	// keep 2
}
