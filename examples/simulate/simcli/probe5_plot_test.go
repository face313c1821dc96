package simcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe5LogPlotsOfOneValue: a log axis whose data hold one value (a
// workload of one job, jobs that all took the same time, one cluster size)
// or zeros was drawn over a range reaching below 0, and gonum panicked
// ("Values must be greater than 0 for a log scale"): `simulate -plot DIR
// -hours 0.1` crashed after the whole run. Each figure is now written.
func TestProbe5LogPlotsOfOneValue(t *testing.T) {
	dir := t.TempDir()
	for name, jcts := range map[string][]float64{
		"one job":    {600},
		"equal jobs": {3600, 3600, 3600},
		"zero JCT":   {0},
		"tiny JCTs":  {1e-300, 1e-300},
	} {
		file := filepath.Join(dir, name+".png")
		require.NotPanics(t, func() {
			require.NoError(t, WriteJCTCDF(file, Series{Name: "sia", JCTs: jcts}), name)
		}, name)
		st, err := os.Stat(file)
		require.NoError(t, err)
		assert.Positive(t, st.Size())
	}
	for name, pts := range map[string][]scalePoint{
		"one size":      {{gpus: 64, p25: 1, median: 2, p75: 3, avgJCTH: 0.5}},
		"zero times":    {{gpus: 64}, {gpus: 128}},
		"one size, 0 h": {{gpus: 64, avgJCTH: 0}},
	} {
		require.NotPanics(t, func() {
			require.NoError(t, writeScalePlots(filepath.Join(dir), []string{"sia"}, map[string][]scalePoint{"sia": pts}), name)
		}, name)
	}
}

// TestProbe5SweepFlags: sensitivity with a trace name given twice ran both
// and merged their rows under one name; with -plot or -csv in a folder that
// cannot be made it failed only after the whole sweep. Both now fail
// before any simulation, naming the flag.
func TestProbe5SweepFlags(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.csv")
	require.NoError(t, os.WriteFile(wl, []byte("name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\n"), 0o644))
	file := filepath.Join(dir, "afile")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-traces", "a=" + wl + ",a=" + wl, "-figures", "10"}, `-traces: name "a" given twice`},
		{[]string{"-traces", "a=" + wl, "-figures", "10", "-plot", filepath.Join(file, "x")}, "-plot: mkdir"},
		{[]string{"-traces", "a=" + wl, "-figures", "10", "-csv", filepath.Join(file, "x")}, "-csv: mkdir"},
	} {
		var out, errb bytes.Buffer
		err := Default.Sweep(context.Background(), c.args, &out, &errb)
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want)
		assert.Empty(t, errb.String(), "%v: simulated before failing", c.args)
	}
}
