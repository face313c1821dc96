package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeWorkload(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "workload-1.csv")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

const small = "name,time,application,num_replicas,batch_size\n" +
	"cifar10-0,0,cifar10,4,2048\nbert-0,100,bert,6,384\nyolov3-0,200,yolov3,4,64\n"

func TestBadInputs(t *testing.T) {
	good := writeWorkload(t, small)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"bad policy", []string{"-policy", "sia,fifo"}, "unknown policy"},
		{"bad scale", []string{"-scale", "0"}, "-scale"},
		{"bad round", []string{"-round", "-5s"}, "-round"},
		{"bad cluster", []string{"-cluster", "t4:zx4"}, "t4:zx4"},
		{"unknown type", []string{"-cluster", "h100:2x8", "-workload", good}, "h100"},
		{"missing workload", []string{"-workload", "/nonexistent/w.csv"}, "/nonexistent/w.csv"},
		{"missing data", []string{"-data", "/nonexistent", "-workload", good}, "/nonexistent"},
		{"garbage workload", []string{"-workload", writeWorkload(t, "\x00\x01\x02garbage")}, "workload-1.csv"},
		{"unknown application", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,0,gpt9,1,8\n"), "-noftf"}, "gpt9"},
		{"negative time", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,-3,bert,1,8\n")}, "time"},
		{"extra argument", []string{"stray"}, "stray"},
		{"1ns round", []string{"-round", "1ns", "-workload", good}, "-round 1ns"},
		{"round over a day", []string{"-round", "25h", "-workload", good}, "-round"},
		{"huge submit time", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,1e308,bert,1,8\n")}, "out of range"},
		{"submit after the simulated span", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\nx,6000000,bert,1,8\n"), "-noftf"}, "MaxTime"},
		{"duplicate workload column", []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size,time\nx,0,bert,1,8,5\n")}, "duplicate column"},
		{"NaN hours", []string{"-hours", "NaN"}, "hours"},
		{"huge hours", []string{"-hours", "1e12", "-rate", "1e-9"}, "hours"},
		{"NaN rate", []string{"-rate", "NaN"}, "rate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), tc.args, &out, &errb)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, strings.TrimSpace(err.Error()), "\n")
		})
	}
}

func TestJSONKeys(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "sia,gavel", "-json"}, &out, &errb)
	require.NoError(t, err, errb.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	want := []string{"policy", "workloads", "jobs", "unfinished", "avg_jct_h", "p99_jct_h", "makespan_h", "gpu_hours_per_job",
		"restarts_per_job", "worst_ftf", "unfair_fraction", "policy_ms_median", "policy_ms_p95", "sim_wall_s"}
	for i, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, want, keys)
		assert.Equal(t, []string{"sia", "gavel"}[i], m["policy"])
		assert.Equal(t, 3.0, m["jobs"])
		assert.Equal(t, 0.0, m["unfinished"])
		assert.Greater(t, m["avg_jct_h"].(float64), 0.0)
	}
	assert.Contains(t, errb.String(), "avg JCT")
}

func TestTableAndPlots(t *testing.T) {
	var out, errb bytes.Buffer
	dir := t.TempDir()
	err := run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "gavel,sia-rigid", "-scale", "1,2", "-plot", dir, "-noftf"}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "gavel@x1")
	assert.Contains(t, out.String(), "sia-rigid@x2")
	for _, f := range []string{"jct_cdf.png", "policy_runtime.png", "gpus_gavel_x1.png"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.Greater(t, st.Size(), int64(1000))
	}
}

func TestEmptyWorkloadSucceeds(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\n"), "-policy", "sia,gavel,pollux", "-json"}, &out, &errb)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(out.String(), "\"jobs\":0"))
}

func TestJobLargerThanClusterIsReportedUnfinished(t *testing.T) {
	var out, errb bytes.Buffer
	body := "name,time,application,num_replicas,batch_size\nbert-0,0,bert,100,384\ncifar10-0,10,cifar10,4,2048\n"
	err := run(context.Background(), []string{"-workload", writeWorkload(t, body), "-policy", "gavel,sia", "-json", "-noftf"}, &out, &errb)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var g, s map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &g))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &s))
	assert.Equal(t, 1.0, g["unfinished"], "rigid at 100 GPUs never fits")
	assert.Equal(t, 0.0, s["unfinished"], "Sia scales the job to what exists")
}

// TestMalformedProfilesNameTheFile: the trace ground truth is read by
// bootstrap's reader; a duplicate step_time column is an error naming the
// file, line and column, not a silently different ground truth.
func TestMalformedProfilesNameTheFile(t *testing.T) {
	dir := t.TempDir()
	adir := filepath.Join(dir, "cifar10")
	require.NoError(t, os.Mkdir(adir, 0o755))
	files := map[string]string{
		"validation-128.csv": "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,2\n",
		"placements-aws.csv": "placement,local_bsz,step_time,sync_time,step_time\n1,64,0.1,0.01,100\n",
	}
	for n, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(adir, n), []byte(b), 0o644))
	}
	wl := writeWorkload(t, "name,time,application,num_replicas,batch_size\ncifar10-0,0,cifar10,1,128\n")
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"-data", dir, "-cluster", "t4:1x4", "-workload", wl, "-noftf"}, &out, &errb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(adir, "placements-aws.csv")+":1")
	assert.Contains(t, err.Error(), `"step_time": duplicate column`)
}
