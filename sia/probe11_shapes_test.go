package sia_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// TestProbe11RigidFillOddShapes: on one type of mixed odd node sizes (1,
// 3, 5, 7, 11, 13, 15 GPUs, and others), rigid data-parallel jobs whose
// counts sum to at most the type's capacity can all run at once (a rigid
// job may span nodes in any split), and alone on the cluster, with no
// deadline, every one starts: no GPU is unusable by construction. Each
// plan passes p11Check. Before the fill step shaped idle GPUs (shaped.go)
// 46 of 621 such jobs waited (nodes of 15 and 4 GPUs, rigid jobs of 9 and
// 10: the 10 takes one node, and the 9 needs 5 + 4 GPUs of two nodes of
// two sizes, a shape the round did not offer a job that fits one node).
func TestProbe11RigidFillOddShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 7))
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	n := 400
	if testing.Short() {
		n = 100
	}
	started, failed := 0, 0
	for it := 0; it < n; it++ {
		snap := sia.Snapshot{Now: now}
		capacity := 0
		for k := 0; k < 1+rng.IntN(4); k++ {
			g := p11Shapes[rng.IntN(len(p11Shapes))]
			snap.Nodes = append(snap.Nodes, sia.Node{ID: fmt.Sprint("n", k), Type: "a", GPUs: g})
			capacity += g
		}
		left := capacity
		for k := 0; k < 1+rng.IntN(4) && left > 0; k++ {
			g := 1 + rng.IntN(left)
			if rng.IntN(3) == 0 {
				g = left // the rest of the cluster
			}
			left -= g
			m := goodput.Model{Params: goodput.Params{AlphaC: 0.01 + 0.05*rng.Float64(), BetaC: 0.001 + 0.004*rng.Float64(), AlphaN: 0.02 * rng.Float64(), BetaN: 0.01 * rng.Float64(),
				AlphaR: 0.005 * rng.Float64(), BetaR: 0.002 * rng.Float64(), Gamma: 1 + rng.Float64()},
				Grad: goodput.GradStats{Sqr: 1, Var: 50}, InitBatch: 64, MaxBatch: 8192, FixedBatch: 64 * g, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 256}}
			snap.Jobs = append(snap.Jobs, sia.Job{ID: fmt.Sprint("r", k), Kind: sia.Rigid, GPUs: g, Submitted: now.Add(-time.Hour), Models: bootstrap.Static{"a": m}})
		}
		plan, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		p11Check(t, snap, sia.Options{RoundTimeout: -1}, plan, false)
		for _, d := range plan.Decisions {
			if d.Action != sia.Start {
				failed++
				if failed < 12 {
					t.Logf("iter %d: nodes %v, jobs of %v: %s %v (%v)", it, snap.Nodes, gpusOf(snap), d.Job, d.Action, d.Reason)
				}
				continue
			}
			started++
		}
	}
	t.Logf("%d rigid jobs started, %d not", started, failed)
	require.Zero(t, failed)
}

func gpusOf(s sia.Snapshot) []int {
	var out []int
	for _, j := range s.Jobs {
		out = append(out, j.GPUs)
	}
	return out
}

// TestProbe11SpanReasonNoDeadline: four queued jobs (testdata, found by
// TestProbe11HostLoop and shrunk) that fit only on configurations
// spanning nodes of several sizes (one type of 2-, 1-, 5- and 4-GPU nodes)
// have more spanning branches than the round enumerates, so the round,
// without any deadline, is not proven optimal; the jobs that got no GPUs
// read "deadline" although the round never ran out of time (a host would
// raise its deadline for nothing). Their reason is the optimisation's.
func TestProbe11SpanReasonNoDeadline(t *testing.T) {
	b, err := os.ReadFile("testdata/probe11-span-reason.json")
	require.NoError(t, err)
	var snap sia.Snapshot
	require.NoError(t, json.Unmarshal(b, &snap))
	o := sia.Options{RoundTimeout: -1}
	s, err := sia.New(&o)
	require.NoError(t, err)
	plan, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	t.Logf("status %v, objective %v, bound %v", plan.Status, plan.Objective, plan.Bound)
	p11Check(t, snap, o, plan, false)
	queued := 0
	for _, d := range plan.Decisions {
		if !d.Allocation.Running() {
			queued++
			require.NotEqual(t, sia.ReasonDeadline, d.Reason, d.Job)
		}
	}
	require.Positive(t, queued)
}

