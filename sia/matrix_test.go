package sia

import (
	"bytes"
	"context"
	"github.com/sia-sched/sia/sia/siatest"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/ilp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// twoTypes is a cluster with one 4-GPU node of type A and one 8-GPU node of B.
func twoTypes() []Node {
	return []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "b0", Type: "B", GPUs: 8}}
}

func entryFor(r matrixRow, ty string, gpus int) (matrixEntry, bool) {
	for _, e := range r.Entries {
		if e.Config.Type == ty && e.Config.GPUs == gpus {
			return e, true
		}
	}
	return matrixEntry{}, false
}

func TestNormalisationAndPower(t *testing.T) {
	tab := siatest.Table{"A": {1: 10, 2: 18, 4: 30}, "B": {1: 5, 2: 9, 4: 16, 8: 28}}
	for _, c := range []struct {
		name  string
		opts  Options
		sense ilp.Sense
	}{
		{"p=-0.5", Options{NoScaleUpCap: true}, ilp.Minimize},
		{"p=0.5", Options{P: 0.5, NoScaleUpCap: true}, ilp.Maximize},
		{"p=-1 lambda=2", Options{P: -1, Lambda: 2, NoScaleUpCap: true}, ilp.Minimize},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := &Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "j", MinGPUs: 2, Submitted: t0, Models: tab}}}
			m, err := newMatrix(snap, &c.opts)
			require.NoError(t, err)
			o := c.opts.WithDefaults()
			assert.Equal(t, c.sense, m.Sense)
			row := m.Rows[0]
			assert.Equal(t, o.Lambda, row.Unallocated)
			// MinGPUs = 2: the smallest valid goodput (B:2 = 9) becomes 2.
			assert.InDelta(t, 2.0/9, row.Scale, 1e-12)
			for _, e := range row.Entries {
				assert.GreaterOrEqual(t, e.Config.GPUs, 2)
				want := tab[e.Config.Type][e.Replicas] * 2 / 9
				assert.InDelta(t, want, e.Normalized, 1e-12, "%v", e.Config)
				assert.InDelta(t, math.Pow(want, o.P), e.Value, 1e-12, "%v", e.Config)
			}
			_, ok := entryFor(row, "A", 1)
			assert.False(t, ok, "below MinGPUs")
		})
	}
}

func TestRestartFactor(t *testing.T) {
	tab := siatest.Table{"A": {1: 1, 2: 2, 4: 4}}
	cl := []Node{{ID: "a0", Type: "A", GPUs: 4}}
	for _, c := range []struct {
		name     string
		age      time.Duration
		restarts int
		cost     time.Duration
		knobs    ArtifactKnobs
		want     float64
	}{
		{"fresh", 10 * time.Minute, 0, 30 * time.Second, ArtifactKnobs{}, 600.0 / 630},
		{"restarted", 10 * time.Minute, 4, 30 * time.Second, ArtifactKnobs{}, (600.0 - 120) / 630},
		{"clamped", time.Minute, 5, 30 * time.Second, ArtifactKnobs{}, 0},
		{"young", 10 * time.Second, 0, 30 * time.Second, ArtifactKnobs{}, 10.0 / 40},
		{"young with grace", 10 * time.Second, 0, 30 * time.Second, ArtifactKnobs{RestartGrace: true}, 1},
		{"model penalties", 10 * time.Minute, 1, 0, ArtifactKnobs{ModelPenalties: true}, (600.0 - 250) / 850},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Job{ID: "imagenet-1", Application: "imagenet", Submitted: t0, Models: tab}
			j.State = JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 2}, Restarts: c.restarts, RestartCost: c.cost, PeakReplicas: 2}
			snap := &Snapshot{Now: t0.Add(c.age), Nodes: cl, Jobs: []Job{j}}
			m, err := newMatrix(snap, &Options{Artifact: &c.knobs, NoScaleUpCap: true})
			require.NoError(t, err)
			row := m.Rows[0]
			assert.InDelta(t, c.want, row.Restart, 1e-12)
			for k, e := range row.Entries {
				if k == row.Current {
					assert.Equal(t, 1.0, e.Restart)
					assert.Equal(t, 2, e.Config.GPUs)
				} else {
					assert.InDelta(t, c.want, e.Restart, 1e-12)
				}
				if c.want == 0 && k != row.Current {
					assert.True(t, e.Dropped, "r = 0 with p < 0: infinite value, not offered")
				}
			}
		})
	}
}

