package sia

import (
	"context"
	"github.com/sia-sched/sia/sia/siatest"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnapshotRules: snapshots that used to be accepted and then misread
// are errors naming the job (or node, type) and the field.
func TestSnapshotRules(t *testing.T) {
	two := func() []Node {
		return []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "a1", Type: "A", GPUs: 4}, {ID: "b0", Type: "B", GPUs: 8}}
	}
	on := func(ty string, nodes int, gpus ...GPU) Allocation {
		return Allocation{Type: ty, Nodes: nodes, GPUs: len(gpus), Placement: gpus}
	}
	good := func() Snapshot {
		return Snapshot{Now: t0.Add(time.Hour), Nodes: two(), Jobs: []Job{{ID: "j", Submitted: t0, Models: linear}}}
	}
	cases := map[string]struct {
		mut        func(s *Snapshot)
		job, field string
		infeasible bool
	}{
		"zero now": {mut: func(s *Snapshot) { s.Now = time.Time{} }, field: "Snapshot.Now"},
		"zero now, zero submission": {mut: func(s *Snapshot) {
			s.Now, s.Jobs[0].Submitted = time.Time{}, time.Time{}
		}, field: "Snapshot.Now"},
		"submitted after now": {mut: func(s *Snapshot) { s.Jobs[0].Submitted = s.Now.Add(time.Nanosecond) }, job: "j", field: "Jobs[0].Submitted"},
		"running without placement": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 2}
		}, job: "j", field: "Jobs[0].State.Current.Placement"},
		"restoring without placement": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current, s.Jobs[0].State.Restoring = Allocation{Type: "A", Nodes: 1, GPUs: 2}, true
		}, job: "j", field: "Jobs[0].State.Current.Placement"},
		"non-preemptible without placement": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current, s.Jobs[0].NonPreemptible = Allocation{Type: "A", Nodes: 1, GPUs: 2}, true
		}, job: "j", field: "Jobs[0].State.Current.Placement"},
		"more nodes than the type has": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "B", Nodes: 2, GPUs: 2}
		}, job: "j", field: "Jobs[0].State.Current.Nodes"},
		"more GPUs than its nodes hold": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "A", Nodes: 1, GPUs: 6}
		}, job: "j", field: "Jobs[0].State.Current.GPUs"},
		"GPU listed twice": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current = on("A", 1, GPU{"a0", 1}, GPU{"a0", 1})
		}, job: "j", field: "Jobs[0].State.Current.Placement[1]"},
		"GPU shared by two jobs": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current = on("A", 1, GPU{"a0", 1})
			s.Jobs = append(s.Jobs, Job{ID: "k", Submitted: t0, Models: linear, State: JobState{Current: on("A", 1, GPU{"a0", 1})}})
		}, job: "k", field: "Jobs[1].State.Current.Placement[0]"},
		"GPU out of range": {mut: func(s *Snapshot) {
			s.Jobs[0].State.Current = on("A", 1, GPU{"a0", -1})
		}, job: "j", field: "Jobs[0].State.Current.Placement[0]"},
		"pinned below MinGPUs": {mut: func(s *Snapshot) {
			s.Jobs[0].MinGPUs = 2
			s.Jobs[0].State.Current, s.Jobs[0].State.Restoring = on("A", 1, GPU{"a0", 0}), true
		}, job: "j", field: "Jobs[0].State.Current.GPUs"},
		"pinned above MaxGPUs": {mut: func(s *Snapshot) {
			s.Jobs[0].MaxGPUs, s.Jobs[0].NonPreemptible = 1, true
			s.Jobs[0].State.Current = on("A", 1, GPU{"a0", 0}, GPU{"a0", 1})
		}, job: "j", field: "Jobs[0].State.Current.GPUs"},
		"pinned outside Types": {mut: func(s *Snapshot) {
			s.Jobs[0].Types, s.Jobs[0].NonPreemptible = []string{"B"}, true
			s.Jobs[0].State.Current = on("A", 1, GPU{"a0", 0})
		}, job: "j", field: "Jobs[0].State.Current.Type"},
		"pins beyond capacity less Reserved": {mut: func(s *Snapshot) {
			s.Reserved = map[string]int{"A": 7}
			s.Jobs[0].NonPreemptible = true
			s.Jobs[0].State.Current = on("A", 1, GPU{"a0", 0}, GPU{"a0", 1})
		}, job: "j", field: "Jobs[0].State.Current.GPUs", infeasible: true},
		"empty Types":         {mut: func(s *Snapshot) { s.Jobs[0].Types = []string{} }, job: "j", field: "Jobs[0].Types"},
		"empty type in Types": {mut: func(s *Snapshot) { s.Jobs[0].Types = []string{"A", ""} }, job: "j", field: "Jobs[0].Types[1]"},
		"type twice in Types": {mut: func(s *Snapshot) { s.Jobs[0].Types = []string{"A", "A"} }, job: "j", field: "Jobs[0].Types[1]"},
		"node GPUs near MaxInt (sums cannot overflow)": {mut: func(s *Snapshot) {
			s.Nodes = []Node{{ID: "x", Type: "X", GPUs: math.MaxInt/2 + 1}, {ID: "y", Type: "Y", GPUs: math.MaxInt/2 + 1}}
		}, field: "Nodes[0].GPUs"},
		"node of too many GPUs": {mut: func(s *Snapshot) { s.Nodes[1].GPUs = 1 << 40 }, field: "Nodes[1].GPUs"},
		"reserved MinInt":       {mut: func(s *Snapshot) { s.Reserved = map[string]int{"A": math.MinInt} }, field: "Reserved"}, // beyond the type: the whole type
		"negative quota":        {mut: func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Jobs: []string{"j"}, Limit: math.MinInt}} }, field: "Quotas[0].Limit"},
	}
	s, err := New(nil)
	require.NoError(t, err)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			snap := good()
			c.mut(&snap)
			_, err := s.Round(context.Background(), snap)
			require.Error(t, err)
			if c.infeasible {
				require.ErrorIs(t, err, ErrInfeasible)
				assert.NotErrorIs(t, err, ErrInvalidInput, "infeasibility is not bad input")
				var fe *InfeasibleError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, c.field, fe.Field, "%v", err)
				assert.Equal(t, c.job, fe.Job, "%v", err)
			} else {
				require.ErrorIs(t, err, ErrInvalidInput)
				var ie *InputError
				require.ErrorAs(t, err, &ie)
				assert.Equal(t, c.field, ie.Field, "%v", err)
				assert.Equal(t, c.job, ie.Job, "%v", err)
			}
			assert.Equal(t, err, snap.Validate(), "Snapshot.Validate agrees with Round")
		})
	}
}

