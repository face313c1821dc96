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

// TestAddGPTFlag: -gpt adds the job to every workload at its time; an empty
// flag changes nothing; a negative or malformed time and the built-in model
// (no gpt_pmp) are errors.
func TestAddGPTFlag(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	truth, err := sim.LoadTrace(filepath.Join(shareddata.Dir(t), "profiles"), c.Types())
	require.NoError(t, err)
	wls := []*sim.Workload{
		{Name: "a", Jobs: []sim.JobSpec{{Name: "bert-1", App: "bert", Submit: 0, Replicas: 1, Batch: 12}, {Name: "bert-2", App: "bert", Submit: 900, Replicas: 1, Batch: 12}}},
		{Name: "b", Jobs: []sim.JobSpec{{Name: "bert-1", App: "bert", Submit: 0, Replicas: 1, Batch: 12}}},
	}
	same, err := addGPTFlag("", wls, truth)
	require.NoError(t, err)
	assert.Equal(t, wls, same)
	out, err := addGPTFlag("10m", wls, truth)
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, []string{"bert-1", GPTJobName, "bert-2"}, []string{out[0].Jobs[0].Name, out[0].Jobs[1].Name, out[0].Jobs[2].Name})
	assert.Equal(t, 600.0, out[0].Jobs[1].Submit)
	assert.Equal(t, GPTJobName, out[1].Jobs[1].Name)
	assert.Len(t, wls[0].Jobs, 2, "the input workloads are not changed")
	for _, bad := range []string{"-1m", "soon"} {
		_, err := addGPTFlag(bad, wls, truth)
		assert.ErrorContains(t, err, "-gpt", bad)
	}
	m, err := sim.LoadModel()
	require.NoError(t, err)
	_, err = addGPTFlag("0s", wls, m)
	assert.ErrorContains(t, err, "no gpt application")
}
