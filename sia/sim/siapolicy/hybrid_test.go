package siapolicy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/sia-sched/sia/sia/sim"
)

// TestHybridJobEndToEnd: a small heterogeneous cluster (one A100 and one RTX
// node, 16 GPUs) with the GPT job and four BERT jobs, scheduled by Sia in
// each profiling mode: every job completes, the GPT job holds whole
// pipeline replicas in every round (2 A100s or 8 RTXs each), the run is
// deterministic.
func TestHybridJobEndToEnd(t *testing.T) {
	dir := shareddata.Dir(t)
	c, err := sim.ParseCluster("a100:1x8,rtx:1x8", 1)
	require.NoError(t, err)
	tr, err := sim.LoadTrace(dir+"/profiles", c.Types())
	require.NoError(t, err)
	wl := &sim.Workload{Name: "gpt-small", Jobs: []sim.JobSpec{
		{Name: "gpt-0", App: sim.GPTApp, Submit: 0, Replicas: 1, Batch: 384},
		{Name: "bert-1", App: "bert", Submit: 600, Replicas: 4, Batch: 48},
		{Name: "bert-2", App: "bert", Submit: 1200, Replicas: 4, Batch: 48},
		{Name: "bert-3", App: "bert", Submit: 1800, Replicas: 2, Batch: 24},
		{Name: "bert-4", App: "bert", Submit: 2400, Replicas: 2, Batch: 24},
	}}
	for _, mode := range []bootstrap.Mode{bootstrap.Profiled, bootstrap.Oracle, bootstrap.NoProfiling} {
		t.Run(mode.String(), func(t *testing.T) {
			run := func() *sim.Result {
				p, err := New(c, tr, Options{Mode: mode})
				require.NoError(t, err)
				res, err := sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr, LogAllocations: true}, wl, p)
				require.NoError(t, err)
				return res
			}
			res := run()
			for _, j := range res.Jobs {
				assert.True(t, j.Finished(), "%s unfinished", j.Name)
			}
			gptRounds, maxGPUs := 0, 0
			for _, r := range res.Rounds {
				a, ok := r.Allocations["gpt-0"]
				if !ok {
					continue
				}
				gptRounds++
				maxGPUs = max(maxGPUs, a.GPUs())
				stages := map[string]int{"a100": 2, "rtx": 8}[a.Type]
				require.NotZero(t, stages, "type %s", a.Type)
				require.Zero(t, a.GPUs()%stages, "round at %v s: %d GPUs of %s", r.Now, a.GPUs(), a.Type)
			}
			t.Logf("gpt rounds %d max GPUs %d jobs %+v", gptRounds, maxGPUs, res.Jobs[0])
			assert.Greater(t, gptRounds, 10)
			assert.Greater(t, maxGPUs, 2, "the GPT job scales beyond one replica")
			again := run()
			assert.Equal(t, res.Jobs, again.Jobs, "deterministic")
		})
	}
}

// TestHybridRefusedWhenRigidOrArtifactPlacement: the adapter's variants
// that cannot keep whole replicas make sim.Run refuse the GPT job by name.
func TestHybridRefusedWhenRigidOrArtifactPlacement(t *testing.T) {
	dir := shareddata.Dir(t)
	c, err := sim.ParseCluster("a100:1x8", 1)
	require.NoError(t, err)
	tr, err := sim.LoadTrace(dir+"/profiles", c.Types())
	require.NoError(t, err)
	wl := &sim.Workload{Jobs: []sim.JobSpec{{Name: "gpt-3", App: sim.GPTApp, Replicas: 1, Batch: 48}}}
	for _, opt := range []Options{{Rigid: true}, {ArtifactPlacement: true}} {
		p, err := New(c, tr, opt)
		require.NoError(t, err)
		assert.False(t, p.SchedulesHybrid())
		_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: tr}, wl, p)
		require.ErrorIs(t, err, sim.ErrHybridUnsupported)
		assert.Contains(t, err.Error(), `job "gpt-3"`)
	}
}