// TestMatrixWithoutPlacement: BuildMatrix does not need the GPUs of running
// jobs, Place does.
func TestMatrixWithoutPlacement(t *testing.T) {
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: twoTypes(), Jobs: []Job{{ID: "j", Submitted: t0, Models: linear,
		State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 2}, PeakReplicas: 2}}}}
	m, err := newMatrix(&snap, nil)
	require.NoError(t, err)
	sol, err := solveMatrix(context.Background(), m, nil)
	require.NoError(t, err)
	_, err = placeSolution(&snap, m, sol)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "Jobs[0].State.Current.Placement", ie.Field)
}

// TestNumbersNearMaxInt: counts near MaxInt are either errors or handled
// without overflow (no panic, no wrapped-around count).
func TestNumbersNearMaxInt(t *testing.T) {
	s, err := New(nil)
	require.NoError(t, err)
	cl := []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "a1", Type: "A", GPUs: 4}}
	round := func(j Job) Decision {
		t.Helper()
		j.ID, j.Submitted = "j", t0
		p, err := s.Round(context.Background(), Snapshot{Now: t0.Add(time.Hour), Nodes: cl, Jobs: []Job{j}})
		require.NoError(t, err)
		return p.Decisions[0]
	}
	d := round(Job{MinGPUs: math.MaxInt, Models: linear})
	assert.Equal(t, ReasonTooLarge, d.Reason)
	d = round(Job{MinGPUs: math.MaxInt - 1, MaxGPUs: math.MaxInt, Models: linear})
	assert.Equal(t, ReasonTooLarge, d.Reason)
	d = round(Job{Kind: Rigid, GPUs: math.MaxInt, Models: linear})
	assert.Equal(t, ReasonTooLarge, d.Reason)
	d = round(Job{Models: pipelined{linear, map[string]int{"A": math.MaxInt}}})
	assert.Equal(t, ReasonTooLarge, d.Reason)
	d = round(Job{MaxGPUs: math.MaxInt, Models: linear, State: JobState{PeakReplicas: math.MaxInt}})
	assert.Equal(t, 8, d.Allocation.GPUs, "a huge peak does not wrap the scale-up cap around to 1")
	d = round(Job{Models: linear, State: JobState{PeakReplicas: math.MaxInt / 2, Restarts: math.MaxInt, RestartCost: time.Duration(math.MaxInt64)}})
	assert.Equal(t, Start, d.Action)
	p, err := s.Round(context.Background(), Snapshot{Now: t0.Add(time.Hour), Nodes: cl,
		Jobs:   []Job{{ID: "j", Submitted: t0, Models: linear}},
		Quotas: []Quota{{Name: "q", Jobs: []string{"j"}, Limit: math.MaxInt}}})
	require.NoError(t, err)
	assert.Equal(t, Start, p.Decisions[0].Action)
	// Submitted long before Now: the age saturates, the factor stays in [0, 1].
	p, err = s.Round(context.Background(), Snapshot{Now: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), Nodes: cl,
		Jobs: []Job{{ID: "j", Submitted: time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), Models: linear,
			State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 0}}}, PeakReplicas: 1, Restarts: 3}}}})
	require.NoError(t, err)
	r := p.matrix.Rows[0].Restart
	assert.True(t, r >= 0 && r <= 1, "restart factor %v", r)
}

