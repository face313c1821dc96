package sia_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// TestReservedAboveCapacityWithholdsType: a reservation larger than its
// type's capacity this round (a node of the type drained while the host's
// Reserved still counts it) withholds the whole type instead of failing the
// round; a smaller one withholds what it says. A pinned job on the type is
// then infeasible, as for any reservation it does not fit beside.
func TestReservedAboveCapacityWithholdsType(t *testing.T) {
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	cases := map[string]struct {
		reserved int
		drain    bool // a1 is down this round: a has 8 GPUs
		usable   int  // GPUs of a the plan may use
	}{
		"12 of 16":             {reserved: 12, usable: 4},
		"16 of 16":             {reserved: 16, usable: 0},
		"12 of 8 (a1 drained)": {reserved: 12, drain: true, usable: 0},
		"8 of 8 (a1 drained)":  {reserved: 8, drain: true, usable: 0},
		"MaxInt of 16":         {reserved: math.MaxInt, usable: 0},
		"5 of 8 (a1 drained)":  {reserved: 5, drain: true, usable: 3},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			snap := probe7AbsentSnap(true)
			snap.Jobs[3].NonPreemptible = false // p may be moved off a
			if c.drain {
				snap.Nodes = append(snap.Nodes[:1:1], snap.Nodes[2:]...)
			}
			snap.Reserved = map[string]int{"a": c.reserved}
			require.NoError(t, snap.Validate())
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err)
			probeCheck(t, snap, s.Options(), plan)
			used := 0
			for _, d := range plan.Decisions {
				if d.Allocation.Type == "a" {
					used += d.Allocation.GPUs
				}
			}
			assert.LessOrEqual(t, used, c.usable, "GPUs of a allocated beyond capacity less the reservation")

			snap.Jobs[3].NonPreemptible = true // p pinned on a
			if c.usable >= snap.Jobs[3].State.Current.GPUs {
				_, err := s.Round(context.Background(), snap)
				require.NoError(t, err)
				return
			}
			_, err = s.Round(context.Background(), snap)
			var inf *sia.InfeasibleError
			require.True(t, errors.As(err, &inf), "pinned job beside a reservation of the whole type: %v", err)
			assert.Equal(t, "p", inf.Job)
		})
	}
}
