package simcli

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlotFilesAndSummaryCSV(t *testing.T) {
	var out, errb bytes.Buffer
	dir := t.TempDir()
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "gavel,sia-artifact", "-scale", "1,2", "-plot", dir, "-noftf"}, &out, &errb)
	require.NoError(t, err, errb.String())
	for _, f := range []string{"jct_cdf", "policy_runtime", "jct_vs_scale", "avg_jct", "gpus_sia-artifact_x2"} {
		for _, ext := range []string{".png", ".svg"} {
			st, err := os.Stat(filepath.Join(dir, f+ext))
			require.NoError(t, err, f+ext)
			assert.Greater(t, st.Size(), int64(1000), f+ext)
		}
	}
	f, err := os.Open(filepath.Join(dir, "summary.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 5, "header and one row per policy and scale")
	assert.Equal(t, summaryHeader, rows[0])
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		p25, _ := strconv.ParseFloat(r[col["policy_ms_p25"]], 64)
		med, _ := strconv.ParseFloat(r[col["policy_ms_median"]], 64)
		p75, _ := strconv.ParseFloat(r[col["policy_ms_p75"]], 64)
		assert.LessOrEqual(t, p25, med, r[0])
		assert.LessOrEqual(t, med, p75, r[0])
		assert.Equal(t, "3", r[col["jobs"]], r[0])
	}
	assert.Equal(t, []string{"64", "64", "128", "128"}, []string{rows[1][col["gpus"]], rows[2][col["gpus"]], rows[3][col["gpus"]], rows[4][col["gpus"]]}, "scale 2 doubles the 64-GPU cluster")
}

func TestReplot(t *testing.T) {
	var out, errb bytes.Buffer
	a, b := t.TempDir(), t.TempDir()
	require.NoError(t, Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "gavel", "-scale", "1,2", "-plot", a, "-noftf"}, &out, &errb))
	require.NoError(t, Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "sia-artifact", "-scale", "4", "-plot", b, "-noftf"}, &out, &errb))
	dir := t.TempDir()
	require.NoError(t, Run(context.Background(), []string{"-replot", filepath.Join(a, "summary.csv") + "," + filepath.Join(b, "summary.csv"), "-plot", dir}, &out, &errb))
	for _, f := range []string{"policy_runtime.svg", "jct_vs_scale.png", "avg_jct.svg"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Greater(t, st.Size(), int64(1000), f)
	}
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("policy\nx\n"), 0o644))
	err := Run(context.Background(), []string{"-replot", bad, "-plot", dir}, &out, &errb)
	assert.ErrorContains(t, err, "bad.csv:1")
	err = Run(context.Background(), []string{"-replot", bad}, &out, &errb)
	assert.ErrorContains(t, err, "needs -plot")
}

// TestShockwaveThemisFTFPlot runs the two FTF-minded baselines by name and
// checks Figure 8's panels: the ρ CDF and its data next to the JCT CDF.
func TestShockwaveThemisFTFPlot(t *testing.T) {
	var out, errb bytes.Buffer
	dir := t.TempDir()
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "shockwave,themis", "-plot", dir}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "shockwave")
	assert.Contains(t, out.String(), "themis")
	for _, f := range []string{"ftf_cdf.png", "ftf_cdf.svg", "jct_cdf.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Greater(t, st.Size(), int64(1000), f)
	}
	b, err := os.ReadFile(filepath.Join(dir, "rhos.csv"))
	require.NoError(t, err)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(rows), 2)
	assert.Equal(t, []string{"policy", "scale", "rho"}, rows[0])
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		seen[r[0]] = true
		v, err := strconv.ParseFloat(r[2], 64)
		require.NoError(t, err)
		assert.Positive(t, v)
	}
	assert.True(t, seen["shockwave"] && seen["themis"])
}