func TestArtifactKnobs(t *testing.T) {
	tab := siatest.Table{"A": {1: 3, 2: 5}, "B": {1: 1, 2: 1.9, 4: 3.7}} // B:8 invalid
	j := Job{ID: "j", Submitted: t0, Models: tab, State: JobState{PeakReplicas: 2}}
	snap := &Snapshot{Now: t0.Add(time.Hour), Nodes: twoTypes(), Jobs: []Job{j}}
	m, err := newMatrix(snap, &Options{Artifact: PublishedArtifact()})
	require.NoError(t, err)
	assert.Equal(t, artifactGrid, m.Grid)
	row := m.Rows[0]
	for _, e := range row.Entries {
		assert.InDelta(t, math.Round(e.Value*100)/100, e.Value, 1e-9, "rounded: %v", e.Config)
		if e.Config.GPUs > 4 || (e.Config.Type == "A" && e.Config.GPUs == 4) {
			assert.True(t, e.Invalid, "%v", e.Config)
			assert.Equal(t, artifactFiller, e.Normalized)
			assert.InDelta(t, 100, e.Value, 1e-9, "1e-4^-0.5 = 100")
		}
	}
	b8, ok := entryFor(row, "B", 8)
	require.True(t, ok, "artifact fillers keep invalid configurations")
	assert.True(t, b8.Invalid)
	// The solver sees the grid and proves optimality.
	sol, err := solveMatrix(context.Background(), m, &Options{Artifact: PublishedArtifact()})
	require.NoError(t, err)
	assert.Equal(t, StatusOptimal, sol.Status)
	e := row.Entries[sol.Choice[0]]
	assert.Equal(t, "A", e.Config.Type)
	assert.Equal(t, 2, e.Config.GPUs)

	// Clip: r = 0 gives 3000 instead of dropping the entry.
	j.State = JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 1}, Restarts: 1000, PeakReplicas: 1}
	snap.Jobs[0] = j
	m, err = newMatrix(snap, &Options{Artifact: &ArtifactKnobs{Clip: true}})
	require.NoError(t, err)
	for k, e := range m.Rows[0].Entries {
		if k != m.Rows[0].Current {
			assert.Equal(t, artifactClip, e.Value)
			assert.False(t, e.Dropped)
		}
	}
}

func TestBlindFirstAndNoModel(t *testing.T) {
	models := bootstrap.Static{"B": {
		Params:    goodput.Params{AlphaC: 0.01, BetaC: 0.001, AlphaN: 0.01, BetaN: 0.001, AlphaR: 0.01, BetaR: 0.001, Gamma: 1},
		InitBatch: 32, MaxBatch: 1024, Limits: goodput.Limits{MinLocalBatch: 8, MaxLocalBatch: 256},
	}}
	j := Job{ID: "j", Submitted: t0, Models: models}
	snap := &Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{j}}
	m, err := newMatrix(snap, &Options{NoScaleUpCap: true})
	require.NoError(t, err)
	row := m.Rows[0]
	a1, ok := entryFor(row, "A", 1)
	require.True(t, ok)
	assert.Equal(t, bootstrap.None, a1.Source)
	assert.Equal(t, 1.0, a1.Normalized)
	_, ok = entryFor(row, "A", 2)
	assert.False(t, ok, "a type without a model offers one replica only")
	b8, ok := entryFor(row, "B", 8)
	require.True(t, ok)
	assert.Greater(t, b8.Normalized, 1.0)

	m, err = newMatrix(snap, &Options{NoScaleUpCap: true, Artifact: &ArtifactKnobs{BlindFirst: true}})
	require.NoError(t, err)
	var valid []matrixEntry
	for _, e := range m.Rows[0].Entries {
		if !e.Invalid {
			valid = append(valid, e)
		}
	}
	require.Len(t, valid, 2, "blind first placement: one 1-GPU option per type")
	for _, e := range valid {
		assert.Equal(t, 1, e.Config.GPUs)
		assert.Equal(t, 1.0, e.Normalized)
	}
}

