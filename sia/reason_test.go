package sia

import (
	"context"
	"github.com/sia-sched/sia/sia/siatest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// linear is a table of a linearly scaling job on type A.
var linear = siatest.Table{"A": {1: 1, 2: 2, 4: 4, 8: 8}}

// TestQueueReasons: every job that gets no GPUs says why, one case per
// reason.
func TestQueueReasons(t *testing.T) {
	oneType := []Node{{ID: "a0", Type: "A", GPUs: 4}}
	tracker := func(types ...string) *bootstrap.Tracker {
		spec := bootstrap.Spec{InitBatch: 32, MaxBatch: 256, Limits: map[string]goodput.Limits{}}
		for _, ty := range types {
			spec.Limits[ty] = goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 256}
		}
		tr, err := bootstrap.New(spec, nil)
		require.NoError(t, err)
		return tr
	}
	held := func(gpus ...int) JobState {
		st := JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: len(gpus)}, PeakReplicas: len(gpus)}
		for _, g := range gpus {
			st.Current.Placement = append(st.Current.Placement, GPU{"a0", g})
		}
		return st
	}
	cases := []struct {
		name   string
		snap   Snapshot
		opts   Options
		ctx    func() (context.Context, context.CancelFunc)
		job    string
		action Action
		want   QueueReason
	}{
		{name: "larger than the cluster", job: "j", want: ReasonTooLarge,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", MinGPUs: 8, Models: linear}}}},
		{name: "rigid larger than every type", job: "j", want: ReasonTooLarge,
			snap: Snapshot{Nodes: twoTypes(), Jobs: []Job{{ID: "j", Kind: Rigid, GPUs: 9, Models: siatest.Table{"A": {9: 1}, "B": {9: 1}}}}}},
		{name: "larger than MaxGPUsPerJob", job: "j", want: ReasonTooLarge, opts: Options{MaxGPUsPerJob: 2},
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", MinGPUs: 4, Models: linear}}}},
		{name: "hybrid replica larger than the type", job: "j", want: ReasonTooLarge,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: pipelined{linear, map[string]int{"A": 8}}}}}},
		{name: "Types allow no type of the cluster", job: "j", want: ReasonNoAdmissibleType,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Types: []string{"Z"}, Models: linear}}}},
		{name: "tracker excludes every type", job: "j", want: ReasonNoAdmissibleType,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: tracker("Z")}}}},
		{name: "table excludes every type", job: "j", want: ReasonNoAdmissibleType,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: siatest.Table{"A": {}}}}}},
		{name: "pipeline stages on no type of the cluster", job: "j", want: ReasonNoAdmissibleType,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: pipelined{linear, map[string]int{"Z": 1}}}}}},
		{name: "no valid configuration", job: "j", want: ReasonNoAdmissibleType,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", MinGPUs: 3, Models: siatest.Table{"A": {1: 1}}}}}},
		{name: "quota of zero", job: "j", want: ReasonQuota,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: linear}}, Quotas: []Quota{{Name: "q", Jobs: []string{"j"}, Limit: 0}}}},
		{name: "quota used by others", job: "j", want: ReasonQuota,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{
				{ID: "p", NonPreemptible: true, Models: linear, State: held(0, 1)},
				{ID: "j", Models: linear}}, Quotas: []Quota{{Name: "q", Jobs: []string{"p", "j"}, Type: "A", Limit: 2}}}},
		{name: "only reserved GPUs", job: "j", want: ReasonReserved,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: linear}}, Reserved: map[string]int{"A": 4}}},
		{name: "only reserved GPUs left", job: "j", want: ReasonReserved,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{
				{ID: "p", NonPreemptible: true, Models: linear, State: held(0, 1)},
				{ID: "j", MinGPUs: 2, Models: linear}}, Reserved: map[string]int{"A": 2}}},
		{name: "valued less than others", want: ReasonLostOptimisation, opts: Options{NoScaleUpCap: true},
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "a", Models: linear}, {ID: "b", Models: linear}, {ID: "c", Models: linear}}}},
		{name: "waiting valued more", job: "j", want: ReasonLostOptimisation, opts: Options{Lambda: 0.1},
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Models: linear}}}},
		// more queued jobs than free GPUs: the last gets no row in time
		{name: "out of time", job: "j79", want: ReasonDeadline,
			ctx: func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), 0) },
			snap: func() Snapshot {
				s := Snapshot{Nodes: []Node{{ID: "a0", Type: "A", GPUs: 64}}}
				for i := 0; i <= 79; i++ {
					s.Jobs = append(s.Jobs, Job{ID: "j" + string(rune('0'+i/10)) + string(rune('0'+i%10)), Models: linear})
				}
				return s
			}()},
		{name: "unplaceable", job: "j", want: ReasonUnplaceable,
			snap: Snapshot{Nodes: []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "a1", Type: "A", GPUs: 4}}, Jobs: []Job{
				{ID: "p", NonPreemptible: true, Models: linear, State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}}},
				{ID: "q", NonPreemptible: true, Models: linear, State: JobState{Current: Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a1", 0}, {"a1", 1}}}}},
				{ID: "j", Kind: Rigid, GPUs: 4, Models: oneNode{siatest.Table{"A": {4: 4}}}}}}},
		{name: "running job on a type it may no longer use", job: "j", action: Preempt, want: ReasonNoAdmissibleType,
			snap: Snapshot{Nodes: oneType, Jobs: []Job{{ID: "j", Types: []string{"B"}, Models: linear, State: held(0)}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.snap.Now = t0.Add(time.Hour)
			for i := range c.snap.Jobs {
				c.snap.Jobs[i].Submitted = t0
			}
			s, err := New(&c.opts)
			require.NoError(t, err)
			ctx, cancel := context.Background(), func() {}
			if c.ctx != nil {
				ctx, cancel = c.ctx()
			}
			defer cancel()
			p, err := s.Round(ctx, c.snap)
			require.NoError(t, err)
			job := c.job
			if job == "" { // whichever job waits
				for _, d := range p.Decisions {
					if d.Action == Queue {
						job = d.Job
					}
				}
			}
			d, ok := p.Decision(job)
			require.True(t, ok)
			want := c.action
			if want == 0 {
				want = Queue
			}
			assert.Equal(t, want, d.Action)
			assert.Equal(t, c.want, d.Reason, "%v", d.Reason)
			for _, o := range p.Decisions {
				if o.Action == Queue || o.Action == Preempt {
					assert.NotEqual(t, ReasonNone, o.Reason, "job %s", o.Job)
				} else {
					assert.Equal(t, ReasonNone, o.Reason, "job %s", o.Job)
				}
			}
		})
	}
}

func TestQueueReasonString(t *testing.T) {
	names := map[string]bool{}
	for r := ReasonNone; r <= ReasonUnplaceable; r++ {
		s := r.String()
		assert.NotContains(t, s, "QueueReason(", "%d", int(r))
		assert.False(t, names[s], "duplicate name %s", s)
		names[s] = true
	}
	assert.Equal(t, "QueueReason(99)", QueueReason(99).String())
	assert.Equal(t, "too-large", ReasonTooLarge.String())
}

// oneNode is a model that runs on one node only: on several nodes no batch
// size is feasible, so that no shape of idle GPUs over nodes can take the
// job (shaped.go).
type oneNode struct{ siatest.Table }

func (m oneNode) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	if nodes > 1 {
		return goodput.Choice{}, false
	}
	return m.Table.Evaluate(t, nodes, replicas)
}
