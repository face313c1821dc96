package sia

import (
	"context"
	"encoding/json"
	"github.com/sia-sched/sia/sia/siatest"
	"math"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdvance: the restart rule and the peak, per action.
func TestAdvance(t *testing.T) {
	a2 := Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}
	b4 := Allocation{Type: "B", Nodes: 1, GPUs: 4, Placement: []GPU{{"b0", 0}, {"b0", 1}, {"b0", 2}, {"b0", 3}}}
	until := t0.Add(time.Minute)
	cases := map[string]struct {
		before       JobState
		d            Decision
		wantRestarts int
		wantPeak     int
		wantUntil    time.Time
	}{
		"first start": {before: JobState{}, d: Decision{Action: Start, Allocation: a2, Replicas: 2},
			wantRestarts: 0, wantPeak: 2},
		"start after preemption": {before: JobState{Restarts: 1, PeakReplicas: 4},
			d: Decision{Action: Start, Allocation: a2, Replicas: 2, Restart: true, RestoreUntil: until}, wantRestarts: 2, wantPeak: 4, wantUntil: until},
		"migrate": {before: JobState{Current: a2, PeakReplicas: 2},
			d: Decision{Action: Migrate, Allocation: b4, Replicas: 4, Restart: true, RestoreUntil: until}, wantRestarts: 1, wantPeak: 4, wantUntil: until},
		"keep": {before: JobState{Current: a2, PeakReplicas: 2, Restarts: 3, RestoreUntil: until},
			d: Decision{Action: Keep, Allocation: a2, Replicas: 2}, wantRestarts: 3, wantPeak: 2, wantUntil: until},
		"preempt": {before: JobState{Current: a2, PeakReplicas: 2, RestoreUntil: until, Restoring: true},
			d: Decision{Action: Preempt, Restart: false}, wantRestarts: 0, wantPeak: 2},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			st := c.before
			st.Advance(c.d)
			assert.Equal(t, c.wantRestarts, st.Restarts)
			assert.Equal(t, c.wantPeak, st.PeakReplicas)
			assert.Equal(t, c.d.Allocation, st.Current)
			assert.Equal(t, c.wantUntil, st.RestoreUntil)
			assert.False(t, st.Restoring)
		})
	}
	for _, a := range []Action{Queue, Keep, Start, Resize, Move, Migrate, Preempt} {
		ran := JobState{PeakReplicas: 1}
		want := a == Resize || a == Move || a == Migrate || a == Start
		assert.Equal(t, want, restarts(&ran, a), "%v after a run", a)
		assert.Equal(t, want && a != Start, restarts(&JobState{}, a), "%v of a new job", a)
	}
}

// TestAdvanceRounds: the round fills Restart and RestoreUntil (Now + S), a
// job is pinned while a later round's Now is before RestoreUntil and free
// after, and a preempted job that starts again counts a restart.
func TestAdvanceRounds(t *testing.T) {
	// j runs on A; once B is free and far better, it migrates (a restart).
	tab := siatest.Table{"A": {1: 1, 2: 2}, "B": {1: 5, 2: 10, 4: 20}}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: twoTypes(), Jobs: []Job{
		{ID: "j", Submitted: t0, Models: tab, State: JobState{RestartCost: 5 * time.Minute, PeakReplicas: 2,
			Current: Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}}},
	}}
	s, err := New(nil)
	require.NoError(t, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	d := p.Decisions[0]
	require.Equal(t, Migrate, d.Action)
	assert.True(t, d.Restart)
	assert.Equal(t, snap.Now.Add(5*time.Minute), d.RestoreUntil)
	snap.Advance(&p, snap.Now.Add(time.Minute))
	st := snap.Jobs[0].State
	assert.Equal(t, 1, st.Restarts)
	assert.Equal(t, d.Allocation, st.Current)

	// A minute later the restore is in progress: the job is pinned.
	p, err = s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.True(t, p.Decisions[0].Pinned, "restoring until %v, now %v", st.RestoreUntil, snap.Now)
	assert.Equal(t, Keep, p.Decisions[0].Action)
	snap.Advance(&p, st.RestoreUntil)
	assert.Equal(t, st.RestoreUntil, snap.Jobs[0].State.RestoreUntil, "keeping does not end the restore early")

	// At RestoreUntil the restore is over: no pin.
	m, err := newMatrix(&snap, nil)
	require.NoError(t, err)
	assert.Equal(t, -1, m.Rows[0].Pin)

	// Preempted (its GPUs taken away by a host that drops the node), then
	// started again: the Start is a restart.
	snap.Nodes = []Node{{ID: "a0", Type: "A", GPUs: 4}}
	assert.Equal(t, []string{"j"}, snap.DropDepartedNodes())
	assert.False(t, snap.Jobs[0].State.Current.Running())
	p, err = s.Round(context.Background(), snap)
	require.NoError(t, err)
	require.Equal(t, Start, p.Decisions[0].Action)
	assert.True(t, p.Decisions[0].Restart, "a resume after a preemption restarts")
	snap.Advance(&p, snap.Now.Add(time.Minute))
	assert.Equal(t, 2, snap.Jobs[0].State.Restarts)
}