func TestScaleUpCapAndKinds(t *testing.T) {
	tab := siatest.Table{"A": {1: 1, 2: 2, 4: 4}, "B": {1: 1, 2: 2, 4: 4, 8: 8, 12: 11, 16: 14}}
	cl := []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "b0", Type: "B", GPUs: 8}, {ID: "b1", Type: "B", GPUs: 8}}
	snap := &Snapshot{Now: t0, Nodes: cl, Jobs: []Job{
		{ID: "new", Submitted: t0, Models: tab},
		{ID: "grown", Submitted: t0, Models: tab, State: JobState{PeakReplicas: 2}},
		{ID: "strong", Kind: StrongScaling, Submitted: t0, Models: tab},
		{ID: "rigid", Kind: Rigid, GPUs: 12, Submitted: t0, Models: tab},
		{ID: "hybrid", Submitted: t0, Models: pipelined{tab, map[string]int{"B": 4}}, State: JobState{PeakReplicas: 1}},
	}}
	m, err := newMatrix(snap, nil)
	require.NoError(t, err)
	maxGPUs := func(r matrixRow) int {
		g := 0
		for _, e := range r.Entries {
			g = max(g, e.Config.GPUs)
		}
		return g
	}
	assert.Equal(t, 1, maxGPUs(m.Rows[0]), "never ran: one GPU")
	assert.Equal(t, 4, maxGPUs(m.Rows[1]), "ran on 2: at most 4")
	assert.Equal(t, 16, maxGPUs(m.Rows[2]), "strong scaling: no cap")
	require.Len(t, m.Rows[3].Entries, 1, "rigid 12 GPUs fits only type B")
	e := m.Rows[3].Entries[0]
	assert.Equal(t, "B", e.Config.Type)
	assert.Equal(t, 2, e.Config.Nodes)
	assert.Equal(t, 12.0, e.Normalized, "rigid rows are normalised to their count")
	for _, e := range m.Rows[4].Entries {
		assert.Equal(t, "B", e.Config.Type, "hybrid job only on types with a replica size")
		assert.Zero(t, e.Config.GPUs%4)
		assert.LessOrEqual(t, e.Replicas, 2)
	}
}

func TestPins(t *testing.T) {
	tab := siatest.Table{"A": {1: 1, 2: 2, 4: 4}, "B": {1: 1, 2: 2, 4: 4, 8: 8}}
	cur := Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 2}, {"a0", 3}}}
	snap := &Snapshot{Now: t0.Add(time.Hour), Nodes: twoTypes(), Jobs: []Job{
		{ID: "restoring", Submitted: t0, Models: tab, State: JobState{Current: cur, Restoring: true, PeakReplicas: 2}},
		{ID: "np-running", Submitted: t0, NonPreemptible: true, Models: tab,
			State: JobState{Current: Allocation{Type: "B", Nodes: 1, GPUs: 1, Placement: []GPU{{"b0", 7}}}, PeakReplicas: 1}},
		{ID: "np-queued", Submitted: t0, NonPreemptible: true, Models: tab},
		{ID: "free", Submitted: t0, Models: tab, State: JobState{PeakReplicas: 8}},
	}}
	m, err := newMatrix(snap, nil)
	require.NoError(t, err)
	assert.Equal(t, m.Rows[0].Current, m.Rows[0].Pin)
	assert.GreaterOrEqual(t, m.Rows[0].Pin, 0)
	assert.Equal(t, m.Rows[1].Current, m.Rows[1].Pin)
	assert.Equal(t, -1, m.Rows[2].Pin, "a queued non-preemptible job is free to start anywhere")
	assert.Equal(t, -1, m.Rows[3].Pin)
	s, err := New(nil)
	require.NoError(t, err)
	p, err := s.Round(context.Background(), *snap)
	require.NoError(t, err)
	checkPlan(t, snap, &p)
	assert.Equal(t, cur.Placement, p.Decisions[0].Allocation.Placement)
	assert.True(t, p.Decisions[0].Pinned)

	// Pins that cannot hold together are ErrInfeasible, an
	// *InfeasibleError, and the empty plan's zero Status is not optimal.
	bad := &Snapshot{Now: t0, Nodes: twoTypes(), Reserved: map[string]int{"A": 3}, Jobs: snap.Jobs[:1]}
	p, err = s.Round(context.Background(), *bad)
	require.ErrorIs(t, err, ErrInfeasible)
	var fe *InfeasibleError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "restoring", fe.Job)
	assert.Equal(t, StatusUnknown, p.Status)
	assert.False(t, p.Status.Optimal())
}

