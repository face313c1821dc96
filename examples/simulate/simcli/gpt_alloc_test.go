package simcli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/sia-sched/sia/sia/sim"
)

// TestRunGPTTrace: the GPT job added to a short trace on a small
// heterogeneous cluster finishes, every recorded round holds whole
// pipelines of one type, and the CSV, plot and table are written.
func TestRunGPTTrace(t *testing.T) {
	c, err := sim.ParseCluster("t4:1x4,a100:1x8,rtx:1x8", 1)
	require.NoError(t, err)
	truth, err := sim.LoadTrace(filepath.Join(shareddata.Dir(t), "profiles"), c.Types())
	require.NoError(t, err)
	wl := &sim.Workload{Name: "small", Jobs: []sim.JobSpec{
		{Name: "cifar10-1", App: "cifar10", Submit: 0, Replicas: 1, Batch: 128},
		{Name: "bert-2", App: "bert", Submit: 900, Replicas: 2, Batch: 24},
		{Name: "bert-3", App: "bert", Submit: 1800, Replicas: 2, Batch: 24},
	}}
	_, err = AddGPT(&sim.Workload{Jobs: []sim.JobSpec{{Name: GPTJobName, App: "bert", Replicas: 1, Batch: 12}}}, 0, truth)
	require.Error(t, err, "duplicate name")
	with, err := AddGPT(wl, 600, truth)
	require.NoError(t, err)
	require.Len(t, with.Jobs, 4)
	assert.Equal(t, GPTJobName, with.Jobs[1].Name, "inserted in submission order")
	assert.Equal(t, 384, with.Jobs[1].Batch)

	tr, err := RunGPTTrace(context.Background(), c, truth, wl, 600, nil)
	require.NoError(t, err)
	require.True(t, tr.Job.Finished())
	require.NotEmpty(t, tr.Rounds)
	stages := map[string]int{"a100": 2, "rtx": 8}
	for _, r := range tr.Rounds {
		assert.LessOrEqual(t, len(r.GPT), 1, "one type at a time")
		for typ, g := range r.GPT {
			require.Positive(t, stages[typ], typ)
			assert.Zero(t, g%stages[typ], "%v s: %d GPUs of %s", r.Time, g, typ)
		}
		assert.GreaterOrEqual(t, r.Active, 1)
		assert.LessOrEqual(t, r.InUse, 20)
	}
	ph := tr.Phases(1)
	require.NotEmpty(t, ph)
	assert.Equal(t, 0.0, ph[0].From)
	dir := t.TempDir()
	require.NoError(t, WriteGPTAllocCSV(filepath.Join(dir, "a.csv"), tr))
	require.NoError(t, WriteGPTAllocPlot(dir, tr))
	for _, f := range []string{"a.csv", "gpt_allocation.png", "gpt_allocation.svg"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
}
