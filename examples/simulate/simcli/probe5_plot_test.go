package simcli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestProbe5ReplotNumbers: a summary.csv (hand-edited, or from another
// tool) with NaN or infinite values failed inside the plotter with a
// message naming no file ("plotter: NaN data point"), and a gpus column of
// 1e300 or -64 or a negative JCT was drawn. Each is now an error naming
// the file, line and column.
func TestProbe5ReplotNumbers(t *testing.T) {
	dir := t.TempDir()
	header := strings.Join(summaryHeader, ",")
	good := []string{"sia", "1", "64", "1", "1", "0", "0.2", "0.2", "0.2", "1.15", "4", "1.2", "1", "0.4", "1.9", "5", "18", "10", "0.1"}
	col := func(name string) int { return slices.Index(summaryHeader, name) }
	for _, c := range []struct{ column, value string }{
		{"avg_jct_h", "NaN"}, {"avg_jct_h", "-1"}, {"avg_jct_h", "+Inf"}, {"avg_jct_h", "0x1p-2"},
		{"gpus", "1e300"}, {"gpus", "-64"}, {"gpus", "0"}, {"gpus", "6.5"},
		{"policy_ms_p25", "Inf"}, {"policy_ms_median", "-1.9"}, {"policy_ms_p75", "x"},
	} {
		row := slices.Clone(good)
		row[col(c.column)] = c.value
		file := filepath.Join(dir, "summary.csv")
		require.NoError(t, os.WriteFile(file, []byte(header+"\n"+strings.Join(row, ",")+"\n"), 0o644))
		_, err := readSummaryCSV(file)
		require.Error(t, err, "%s = %s", c.column, c.value)
		assert.Contains(t, err.Error(), file+":2: column "+c.column, "%s = %s", c.column, c.value)
	}
	file := filepath.Join(dir, "ok.csv")
	require.NoError(t, os.WriteFile(file, []byte(header+"\n"+strings.Join(good, ",")+"\n"), 0o644))
	rows, err := readSummaryCSV(file)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, 64, rows[0].point.gpus)
}
