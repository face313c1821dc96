package sim_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/pollux"
	"github.com/sia-sched/sia/sia/sim/shockwave"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
	"github.com/sia-sched/sia/sia/sim/themis"
)

// TestBaselinesRejectHybridJobs: the baselines that treat every GPU as an
// independent data-parallel replica (Pollux, Gavel, Themis, Shockwave)
// refuse a workload with the GPT job, naming the job and the policy,
// instead of mis-simulating it; Sia schedules the same workload.
func TestBaselinesRejectHybridJobs(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	tr, err := sim.LoadTrace(shareddata.Path(t, "profiles"), c.Types())
	require.NoError(t, err)
	wl := &sim.Workload{Name: "w", Jobs: []sim.JobSpec{
		{Name: "bert-0", App: "bert", Replicas: 1, Batch: 12},
		{Name: "gpt-0", App: sim.GPTApp, Submit: 60, Replicas: 1, Batch: 384},
	}}
	for _, pol := range []sim.Policy{
		pollux.New(c, tr, pollux.Options{}),
		gavel.New(c, tr, 360),
		themis.New(c, tr, 360, nil),
		shockwave.New(c, tr, nil),
	} {
		t.Run(pol.Name(), func(t *testing.T) {
			_, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr, Round: 360, MaxTime: 3600}, wl, pol)
			require.ErrorIs(t, err, sim.ErrHybridUnsupported)
			require.ErrorIs(t, err, sim.ErrInvalidInput)
			assert.Contains(t, err.Error(), `job "gpt-0"`)
			assert.Contains(t, err.Error(), "policy "+pol.Name()+" cannot schedule hybrid-parallel job (gpt, pipeline stages a100:2, rtx:8)")
		})
	}
	p, err := siapolicy.New(c, tr, siapolicy.Options{})
	require.NoError(t, err)
	_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr, MaxTime: 3600}, wl, p)
	require.NoError(t, err)
}
