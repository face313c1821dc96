package sia

import (
	"context"
	"github.com/sia-sched/sia/sia/siatest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// TestExcludedTypesNeverOffered: a type the job may not use — absent from
// its Tracker's Spec, a Table type without entries, or outside Job.Types —
// is never in its matrix row nor in the plan, for every kind of job and the
// artifact's knobs, while a type without a model yet still is. The job
// then runs only where its host can Observe it.
func TestExcludedTypesNeverOffered(t *testing.T) {
	// A has 4 GPUs, B (the type the jobs may not use) 8: a job that wants
	// more than A has, or finds A busy, would go to B if it were offered.
	cluster := []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "b0", Type: "B", GPUs: 8}}
	a100 := goodput.Params{AlphaC: 0.01, BetaC: 0.0002, AlphaN: 0.05, BetaN: 0.01, AlphaR: 0.01, BetaR: 0.004, Gamma: 1.3}
	seed := func(tr *bootstrap.Tracker, ty string) {
		var rows []goodput.Observation
		for _, b := range []int{16, 64} {
			step := a100.IterTime(1, 1, float64(b), 0)
			rows = append(rows, goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: b, StepTime: step, SyncTime: step - a100.AccumTime(float64(b))})
		}
		require.NoError(t, tr.Seed(ty, rows...))
	}
	onlyA := func(fixed, seeded bool) *bootstrap.Tracker {
		fb := 0 // adaptive
		if fixed {
			fb = 1024
		}
		tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 64, MaxBatch: 1024, FixedBatch: fb,
			Limits: map[string]goodput.Limits{"A": {MinLocalBatch: 8, MaxLocalBatch: 512}}}, nil)
		require.NoError(t, err)
		if seeded {
			seed(tr, "A")
		}
		return tr
	}
	hybrid := func() *bootstrap.Tracker {
		tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 8, MaxBatch: 64, Stages: map[string]int{"A": 2}, MicroBatches: 8}, nil)
		require.NoError(t, err)
		return tr
	}
	cases := []struct {
		name string
		job  Job
		opts Options
	}{
		{name: "adaptive, no model yet", job: Job{Models: onlyA(false, false)}},
		{name: "adaptive, seeded", job: Job{MinGPUs: 2, Models: onlyA(false, true)}},
		{name: "adaptive, larger than A", job: Job{MinGPUs: 8, Models: onlyA(false, true)}},
		{name: "strong-scaling", job: Job{Kind: StrongScaling, Models: onlyA(true, false)}},
		{name: "rigid of 4", job: Job{Kind: Rigid, GPUs: 4, Models: onlyA(true, false)}},
		{name: "rigid of 8", job: Job{Kind: Rigid, GPUs: 8, Models: onlyA(true, true)}},
		{name: "hybrid", job: Job{Models: hybrid()}},
		{name: "artifact blind first", job: Job{Models: onlyA(false, true)}, opts: Options{Artifact: PublishedArtifact()}},
		{name: "artifact rigid", job: Job{Kind: Rigid, GPUs: 8, Models: onlyA(true, true)}, opts: Options{Artifact: PublishedArtifact()}},
		{name: "filler only", job: Job{MinGPUs: 2, Models: onlyA(false, true)}, opts: Options{Artifact: &ArtifactKnobs{Filler: true}}},
		{name: "table type without entries", job: Job{Models: siatest.Table{"A": {1: 1, 2: 2}, "B": {}}}, opts: Options{Artifact: PublishedArtifact()}},
		{name: "Types allow-list", job: Job{Types: []string{"A"}, Models: bootstrap.Static{}}},
		{name: "Types allow-list, rigid", job: Job{Kind: Rigid, GPUs: 8, Types: []string{"A", "Z"}, Models: siatest.Table{"A": {8: 1}, "B": {8: 1}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := c.job
			j.ID, j.Submitted = "j", t0
			// A is busy with a pinned job: only B is free.
			busy := Job{ID: "busy", Submitted: t0, NonPreemptible: true, Models: siatest.Table{"A": {4: 1}}, Kind: Rigid, GPUs: 4,
				State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 4, Placement: []GPU{{"a0", 0}, {"a0", 1}, {"a0", 2}, {"a0", 3}}}}}
			for _, jobs := range [][]Job{{j}, {busy, j}} {
				snap := Snapshot{Now: t0.Add(time.Hour), Nodes: cluster, Jobs: jobs}
				s, err := New(&c.opts)
				require.NoError(t, err)
				p, err := s.Round(context.Background(), snap)
				require.NoError(t, err)
				checkPlan(t, &snap, &p)
				row := p.matrix.Rows[len(jobs)-1]
				for _, e := range row.Entries {
					assert.Equal(t, "A", e.Config.Type, "entry %v offered", e.Config)
				}
				d := p.Decisions[len(jobs)-1]
				if d.Allocation.Running() {
					assert.Equal(t, "A", d.Allocation.Type)
					if tr, ok := j.Models.(*bootstrap.Tracker); ok {
						assert.True(t, slices.Contains(tr.Types(), d.Allocation.Type), "Observe would fail")
					}
				} else {
					assert.NotEqual(t, ReasonNone, d.Reason)
				}
			}
		})
	}
}

// TestExcludedSources: the sources of the Models seam.
func TestExcludedSources(t *testing.T) {
	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 1, MaxBatch: 2, Limits: map[string]goodput.Limits{"A": {MinLocalBatch: 1, MaxLocalBatch: 2}}}, nil)
	require.NoError(t, err)
	_, src := tr.Model("A")
	assert.Equal(t, bootstrap.None, src, "in the spec, no data yet")
	_, src = tr.Model("B")
	assert.Equal(t, bootstrap.Excluded, src, "not in the spec")
	assert.False(t, bootstrap.Excluded.HasModel())
	assert.False(t, bootstrap.None.HasModel())
	assert.True(t, bootstrap.Projected.HasModel())
	assert.Equal(t, "excluded", bootstrap.Excluded.String())
	tab := siatest.Table{"A": {1: 1}, "B": {}, "C": nil}
	for ty, want := range map[string]bootstrap.Source{"A": bootstrap.Measured, "B": bootstrap.Excluded, "C": bootstrap.Excluded, "D": bootstrap.None} {
		_, src := tab.Model(ty)
		assert.Equal(t, want, src, ty)
	}
}

// TestExcludedPinned: a pinned job on a type its models exclude is an error
// naming the job and the type (the round can neither keep nor move it); an
// unpinned one is migrated or preempted.
func TestExcludedPinned(t *testing.T) {
	st := JobState{Current: Allocation{Type: "B", Nodes: 1, GPUs: 1, Placement: []GPU{{"b0", 0}}}, PeakReplicas: 1}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: twoTypes(),
		Jobs: []Job{{ID: "j", Submitted: t0, NonPreemptible: true, Models: siatest.Table{"A": {1: 1}, "B": {}}, State: st}}}
	s, err := New(nil)
	require.NoError(t, err)
	_, err = s.Round(context.Background(), snap)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "j", ie.Job)
	assert.Equal(t, "B", ie.Type)
	snap.Jobs[0].Types, snap.Jobs[0].Models = []string{"A"}, siatest.Table{"A": {1: 1}, "B": {1: 1}}
	_, err = s.Round(context.Background(), snap)
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "Jobs[0].State.Current.Type", ie.Field)
	snap.Jobs[0].NonPreemptible = false
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, Migrate, p.Decisions[0].Action)
	assert.Equal(t, "A", p.Decisions[0].Allocation.Type)
}