// TestOptionsValidate: every numeric option is checked for NaN, infinities,
// negatives and values too large.
func TestOptionsValidate(t *testing.T) {
	cases := map[string]struct {
		o     Options
		field string
	}{
		"P NaN":                  {Options{P: math.NaN()}, "Options.P"},
		"P infinite":             {Options{P: math.Inf(-1)}, "Options.P"},
		"P too large":            {Options{P: -MaxP * 1.01, Lambda: 1}, "Options.P"},
		"Lambda NaN":             {Options{Lambda: math.NaN()}, "Options.Lambda"},
		"Lambda infinite":        {Options{Lambda: math.Inf(1)}, "Options.Lambda"},
		"Lambda too large":       {Options{Lambda: MaxLambda * 2}, "Options.Lambda"},
		"Lambda wrong sign":      {Options{Lambda: -1}, "Options.Lambda"},
		"ScaleUpFactor NaN":      {Options{ScaleUpFactor: math.NaN()}, "Options.ScaleUpFactor"},
		"ScaleUpFactor below 1":  {Options{ScaleUpFactor: 0.5}, "Options.ScaleUpFactor"},
		"ScaleUpFactor infinite": {Options{ScaleUpFactor: math.Inf(1)}, "Options.ScaleUpFactor"},
		"ScaleUpFactor too big":  {Options{ScaleUpFactor: MaxScaleUpFactor * 2}, "Options.ScaleUpFactor"},
		"MaxGPUsPerJob negative": {Options{MaxGPUsPerJob: -1}, "Options.MaxGPUsPerJob"},
		"RestartCost":            {Options{RestartCost: -time.Second}, "Options.RestartCost"},
		"SolverDeadline":         {Options{SolverDeadline: -time.Second}, "Options.SolverDeadline"},
		"SolverMaxNodes":         {Options{SolverMaxNodes: -1}, "Options.SolverMaxNodes"},
		"Parallelism":            {Options{Parallelism: -1}, "Options.Parallelism"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(&c.o)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, c.field, ie.Field)
		})
	}
	for _, o := range []Options{{RoundTimeout: -1}, {P: MaxP, Lambda: -MaxLambda}, {ScaleUpFactor: MaxScaleUpFactor}, {MaxGPUsPerJob: math.MaxInt}} {
		_, err := New(&o)
		assert.NoError(t, err, "%+v", o)
	}
	assert.Equal(t, DefaultRoundTimeout, (*Options)(nil).WithDefaults().RoundTimeout)
}

// TestRoundTimeoutDefault: a round whose ctx has no deadline gets
// Options.RoundTimeout; a negative one means none.
func TestRoundTimeoutDefault(t *testing.T) {
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: twoTypes(), Jobs: []Job{{ID: "j", Submitted: t0, Models: linear}}}
	for _, c := range []struct {
		timeout time.Duration
		want    bool
	}{{0, true}, {time.Hour, true}, {-1, false}} {
		s, err := New(&Options{RoundTimeout: c.timeout})
		require.NoError(t, err)
		ctx, cancel := roundContext(context.Background(), &s.opts)
		_, has := ctx.Deadline()
		cancel()
		assert.Equal(t, c.want, has, "timeout %v", c.timeout)
		_, err = s.Round(context.Background(), snap)
		require.NoError(t, err)
	}
	// A ctx deadline wins over RoundTimeout.
	s, _ := New(&Options{RoundTimeout: time.Nanosecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	rc, rcancel := roundContext(ctx, &s.opts)
	defer rcancel()
	dl, _ := rc.Deadline()
	assert.Greater(t, time.Until(dl), time.Minute)
	p, err := s.Round(ctx, snap)
	require.NoError(t, err)
	assert.Equal(t, Start, p.Decisions[0].Action)
}

// TestHugeValues: goodput ratios that would give values beyond 1e150 are not
// offered (a pinned one is capped), so the objective stays finite.
func TestHugeValues(t *testing.T) {
	tab := siatest.Table{"A": {1: 1e-300, 2: 1, 4: 1e300}}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "a1", Type: "A", GPUs: 4}},
		Jobs: []Job{
			{ID: "j", Submitted: t0, Models: tab},
			{ID: "k", Submitted: t0, Models: tab, NonPreemptible: true, State: JobState{PeakReplicas: 4,
				Current: Allocation{Type: "A", Nodes: 1, GPUs: 4, Placement: []GPU{{"a1", 0}, {"a1", 1}, {"a1", 2}, {"a1", 3}}}}},
		}}
	s, err := New(&Options{P: 1, Lambda: -1.1, NoScaleUpCap: true})
	require.NoError(t, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.False(t, math.IsInf(p.Objective, 0) || math.IsNaN(p.Objective), "objective %v", p.Objective)
	for _, r := range p.matrix.Rows {
		for k, e := range r.Entries {
			if !e.Dropped {
				assert.LessOrEqual(t, math.Abs(e.Value), 1e150, "job %s entry %d", r.Job, k)
			}
		}
	}
	assert.Equal(t, Keep, p.Decisions[1].Action)
}