// TestDropDepartedNodes: only the jobs on nodes that left (or GPUs beyond a
// node's count, or a node of another type) are queued.
func TestDropDepartedNodes(t *testing.T) {
	snap := Snapshot{Now: t0, Nodes: twoTypes(), Jobs: []Job{
		{ID: "stays", State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 3}}}}},
		{ID: "gone", State: JobState{Restoring: true, Current: Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a1", 0}}}}},
		{ID: "beyond", State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 4}}}}},
		{ID: "retyped", State: JobState{Current: Allocation{Type: "B", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 0}}}}},
		{ID: "queued"},
	}}
	assert.Equal(t, []string{"gone", "beyond", "retyped"}, snap.DropDepartedNodes())
	assert.True(t, snap.Jobs[0].State.Current.Running())
	for _, j := range snap.Jobs[1:] {
		assert.Equal(t, JobState{}, j.State, j.ID)
	}
	assert.Empty(t, snap.DropDepartedNodes(), "idempotent")
}

// TestJSONReplay: a snapshot persisted as JSON and decoded gives the same
// plan, and the plan itself round-trips (without its Matrix).
func TestJSONReplay(t *testing.T) {
	snap, err := steadySnapshot(1, 60, 7)
	require.NoError(t, err)
	data, err := json.Marshal(snap)
	require.NoError(t, err)
	var back Snapshot
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, snap, back)

	s, err := New(&Options{RoundTimeout: -1})
	require.NoError(t, err)
	want, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	got, err := s.Round(context.Background(), back)
	require.NoError(t, err)
	assert.Equal(t, want.Decisions, got.Decisions)
	assert.Equal(t, want.Status, got.Status)
	assert.Equal(t, want.Objective, got.Objective)

	data, err = json.Marshal(want)
	require.NoError(t, err)
	var plan Plan
	require.NoError(t, json.Unmarshal(data, &plan))
	want.matrix, want.entries = nil, nil
	assert.Equal(t, want, plan)

	// Advance the decoded state and the original alike: the same next state.
	snap.Advance(&want, snap.Now.Add(time.Minute))
	back.Advance(&plan, back.Now.Add(time.Minute))
	assert.Equal(t, snap, back)
}

// TestJSONTrackerAndInfinity: trackers persist with their job, non-finite
// bounds survive, and Models the package cannot encode are an error naming
// the job.
func TestJSONTrackerAndInfinity(t *testing.T) {
	_, err := json.Marshal(Job{ID: "t", Models: siatest.Table{"A": {1: 1}}})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "t", ie.Job)

	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 128, MaxBatch: 4096,
		Limits: map[string]goodput.Limits{"A": {MinLocalBatch: 32, MaxLocalBatch: 4096}}, Grad: goodput.GradStats{Sqr: 1, Var: 50}}, nil)
	require.NoError(t, err)
	require.NoError(t, tr.Seed("A",
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 128, StepTime: 0.020, SyncTime: 0.0002},
		goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 1024, StepTime: 0.110, SyncTime: 0.0002}))
	data, err := json.Marshal(Job{ID: "tracked", Models: tr})
	require.NoError(t, err)
	var j Job
	require.NoError(t, json.Unmarshal(data, &j))
	require.IsType(t, &bootstrap.Tracker{}, j.Models)
	wantM, wantS := tr.Model("A")
	gotM, gotS := j.Models.Model("A")
	assert.Equal(t, wantS, gotS)
	assert.Equal(t, wantM, gotM)

	p := Plan{Status: StatusFeasible, Objective: 1.5, Bound: math.Inf(-1)}
	data, err = json.Marshal(p)
	require.NoError(t, err)
	var back Plan
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, p, back)
}