// TestProbe11PinnedRedeclared: a pinned running job (non-preemptible, or
// in a checkpoint-restore) that the host re-declares under the same ID so
// that its Current breaks the new spec (another rigid count, bounds that
// exclude it, an allow-list or models without its type, pipeline stages
// that do not divide it) is an *InputError naming the job and the field,
// from Round and Validate alike; the same job unpinned is resized,
// migrated or preempted instead, and the plan passes p11Check.
func TestProbe11PinnedRedeclared(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := goodput.Model{Params: goodput.Params{AlphaC: 0.02, BetaC: 0.002, AlphaN: 0.01, BetaN: 0.004, Gamma: 1.3},
		Grad: goodput.GradStats{Sqr: 1, Var: 60}, InitBatch: 64, MaxBatch: 2048, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 256}}
	hybrid := m
	hybrid.Stages, hybrid.MicroBatches = 3, 2
	cur := sia.Allocation{Type: "a", Nodes: 1, GPUs: 4, Placement: []sia.GPU{{Node: "n0", Index: 0}, {Node: "n0", Index: 1}, {Node: "n0", Index: 2}, {Node: "n0", Index: 3}}}
	for _, c := range []struct {
		name string
		edit func(j *sia.Job)
	}{
		{"rigid count", func(j *sia.Job) { j.Kind, j.GPUs = sia.Rigid, 6 }},
		{"min above", func(j *sia.Job) { j.MinGPUs = 5 }},
		{"max below", func(j *sia.Job) { j.MaxGPUs = 3 }},
		{"allow-list", func(j *sia.Job) { j.Types = []string{"b"} }},
		{"stages", func(j *sia.Job) { j.Models = bootstrap.Static{"a": hybrid, "b": hybrid} }},
	} {
		for _, pin := range []string{"non-preemptible", "restoring", "restore-until", "none"} {
			j := sia.Job{ID: "x", Submitted: now.Add(-time.Hour), Models: bootstrap.Static{"a": m, "b": m}, State: sia.JobState{Current: cur, PeakReplicas: 4}}
			switch pin {
			case "non-preemptible":
				j.NonPreemptible = true
			case "restoring":
				j.State.Restoring = true
			case "restore-until":
				j.State.RestoreUntil = now.Add(time.Minute)
			}
			c.edit(&j)
			snap := sia.Snapshot{Now: now, Nodes: []sia.Node{{ID: "n0", Type: "a", GPUs: 8}, {ID: "n1", Type: "b", GPUs: 8}},
				Jobs: []sia.Job{{ID: "other", Submitted: now, Models: bootstrap.Static{"a": m, "b": m}}, j}}
			o := sia.Options{RoundTimeout: -1}
			s, err := sia.New(&o)
			require.NoError(t, err)
			plan, err := s.Round(context.Background(), snap)
			what := c.name + ", " + pin
			if pin == "none" {
				require.NoError(t, err, what)
				p11Check(t, snap, o, plan, false)
				require.NotEqual(t, sia.Keep, plan.Decisions[1].Action, what)
				continue
			}
			var ie *sia.InputError
			require.ErrorAs(t, err, &ie, what)
			require.Equal(t, "x", ie.Job, what)
			require.Contains(t, ie.Field, "Jobs[1]", what)
			require.EqualError(t, snap.Validate(), err.Error(), what)
		}
	}
}
