package sia_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// TestProbeSnapshotRules feeds the round snapshots a host could produce by
// mistake (classes 4 and 5 of issue 10, cases beyond those the issue
// lists): each is either an error naming the job, node and field, or a plan
// that passes probeCheck (and then the case's own check).
func TestProbeSnapshotRules(t *testing.T) {
	m := probeModel{speed: map[string]float64{"A": 1, "B": 1.5}, gain: 0.9, cross: 0.9}
	hyb := probeModel{speed: map[string]float64{"A": 1, "B": 1.5}, gain: 0.9, cross: 0.9, stages: 2}
	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 64, MaxBatch: 1024,
		Limits: map[string]goodput.Limits{"A": {MinLocalBatch: 8, MaxLocalBatch: 512}}}, nil)
	require.NoError(t, err)
	htr, err := bootstrap.New(bootstrap.Spec{InitBatch: 8, MaxBatch: 64, Stages: map[string]int{"A": 2}, MicroBatches: 4}, nil)
	require.NoError(t, err)
	on := func(typ string, nodes int, gpus ...sia.GPU) sia.Allocation {
		return sia.Allocation{Type: typ, Nodes: nodes, GPUs: len(gpus), Placement: gpus}
	}
	now := probeT0.Add(time.Hour)
	good := func() sia.Snapshot {
		return sia.Snapshot{Now: now,
			Nodes: []sia.Node{{ID: "a0", Type: "A", GPUs: 6}, {ID: "a1", Type: "A", GPUs: 6}, {ID: "a2", Type: "A", GPUs: 8}, {ID: "b0", Type: "B", GPUs: 7}},
			Jobs:  []sia.Job{{ID: "j", Submitted: probeT0, Models: m}, {ID: "k", Submitted: probeT0, Models: m}}}
	}
	type want struct {
		job, node, field string
		infeasible       bool
		check            func(t *testing.T, p sia.Plan)
	}
	ok := func(check func(t *testing.T, p sia.Plan)) want { return want{check: check} }
	cases := map[string]struct {
		mut func(s *sia.Snapshot)
		want
	}{
		// pins whose allocation breaks their bounds
		"restore until later, below MinGPUs": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].MinGPUs = 2
			s.Jobs[0].State.Current, s.Jobs[0].State.RestoreUntil = on("A", 1, sia.GPU{Node: "a0"}), now.Add(time.Second)
		}, want: want{job: "j", field: "Jobs[0].State.Current.GPUs"}},
		"restore ended, below MinGPUs: resized, not an error": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].MinGPUs = 2
			s.Jobs[0].State.Current, s.Jobs[0].State.RestoreUntil = on("A", 1, sia.GPU{Node: "a0"}), now
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.False(t, p.Decisions[0].Pinned)
		})},
		"pinned hybrid job off its replica size": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models, s.Jobs[0].NonPreemptible = hyb, true
			s.Jobs[0].State.Current = on("A", 1, sia.GPU{Node: "a0"}, sia.GPU{Node: "a0", Index: 1}, sia.GPU{Node: "a0", Index: 2})
		}, want: want{job: "j", field: "Jobs[0].State.Current.GPUs"}},
		"running hybrid job off its replica size: resized": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models = hyb
			s.Jobs[0].State.Current = on("A", 1, sia.GPU{Node: "a0"})
		}, want: ok(func(t *testing.T, p sia.Plan) { assert.NotEqual(t, sia.Keep, p.Decisions[0].Action) })},
		"pinned rigid job of another count": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Kind, s.Jobs[0].GPUs, s.Jobs[0].State.Restoring = sia.Rigid, 2, true
			s.Jobs[0].State.Current = on("A", 1, sia.GPU{Node: "a0"})
		}, want: want{job: "j", field: "Jobs[0].State.Current.GPUs"}},
		"pinned on a type its tracker excludes": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models, s.Jobs[0].NonPreemptible = tr, true
			s.Jobs[0].State.Current = on("B", 1, sia.GPU{Node: "b0"})
		}, want: want{job: "j", field: "Jobs[0].State.Current.Type"}},
		"running on a type its tracker excludes: moved or queued": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models = tr
			s.Jobs[0].State.Current = on("B", 1, sia.GPU{Node: "b0"})
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.NotEqual(t, "B", p.Decisions[0].Allocation.Type)
		})},
		"hybrid running on a type its Stages leave out: moved or queued": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models = htr
			s.Jobs[0].State.Current = on("B", 1, sia.GPU{Node: "b0"}, sia.GPU{Node: "b0", Index: 1})
		}, want: ok(func(t *testing.T, p sia.Plan) {
			d := p.Decisions[0]
			assert.NotEqual(t, "B", d.Allocation.Type)
			assert.Zero(t, d.Allocation.GPUs%2, "whole replicas of 2")
		})},
		"hybrid pinned on a type its Stages leave out": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models, s.Jobs[0].State.Restoring = htr, true
			s.Jobs[0].State.Current = on("B", 1, sia.GPU{Node: "b0"}, sia.GPU{Node: "b0", Index: 1})
		}, want: want{job: "j", field: "Jobs[0].State.Current.Type"}},
		"hybrid rigid count off its replica size: queued, no admissible type": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Models, s.Jobs[0].Kind, s.Jobs[0].GPUs = htr, sia.Rigid, 3
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.Equal(t, sia.ReasonNoAdmissibleType, p.Decisions[0].Reason)
		})},
		"running outside Types: moved or queued": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Types = []string{"B"}
			s.Jobs[0].State.Current = on("A", 1, sia.GPU{Node: "a2"}, sia.GPU{Node: "a2", Index: 1})
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.NotEqual(t, "A", p.Decisions[0].Allocation.Type)
		})},
		"rigid running outside Types": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].Kind, s.Jobs[0].GPUs, s.Jobs[0].Types = sia.Rigid, 7, []string{"B"}
			s.Jobs[0].State.Current = on("A", 1, probeGPUs("a2", 7)...)
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.Equal(t, "B", p.Decisions[0].Allocation.Type)
			assert.Equal(t, sia.Migrate, p.Decisions[0].Action)
		})},
		"pinned larger than MaxGPUsPerJob is kept": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].NonPreemptible = true
			s.Jobs[0].State.Current = on("A", 2, append(probeGPUs("a0", 6), probeGPUs("a1", 6)...)...)
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.Equal(t, sia.Keep, p.Decisions[0].Action)
		})},
		"pinned across two pools is kept": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Restoring = true
			s.Jobs[0].State.Current = on("A", 2, append(probeGPUs("a0", 5), probeGPUs("a2", 3)...)...)
		}, want: ok(func(t *testing.T, p sia.Plan) {
			assert.Equal(t, sia.Keep, p.Decisions[0].Action)
		})},
		"two pins beyond the type": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].NonPreemptible, s.Jobs[1].NonPreemptible = true, true
			s.Jobs[0].State.Current = on("B", 1, probeGPUs("b0", 4)...)
			s.Jobs[1].State.Current = on("B", 1, sia.GPU{Node: "b0", Index: 4}, sia.GPU{Node: "b0", Index: 5}, sia.GPU{Node: "b0", Index: 6})
			s.Reserved = map[string]int{"B": 1}
		}, want: want{job: "k", field: "Jobs[1].State.Current.GPUs", infeasible: true}},
		"pins beyond a quota": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].NonPreemptible = true
			s.Jobs[0].State.Current = on("B", 1, probeGPUs("b0", 4)...)
			s.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"j", "k"}, Limit: 3}}
		}, want: want{infeasible: true}},
		"running beyond a quota: resized or preempted": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = on("B", 1, probeGPUs("b0", 7)...)
			s.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"j"}, Type: "B", Limit: 3}}
		}, want: ok(nil)},
		// placements
		"GPU index at the node's size": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = on("B", 1, sia.GPU{Node: "b0", Index: 7})
		}, want: want{job: "j", node: "b0", field: "Jobs[0].State.Current.Placement[0]"}},
		"GPU index MaxInt": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = on("B", 1, sia.GPU{Node: "b0", Index: math.MaxInt})
		}, want: want{job: "j", node: "b0", field: "Jobs[0].State.Current.Placement[0]"}},
		"GPU on a node of another type": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = on("A", 1, sia.GPU{Node: "b0"})
		}, want: want{job: "j", node: "b0", field: "Jobs[0].State.Current.Placement[0]"}},
		"placement on two nodes, Nodes 1": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = on("A", 1, sia.GPU{Node: "a0"}, sia.GPU{Node: "a1"})
		}, want: want{job: "j", field: "Jobs[0].State.Current.Nodes"}},
		"placement on one node, Nodes 2": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = on("A", 2, sia.GPU{Node: "a0"}, sia.GPU{Node: "a0", Index: 1})
		}, want: want{job: "j", field: "Jobs[0].State.Current.Nodes"}},
		"GPUs MaxInt, one GPU listed": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = sia.Allocation{Type: "A", Nodes: 1, GPUs: math.MaxInt, Placement: []sia.GPU{{Node: "a0"}}}
		}, want: want{job: "j", field: "Jobs[0].State.Current.GPUs"}},
		"Nodes MaxInt": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = sia.Allocation{Type: "A", Nodes: math.MaxInt, GPUs: 1, Placement: []sia.GPU{{Node: "a0"}}}
		}, want: want{job: "j", field: "Jobs[0].State.Current.Nodes"}},
		"Nodes 0 with GPUs": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = sia.Allocation{Type: "A", GPUs: 1, Placement: []sia.GPU{{Node: "a0"}}}
		}, want: want{job: "j", field: "Jobs[0].State.Current.Nodes"}},
		"negative GPUs with a type": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = sia.Allocation{Type: "A", Nodes: 1, GPUs: -3}
		}, want: want{job: "j", field: "Jobs[0].State.Current.GPUs"}},
		"placement without GPUs": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Current = sia.Allocation{Placement: []sia.GPU{{Node: "a0"}}}
		}, want: want{job: "j", field: "Jobs[0].State.Current"}},
		"restoring while queued": {mut: func(s *sia.Snapshot) { s.Jobs[0].State.Restoring = true },
			want: want{job: "j", field: "Jobs[0].State.Restoring"}},
		"restore until later while queued: not pinned": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.RestoreUntil = now.Add(time.Hour)
		}, want: ok(func(t *testing.T, p sia.Plan) { assert.False(t, p.Decisions[0].Pinned) })},
		// identities and strings
		"duplicate job ID": {mut: func(s *sia.Snapshot) { s.Jobs[1].ID = "j" }, want: want{job: "j", field: "Jobs[1].ID"}},
		"duplicate node ID across types": {mut: func(s *sia.Snapshot) { s.Nodes[3].ID = "a0" },
			want: want{node: "a0", field: "Nodes[3].ID"}},
		"empty node type":   {mut: func(s *sia.Snapshot) { s.Nodes[1].Type = "" }, want: want{node: "a1", field: "Nodes[1].Type"}},
		"node of 0 GPUs":    {mut: func(s *sia.Snapshot) { s.Nodes[1].GPUs = 0 }, want: want{node: "a1", field: "Nodes[1].GPUs"}},
		"node of -1 GPUs":   {mut: func(s *sia.Snapshot) { s.Nodes[1].GPUs = -1 }, want: want{node: "a1", field: "Nodes[1].GPUs"}},
		"node of MaxInt":    {mut: func(s *sia.Snapshot) { s.Nodes[1].GPUs = math.MaxInt }, want: want{node: "a1", field: "Nodes[1].GPUs"}},
		"kind out of range": {mut: func(s *sia.Snapshot) { s.Jobs[1].Kind = -1 }, want: want{job: "k", field: "Jobs[1].Kind"}},
		"nil models":        {mut: func(s *sia.Snapshot) { s.Jobs[1].Models = nil }, want: want{job: "k", field: "Jobs[1].Models"}},
		"types only unknown to the cluster: queued, no admissible type": {mut: func(s *sia.Snapshot) { s.Jobs[0].Types = []string{"H100"} },
			want: ok(func(t *testing.T, p sia.Plan) { assert.Equal(t, sia.ReasonNoAdmissibleType, p.Decisions[0].Reason) })},
		"reserved for a type no node has: no effect": {mut: func(s *sia.Snapshot) { s.Reserved = map[string]int{"H100": 1} },
			want: ok(func(t *testing.T, p sia.Plan) { assert.True(t, p.Decisions[0].Allocation.Running()) })},
		"reserved for the empty type": {mut: func(s *sia.Snapshot) { s.Reserved = map[string]int{"": 0} }, want: want{field: "Reserved"}},
		"reserved -1":                 {mut: func(s *sia.Snapshot) { s.Reserved = map[string]int{"A": -1} }, want: want{field: "Reserved"}},
		"quota of an unknown job":     {mut: func(s *sia.Snapshot) { s.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"x"}}} }, want: want{job: "x", field: "Quotas[0].Jobs"}},
		"quota of a type no node has: no effect": {mut: func(s *sia.Snapshot) {
			s.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"j"}, Type: "H100", Limit: 0}}
		},
			want: ok(func(t *testing.T, p sia.Plan) { assert.True(t, p.Decisions[0].Allocation.Running()) })},
		"quota limits MaxInt (sums do not wrap)": {mut: func(s *sia.Snapshot) {
			s.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"j", "k"}, Limit: math.MaxInt}, {Name: "r", Jobs: []string{"j"}, Limit: math.MaxInt}}
		}, want: ok(func(t *testing.T, p sia.Plan) { assert.True(t, p.Decisions[0].Allocation.Running()) })},
		"quota 0 on the job": {mut: func(s *sia.Snapshot) { s.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"j"}}} },
			want: ok(func(t *testing.T, p sia.Plan) { assert.Equal(t, sia.ReasonQuota, p.Decisions[0].Reason) })},
		"everything reserved": {mut: func(s *sia.Snapshot) { s.Reserved = map[string]int{"A": 20, "B": 7} },
			want: ok(func(t *testing.T, p sia.Plan) { assert.Equal(t, sia.ReasonReserved, p.Decisions[0].Reason) })},
		// numbers
		"counts near MaxInt": {mut: func(s *sia.Snapshot) {
			s.Jobs[0].State.Restarts, s.Jobs[0].State.PeakReplicas = math.MaxInt, math.MaxInt
			s.Jobs[0].State.RestartCost = time.Duration(math.MaxInt64)
			s.Jobs[1].MinGPUs, s.Jobs[1].MaxGPUs = math.MaxInt, math.MaxInt
		}, want: ok(func(t *testing.T, p sia.Plan) { assert.Equal(t, sia.ReasonTooLarge, p.Decisions[1].Reason) })},
		"rigid MaxInt": {mut: func(s *sia.Snapshot) { s.Jobs[1].Kind, s.Jobs[1].GPUs = sia.Rigid, math.MaxInt },
			want: ok(func(t *testing.T, p sia.Plan) { assert.Equal(t, sia.ReasonTooLarge, p.Decisions[1].Reason) })},
		"stages MaxInt": {mut: func(s *sia.Snapshot) {
			s.Jobs[1].Models = probeModel{speed: map[string]float64{"A": 1}, gain: 1, cross: 1, stages: math.MaxInt}
		}, want: ok(func(t *testing.T, p sia.Plan) { assert.Equal(t, sia.ReasonTooLarge, p.Decisions[1].Reason) })},
		"submitted in year 1, now in year 9999": {mut: func(s *sia.Snapshot) {
			s.Now = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
			s.Jobs[0].Submitted = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
		}, want: ok(nil)},
		"now before the epoch": {mut: func(s *sia.Snapshot) {
			s.Now = time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
			s.Jobs[0].Submitted, s.Jobs[1].Submitted = time.Time{}, time.Time{}
		}, want: ok(nil)},
	}
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			snap := good()
			c.mut(&snap)
			plan, err := s.Round(context.Background(), snap)
			if c.check != nil || (c.field == "" && !c.infeasible) {
				require.NoError(t, err)
				probeCheck(t, snap, s.Options(), plan)
				if c.check != nil {
					c.check(t, plan)
				}
				return
			}
			require.Error(t, err)
			t.Log(err)
			if c.infeasible {
				var fe *sia.InfeasibleError
				require.ErrorAs(t, err, &fe)
				require.ErrorIs(t, err, sia.ErrInfeasible)
				if c.field != "" {
					assert.Equal(t, c.field, fe.Field)
					assert.Equal(t, c.job, fe.Job)
				}
				return
			}
			var ie *sia.InputError
			require.ErrorAs(t, err, &ie)
			assert.True(t, errors.Is(err, sia.ErrInvalidInput))
			assert.Equal(t, c.field, ie.Field)
			assert.Equal(t, c.job, ie.Job)
			assert.Equal(t, c.node, ie.Node)
			assert.Equal(t, err, snap.Validate(), "Snapshot.Validate agrees with Round")
		})
	}
}