// TestStatusZeroIsUnknown: a zero Status, the matrix stage's Event and an
// error's empty Plan never read "optimal".
func TestStatusZeroIsUnknown(t *testing.T) {
	var zero Status
	assert.Equal(t, StatusUnknown, zero)
	assert.Equal(t, "unknown", zero.String())
	assert.False(t, zero.Optimal())
	var events []Event
	s, err := New(&Options{Observer: func(e Event) { events = append(events, e) }})
	require.NoError(t, err)
	p, err := s.Round(context.Background(), Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "j", Models: linear}}})
	require.NoError(t, err)
	assert.Equal(t, StatusOptimal, p.Status)
	require.Len(t, events, 3)
	assert.Equal(t, StatusUnknown, events[0].Status, "the matrix stage has no solver status")
	assert.Equal(t, StatusOptimal, events[1].Status)
}

func TestStrongScalingFixedBatch(t *testing.T) {
	model := goodput.Model{
		Params:    goodput.Params{AlphaC: 0.01, BetaC: 0.001, AlphaN: 0.02, BetaN: 0.002, AlphaR: 0.01, BetaR: 0.001, Gamma: 1.5},
		Grad:      goodput.GradStats{Sqr: 1, Var: 10},
		InitBatch: 32, MaxBatch: 512, Limits: goodput.Limits{MinLocalBatch: 8, MaxLocalBatch: 128},
	}
	snap := &Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{
		{ID: "strong", Kind: StrongScaling, Submitted: t0, Models: bootstrap.Static{"A": model, "B": model}},
	}}
	m, err := newMatrix(snap, nil)
	require.NoError(t, err)
	require.NotEmpty(t, m.Rows[0].Entries)
	for _, e := range m.Rows[0].Entries {
		assert.GreaterOrEqual(t, e.Choice.GlobalBatch, 512, "%v", e.Config)
		assert.Less(t, e.Choice.GlobalBatch, 512+e.Replicas*(e.Choice.AccumSteps+1), "%v", e.Config)
	}

	// A model with its own fixed batch runs at it, not at MaxBatch.
	model.FixedBatch = 96
	snap.Jobs[0].Models = bootstrap.Static{"A": model, "B": model}
	m, err = newMatrix(snap, nil)
	require.NoError(t, err)
	require.NotEmpty(t, m.Rows[0].Entries)
	for _, e := range m.Rows[0].Entries {
		if e.Source == bootstrap.None || e.Invalid {
			continue
		}
		assert.GreaterOrEqual(t, e.Choice.GlobalBatch, 96, "%v", e.Config)
		assert.Less(t, e.Choice.GlobalBatch, 96+e.Replicas*(e.Choice.AccumSteps+1), "%v", e.Config)
	}
}

