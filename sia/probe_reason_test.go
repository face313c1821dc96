package sia_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// TestProbeQueueReasons: every job that waits carries the reason a host can
// check (class 7 of issue 10), on odd node shapes: too large for the
// cluster or for MaxGPUsPerJob, no admissible type, a quota used up by
// another job, GPUs free only in the reservation, and GPUs all taken by jobs
// worth more.
func TestProbeQueueReasons(t *testing.T) {
	m := probeModel{speed: map[string]float64{"A": 1, "B": 1}, gain: 0.9, cross: 0.9}
	nodes := []sia.Node{{ID: "a0", Type: "A", GPUs: 7}, {ID: "a1", Type: "A", GPUs: 7}, {ID: "b0", Type: "B", GPUs: 5}}
	run7 := func(id string) sia.Job { // holds node a0
		return sia.Job{ID: id, Kind: sia.Rigid, GPUs: 7, NonPreemptible: true, Models: m,
			State: sia.JobState{Current: sia.Allocation{Type: "A", Nodes: 1, GPUs: 7, Placement: probeGPUs("a0", 7)}}}
	}
	cases := []struct {
		name  string
		jobs  []sia.Job
		res   map[string]int
		quota []sia.Quota
		opts  sia.Options
		want  sia.QueueReason
	}{
		{name: "rigid beyond the cluster", jobs: []sia.Job{{ID: "x", Kind: sia.Rigid, GPUs: 20, Models: m}}, want: sia.ReasonTooLarge},
		{name: "rigid beyond every type it may use", jobs: []sia.Job{{ID: "x", Kind: sia.Rigid, GPUs: 6, Types: []string{"B"}, Models: m}}, want: sia.ReasonTooLarge},
		{name: "MinGPUs beyond MaxGPUsPerJob", jobs: []sia.Job{{ID: "x", MinGPUs: 9, Models: m}}, opts: sia.Options{MaxGPUsPerJob: 8}, want: sia.ReasonTooLarge},
		{name: "hybrid minimum rounded up beyond the type", jobs: []sia.Job{{ID: "x", MinGPUs: 4, Types: []string{"B"},
			Models: probeModel{speed: map[string]float64{"B": 1}, gain: 1, cross: 1, stages: 3}}}, want: sia.ReasonTooLarge},
		{name: "models exclude every type", jobs: []sia.Job{{ID: "x", Models: probeModel{speed: map[string]float64{"C": 1}, gain: 1, cross: 1}}}, want: sia.ReasonNoAdmissibleType},
		{name: "types and models disjoint", jobs: []sia.Job{{ID: "x", Types: []string{"B"}, Models: probeModel{speed: map[string]float64{"A": 1}, gain: 1, cross: 1}}}, want: sia.ReasonNoAdmissibleType},
		{name: "quota used up by a pinned job", jobs: []sia.Job{run7("p"), {ID: "x", Models: m}},
			quota: []sia.Quota{{Name: "team", Jobs: []string{"p", "x"}, Limit: 7}}, want: sia.ReasonQuota},
		{name: "type quota of zero", jobs: []sia.Job{{ID: "x", Types: []string{"B"}, Models: m}},
			quota: []sia.Quota{{Name: "noB", Jobs: []string{"x"}, Type: "B", Limit: 0}}, want: sia.ReasonQuota},
		{name: "free GPUs only in the reservation", jobs: []sia.Job{run7("p"), {ID: "x", Kind: sia.Rigid, GPUs: 7, Types: []string{"A"}, Models: m}},
			res: map[string]int{"A": 7}, want: sia.ReasonReserved},
		{name: "every GPU taken by pinned jobs", jobs: []sia.Job{run7("p"),
			{ID: "q", Kind: sia.Rigid, GPUs: 7, NonPreemptible: true, Models: m, State: sia.JobState{Current: sia.Allocation{Type: "A", Nodes: 1, GPUs: 7, Placement: probeGPUs("a1", 7)}}},
			{ID: "r", Kind: sia.Rigid, GPUs: 5, NonPreemptible: true, Models: m, State: sia.JobState{Current: sia.Allocation{Type: "B", Nodes: 1, GPUs: 5, Placement: probeGPUs("b0", 5)}}},
			{ID: "x", Models: m}}, want: sia.ReasonLostOptimisation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.RoundTimeout = -1
			s, err := sia.New(&o)
			require.NoError(t, err)
			snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: c.jobs, Reserved: c.res, Quotas: c.quota}
			plan := probeRound(t, s, snap)
			d, ok := plan.Decision("x")
			require.True(t, ok)
			assert.Equal(t, sia.Queue, d.Action)
			assert.Equal(t, c.want, d.Reason, "%v", d.Reason)
			assert.Equal(t, sia.StatusOptimal, plan.Status)
		})
	}
}
