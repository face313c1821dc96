package sia_test

// Probes (issue 10, a host's control loop): a GPU type's nodes all go down
// or are drained this round while the host's Quotas and Reserved still name
// the type. Such entries have no effect while the type is absent (its
// capacity is 0): the round is the round without them, never an error that
// takes the host's loop down. The rules that do not depend on the cluster
// (a negative reservation or limit, the empty type, unknown or repeated
// jobs) stay errors.

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// probe7AbsentSnap is a fleet of a (8 + 8), b (4) and, when withC, c (6);
// jobs allowed on every type, one rigid on c only, one pinned on a.
func probe7AbsentSnap(withC bool) sia.Snapshot {
	m := probeModel{speed: map[string]float64{"a": 1, "b": 0.7, "c": 1.4}, gain: 0.9, cross: 0.9}
	nodes := []sia.Node{{ID: "a0", Type: "a", GPUs: 8}, {ID: "a1", Type: "a", GPUs: 8}, {ID: "b0", Type: "b", GPUs: 4}}
	if withC {
		nodes = append(nodes, sia.Node{ID: "c0", Type: "c", GPUs: 6})
	}
	pin := sia.Allocation{Type: "a", Nodes: 1, GPUs: 2, Placement: []sia.GPU{{Node: "a0", Index: 0}, {Node: "a0", Index: 1}}}
	return sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{
		{ID: "j0", Models: m},
		{ID: "j1", Models: m, MaxGPUs: 6},
		{ID: "r", Kind: sia.Rigid, GPUs: 6, Models: m, Types: []string{"c"}},
		{ID: "p", Models: m, NonPreemptible: true, State: sia.JobState{Current: pin}},
		{ID: "s", Kind: sia.StrongScaling, Models: m, MaxGPUs: 4},
	}}
}

func TestProbe7AbsentTypeEntries(t *testing.T) {
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	base := probe7AbsentSnap(false)
	want, err := s.Round(context.Background(), base)
	require.NoError(t, err)
	all := []string{"j0", "j1", "r", "p", "s"}
	cases := map[string]struct {
		reserved map[string]int
		quotas   []sia.Quota
	}{
		"reserved on the absent type":          {reserved: map[string]int{"c": 6}},
		"reserved MaxInt on the absent type":   {reserved: map[string]int{"c": math.MaxInt}},
		"reserved 0 on the absent type":        {reserved: map[string]int{"c": 0}},
		"reserved on a type never heard of":    {reserved: map[string]int{"H100": 3}},
		"quota of the absent type":             {quotas: []sia.Quota{{Name: "qc", Type: "c", Jobs: all, Limit: 6}}},
		"quota 0 of the absent type":           {quotas: []sia.Quota{{Name: "qc", Type: "c", Jobs: all}}},
		"quota MaxInt of the absent type":      {quotas: []sia.Quota{{Name: "qc", Type: "c", Jobs: []string{"p"}, Limit: math.MaxInt}}},
		"quota of the absent type, no jobs":    {quotas: []sia.Quota{{Name: "qc", Type: "c"}}},
		"quota of a type never heard of":       {quotas: []sia.Quota{{Name: "qz", Type: "zz", Jobs: []string{"p", "j0"}}}},
		"both, beside a present-type reserved": {reserved: map[string]int{"c": 2, "b": 0}, quotas: []sia.Quota{{Name: "qc", Type: "c", Jobs: all}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			snap := probe7AbsentSnap(false)
			snap.Reserved, snap.Quotas = c.reserved, c.quotas
			require.NoError(t, snap.Validate())
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err)
			probeCheck(t, snap, s.Options(), plan)
			require.Len(t, plan.Decisions, len(want.Decisions))
			for i := range want.Decisions {
				assert.Equal(t, want.Decisions[i], plan.Decisions[i], "job %s: the absent type's entries changed the plan", want.Decisions[i].Job)
			}
			assert.Equal(t, want.Status, plan.Status)
			assert.InDelta(t, want.Objective, plan.Objective, 1e-12)
		})
	}
}

// TestProbe7TypeGoesAway runs a host's loop in which type c's only node
// goes down and comes back while a quota and a reservation name c: every
// round succeeds, the entries apply while c is present and have no effect
// while it is absent.
func TestProbe7TypeGoesAway(t *testing.T) {
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	snap := probe7AbsentSnap(true)
	snap.Reserved = map[string]int{"c": 6}
	snap.Quotas = []sia.Quota{{Name: "qc", Type: "c", Jobs: []string{"j0", "j1", "s"}, Limit: 0}}
	full := snap.Nodes
	for round := 0; round < 6; round++ {
		if round%2 == 1 {
			snap.Nodes = full[:3] // c's node is down
			snap.DropDepartedNodes()
		} else {
			snap.Nodes = full
		}
		plan, err := s.Round(context.Background(), snap)
		require.NoError(t, err, "round %d", round)
		probeCheck(t, snap, s.Options(), plan)
		for _, d := range plan.Decisions {
			assert.NotEqual(t, "c", d.Allocation.Type, "round %d: job %s on c, which is all reserved", round, d.Job)
		}
		snap.Advance(&plan, snap.Now.Add(6*time.Minute))
	}
}

// TestProbe7AbsentTypeStillChecked: the rules that do not depend on which
// types the cluster has this round still hold for entries of an absent type.
func TestProbe7AbsentTypeStillChecked(t *testing.T) {
	cases := map[string]struct {
		reserved map[string]int
		quotas   []sia.Quota
		field    string
	}{
		"reserved -1 on the absent type":     {reserved: map[string]int{"c": -1}, field: "Reserved"},
		"reserved MinInt on the absent type": {reserved: map[string]int{"c": math.MinInt}, field: "Reserved"},
		"reserved on the empty type":         {reserved: map[string]int{"": 1}, field: "Reserved"},
		"quota -1 of the absent type":        {quotas: []sia.Quota{{Name: "q", Type: "c", Limit: -1}}, field: "Quotas[0].Limit"},
		"quota of the absent type, unknown job": {quotas: []sia.Quota{{Name: "q", Type: "c", Jobs: []string{"zz"}}},
			field: "Quotas[0].Jobs"},
		"quota of the absent type, job twice": {quotas: []sia.Quota{{Name: "ok", Type: "a", Limit: 3}, {Name: "q", Type: "c", Jobs: []string{"j0", "j0"}}},
			field: "Quotas[1].Jobs"},
	}
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			snap := probe7AbsentSnap(false)
			snap.Reserved, snap.Quotas = c.reserved, c.quotas
			_, err := s.Round(context.Background(), snap)
			var ie *sia.InputError
			require.True(t, errors.As(err, &ie), "%v", err)
			assert.Equal(t, c.field, ie.Field, "%v", err)
			assert.ErrorIs(t, snap.Validate(), sia.ErrInvalidInput)
		})
	}
}