func TestInvalidSnapshots(t *testing.T) {
	tab := siatest.Table{"A": {1: 1}}
	good := func() Snapshot {
		return Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "j", Submitted: t0, Models: tab}}}
	}
	cases := map[string]struct {
		mut   func(s *Snapshot)
		field string
	}{
		"empty node id":      {func(s *Snapshot) { s.Nodes[0].ID = "" }, "Nodes[0].ID"},
		"duplicate node":     {func(s *Snapshot) { s.Nodes[1].ID = "a0" }, "Nodes[1].ID"},
		"empty type":         {func(s *Snapshot) { s.Nodes[0].Type = "" }, "Nodes[0].Type"},
		"zero gpus":          {func(s *Snapshot) { s.Nodes[0].GPUs = 0 }, "Nodes[0].GPUs"},
		"empty job id":       {func(s *Snapshot) { s.Jobs[0].ID = "" }, "Jobs[0].ID"},
		"duplicate job":      {func(s *Snapshot) { s.Jobs = append(s.Jobs, s.Jobs[0]) }, "Jobs[1].ID"},
		"bad kind":           {func(s *Snapshot) { s.Jobs[0].Kind = 9 }, "Jobs[0].Kind"},
		"nil models":         {func(s *Snapshot) { s.Jobs[0].Models = nil }, "Jobs[0].Models"},
		"negative min":       {func(s *Snapshot) { s.Jobs[0].MinGPUs = -1 }, "Jobs[0].MinGPUs"},
		"negative max":       {func(s *Snapshot) { s.Jobs[0].MaxGPUs = -1 }, "Jobs[0].MaxGPUs"},
		"min above max":      {func(s *Snapshot) { s.Jobs[0].MinGPUs, s.Jobs[0].MaxGPUs = 4, 2 }, "Jobs[0].MinGPUs"},
		"rigid without gpus": {func(s *Snapshot) { s.Jobs[0].Kind = Rigid }, "Jobs[0].GPUs"},
		"gpus on adaptive":   {func(s *Snapshot) { s.Jobs[0].GPUs = 2 }, "Jobs[0].GPUs"},
		"future submission":  {func(s *Snapshot) { s.Jobs[0].Submitted = t0.Add(time.Hour) }, "Jobs[0].Submitted"},
		"negative stages":    {func(s *Snapshot) { s.Jobs[0].Models = pipelined{tab, map[string]int{"A": -1}} }, "Jobs[0].Models"},
		"negative restarts":  {func(s *Snapshot) { s.Jobs[0].State.Restarts = -1 }, "Jobs[0].State.Restarts"},
		"negative cost":      {func(s *Snapshot) { s.Jobs[0].State.RestartCost = -time.Second }, "Jobs[0].State.RestartCost"},
		"negative peak":      {func(s *Snapshot) { s.Jobs[0].State.PeakReplicas = -1 }, "Jobs[0].State.PeakReplicas"},
		"restoring idle job": {func(s *Snapshot) { s.Jobs[0].State.Restoring = true }, "Jobs[0].State.Restoring"},
		"type without gpus":  {func(s *Snapshot) { s.Jobs[0].State.Current.Type = "A" }, "Jobs[0].State.Current"},
		"unknown cur type": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "Z", Nodes: 1, GPUs: 1}
		}, "Jobs[0].State.Current.Type"},
		"cur nodes": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 2, GPUs: 1}
		}, "Jobs[0].State.Current.Nodes"},
		"cur over capacity": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 5}
		}, "Jobs[0].State.Current.GPUs"},
		"placement length": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}}}
		}, "Jobs[0].State.Current.Placement"},
		"placement node": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"zz", 0}}}
		}, "Jobs[0].State.Current.Placement[0]"},
		"placement type": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"b0", 0}}}
		}, "Jobs[0].State.Current.Placement[0]"},
		"placement index": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 4}}}
		}, "Jobs[0].State.Current.Placement[0]"},
		"shared gpu": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 1}}}
			s.Jobs = append(s.Jobs, Job{ID: "k", Submitted: t0, Models: tab,
				State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 1}}}}})
		}, "Jobs[1].State.Current.Placement[0]"},
		"placement nodes": {func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "B", Nodes: 2, GPUs: 2, Placement: []GPU{{"b0", 0}, {"b0", 1}}}
		}, "Jobs[0].State.Current.Nodes"},
		"rigid count": {func(s *Snapshot) { // of a pinned job (an unpinned one is resized)
			s.Jobs[0].Kind, s.Jobs[0].GPUs, s.Jobs[0].NonPreemptible = Rigid, 2, true
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 0}}}
		}, "Jobs[0].State.Current.GPUs"},
		"replica multiple, pinned": {func(s *Snapshot) { // unpinned: resized (TestProbe7RunningJobBecomesPipeline)
			s.Jobs[0].Models = pipelined{s.Jobs[0].Models, map[string]int{"A": 2}}
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 0}}}
			s.Jobs[0].State.Restoring = true
		}, "Jobs[0].State.Current.GPUs"},
		"reserved type":     {func(s *Snapshot) { s.Reserved = map[string]int{"Z": -1} }, "Reserved"}, // Z: 1 has no effect
		"reserved negative": {func(s *Snapshot) { s.Reserved = map[string]int{"A": -5} }, "Reserved"}, // too much: the whole type (TestReservedAboveCapacityWithholdsType)
		"invalid model": {func(s *Snapshot) {
			s.Jobs[0].Models = bootstrap.Static{"A": {InitBatch: 1, MaxBatch: 1}}
		}, "Jobs[0].Models"},
	}
	sched, err := New(nil)
	require.NoError(t, err)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := good()
			s.Nodes = append([]Node(nil), s.Nodes...)
			c.mut(&s)
			_, err := sched.Round(context.Background(), s)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, c.field, ie.Field)
		})
	}
	// A valid snapshot with no jobs, or no nodes, is fine.
	p, err := sched.Round(context.Background(), Snapshot{Now: t0, Nodes: twoTypes()})
	require.NoError(t, err)
	assert.Empty(t, p.Decisions)
	p, err = sched.Round(context.Background(), Snapshot{Now: t0, Jobs: []Job{{ID: "j", Models: tab}}})
	require.NoError(t, err)
	assert.Equal(t, Queue, p.Decisions[0].Action)
	// A job larger than the whole cluster stays queued.
	p, err = sched.Round(context.Background(), Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "big", MinGPUs: 100, Models: tab}}})
	require.NoError(t, err)
	assert.Equal(t, Queue, p.Decisions[0].Action)
}

func TestInvalidOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"nan p":           {P: math.NaN()},
		"inf lambda":      {Lambda: math.Inf(1)},
		"lambda sign":     {P: -0.5, Lambda: -1.1},
		"scaleup":         {ScaleUpFactor: 0.5},
		"maxgpus":         {MaxGPUsPerJob: -1},
		"penalty":         {RestartCost: -time.Second},
		"deadline":        {SolverDeadline: -time.Second},
		"solver max node": {SolverMaxNodes: -1},
	} {
		_, err := New(&o)
		require.ErrorIs(t, err, ErrInvalidInput, name)
		var ie *InputError
		require.ErrorAs(t, err, &ie, name)
		assert.Contains(t, ie.Field, "Options.", name)
	}
}

// TestObserverAndDeadline: the observer sees every stage; a solver deadline
// still gives a valid plan.
func TestObserverAndDeadline(t *testing.T) {
	snap, err := steadySnapshot(1, 20, 5)
	require.NoError(t, err)
	var stages []Stage
	s, err := New(&Options{Observer: func(e Event) { stages = append(stages, e.Stage) }, SolverDeadline: time.Nanosecond})
	require.NoError(t, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, []Stage{StageMatrix, StageSolve, StagePlace}, stages)
	checkPlan(t, &snap, &p)
	assert.Contains(t, []Status{StatusOptimal, StatusFeasible}, p.Status)
	// An already cancelled context: the matrix is partial, running jobs
	// keep their allocations, queued jobs wait, the plan is valid.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err = s.Round(ctx, snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &p)
	assert.True(t, p.matrix.Partial)
	assert.Equal(t, StatusFeasible, p.Status)
	for i, d := range p.Decisions {
		cur := snap.Jobs[i].State.Current
		if cur.Running() {
			assert.Equal(t, Keep, d.Action, d.Job)
		} else {
			assert.Equal(t, Queue, d.Action, d.Job)
		}
	}
}

