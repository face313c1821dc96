package sia_test

// Probes (issue 10, snapshot rules): a host lowers a quota below what its
// pinned jobs hold (a non-preemptible or restoring job cannot give GPUs
// back). The round must say so as validation says a type's pinned jobs do
// not fit: an *InfeasibleError naming the quota's field, Quotas[i].Limit,
// and a pinned job it covers; pinned jobs of another type than the quota's,
// or not covered by it, do not count.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

func TestProbe5PinnedOverQuota(t *testing.T) {
	m := probeModel{speed: map[string]float64{"a": 1, "b": 1}, gain: 0.9, cross: 0.95}
	nodes := []sia.Node{{ID: "a0", Type: "a", GPUs: 8}, {ID: "b0", Type: "b", GPUs: 8}}
	on := func(typ string, from, k int) sia.Allocation {
		a := sia.Allocation{Type: typ, Nodes: 1, GPUs: k}
		for g := from; g < from+k; g++ {
			a.Placement = append(a.Placement, sia.GPU{Node: typ + "0", Index: g})
		}
		return a
	}
	jobs := func() []sia.Job {
		return []sia.Job{
			{ID: "free", Models: m},
			{ID: "pa", Models: m, NonPreemptible: true, State: sia.JobState{Current: on("a", 0, 3)}},
			{ID: "pb", Models: m, State: sia.JobState{Current: on("b", 0, 2), RestoreUntil: probeT0.Add(1e9)}},
			{ID: "runa", Models: m, State: sia.JobState{Current: on("a", 3, 4)}}, // not pinned
		}
	}
	cases := []struct {
		name  string
		quota []sia.Quota
		bad   int    // index of the quota that the pins break (-1: none)
		job   string // a pinned job the error names
	}{
		{"all types, below pins", []sia.Quota{{Name: "q", Jobs: []string{"pa", "pb", "free"}, Limit: 4}}, 0, "pb"},
		{"all types, at pins", []sia.Quota{{Name: "q", Jobs: []string{"pa", "pb", "free"}, Limit: 5}}, -1, ""},
		{"type a, below", []sia.Quota{{Name: "ok", Jobs: []string{"pb"}, Limit: 2}, {Name: "qa", Type: "a", Jobs: []string{"pa", "pb", "runa"}, Limit: 2}}, 1, "pa"},
		{"type b does not count a", []sia.Quota{{Name: "qb", Type: "b", Jobs: []string{"pa", "pb"}, Limit: 2}}, -1, ""},
		{"unpinned do not count", []sia.Quota{{Name: "q", Jobs: []string{"runa", "free"}, Limit: 0}}, -1, ""},
		{"limit 0", []sia.Quota{{Name: "z", Jobs: []string{"pb"}, Limit: 0}}, 0, "pb"},
	}
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: jobs(), Quotas: c.quota}
			plan, err := s.Round(context.Background(), snap)
			if c.bad < 0 {
				require.NoError(t, err)
				probeCheck(t, snap, s.Options(), plan)
				return
			}
			var fe *sia.InfeasibleError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.ErrorIs(t, err, sia.ErrInfeasible)
			assert.Equal(t, fmt.Sprintf("Quotas[%d].Limit", c.bad), fe.Field, "%v", err)
			assert.Equal(t, c.job, fe.Job, "%v", err)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", c.quota[c.bad].Name))
			// Snapshot.Validate says the same
			verr := snap.Validate()
			require.True(t, errors.As(verr, &fe), "Validate: %v", verr)
			assert.Equal(t, fmt.Sprintf("Quotas[%d].Limit", c.bad), fe.Field)
		})
	}
}