func TestQuotas(t *testing.T) {
	tab := siatest.Table{"A": {1: 1, 2: 2, 4: 4}, "B": {1: 1, 2: 2, 4: 4, 8: 8}}
	snap := Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{
		{ID: "q1", Submitted: t0, Models: tab, State: JobState{PeakReplicas: 8}},
		{ID: "q2", Submitted: t0, Models: tab, State: JobState{PeakReplicas: 8}},
		{ID: "other", Submitted: t0, Models: tab},
	}, Quotas: []Quota{{Name: "team", Jobs: []string{"q1", "q2"}, Limit: 3}}}
	for _, seed := range []uint64{0, 5} {
		s, err := New(&Options{Seed: seed})
		require.NoError(t, err)
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		checkPlan(t, &snap, &p)
		used := p.Decisions[0].Allocation.GPUs + p.Decisions[1].Allocation.GPUs
		assert.LessOrEqual(t, used, 3)
		best, _ := bruteForce(p.matrix)
		assert.InDelta(t, best, p.Objective, 1e-9)
	}
	for name, q := range map[string]Quota{
		"unknown job":  {Name: "x", Jobs: []string{"zz"}, Limit: 1},
		"twice":        {Name: "x", Jobs: []string{"q1", "q1"}, Limit: 1},
		"unknown type": {Name: "x", Jobs: []string{"q1"}, Type: "Z", Limit: -1}, // Limit 1: no effect
		"negative":     {Name: "x", Jobs: []string{"q1"}, Limit: -1},
	} {
		bad := snap
		bad.Quotas = []Quota{q}
		_, err := newMatrix(&bad, nil)
		assert.ErrorIs(t, err, ErrInvalidInput, name)
	}
}

// TestHybridReplicaSizeFromStages: a hybrid-parallel job's replica size on a
// type is its model's pipeline stages (one source, goodput.Model.Stages): it
// is offered whole pipelines, and only on the types its models list.
func TestHybridReplicaSizeFromStages(t *testing.T) {
	m := goodput.Model{Params: goodput.Params{AlphaC: 0.1, BetaC: 0.01, Gamma: 1}, InitBatch: 48, MaxBatch: 384, Stages: 4, MicroBatches: 48}
	snap := &Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{
		{ID: "pipe", Submitted: t0, Models: bootstrap.Static{"B": m}, State: JobState{PeakReplicas: 2}},
	}}
	mat, err := newMatrix(snap, nil)
	require.NoError(t, err)
	require.NotEmpty(t, mat.Rows[0].Entries)
	for _, e := range mat.Rows[0].Entries {
		assert.Equal(t, "B", e.Config.Type, "a type without stages is not offered")
		assert.Zero(t, e.Config.GPUs%4, "%v: whole pipelines of 4 stages", e.Config)
		assert.Equal(t, e.Config.GPUs/4, e.Replicas, "%v", e.Config)
	}
	// Stages that cannot be a count are an error naming the job and type.
	m.Stages = -2
	snap.Jobs[0].Models = bootstrap.Static{"B": m}
	_, err = newMatrix(snap, nil)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "pipe", ie.Job)
	assert.Equal(t, "B", ie.Type)
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(&Options{Logger: logger})
	require.NoError(t, err)
	_, err = s.Round(context.Background(), Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "j", Models: siatest.Table{"A": {1: 1}}}}})
	require.NoError(t, err)
	assert.Contains(t, buf.String(), "sia round")
	assert.Contains(t, buf.String(), "jobs=1")
	assert.Contains(t, buf.String(), "status=optimal")
}

// badEvaluator returns unusable goodputs and batch sizes.
type badEvaluator struct{}

func (badEvaluator) Model(string) (goodput.Model, bootstrap.Source) {
	return goodput.Model{InitBatch: 8, MaxBatch: 64}, bootstrap.Measured
}

func (badEvaluator) Evaluate(_ string, _, replicas int) (goodput.Choice, bool) {
	switch replicas {
	case 1:
		return goodput.Choice{Goodput: 2, LocalBatch: -3, GlobalBatch: -3}, true
	case 2:
		return goodput.Choice{Goodput: math.NaN()}, true
	default:
		return goodput.Choice{Goodput: math.Inf(1)}, true
	}
}

// TestBadEvaluator: NaN, infinite and non-positive goodputs from a host's
// Evaluator mark configurations invalid; bad batch sizes are replaced.
func TestBadEvaluator(t *testing.T) {
	snap := Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{{ID: "j", Submitted: t0, Models: badEvaluator{}}}}
	s, err := New(&Options{NoScaleUpCap: true})
	require.NoError(t, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	for _, e := range p.matrix.Rows[0].Entries {
		assert.Equal(t, 1, e.Replicas, "only the one-replica entries are valid")
	}
	d := p.Decisions[0]
	require.True(t, d.Allocation.Running())
	assert.Positive(t, d.LocalBatch)
	assert.Equal(t, d.Replicas*d.LocalBatch*(d.AccumSteps+1), d.GlobalBatch)
}
