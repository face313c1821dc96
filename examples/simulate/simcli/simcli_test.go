package simcli

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

	"github.com/sia-sched/sia/sia/sim"
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
		{"cluster too large", []string{"-cluster", "t4:65536x64"}, "GPUs"},
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
			err := Run(context.Background(), tc.args, &out, &errb)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, strings.TrimSpace(err.Error()), "\n")
		})
	}
}

func TestJSONKeys(t *testing.T) {
	var out, errb bytes.Buffer
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "sia,gavel", "-json"}, &out, &errb)
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
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "gavel,sia-rigid", "-scale", "1,2", "-plot", dir, "-noftf"}, &out, &errb)
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
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, "name,time,application,num_replicas,batch_size\n"), "-policy", "sia,gavel,pollux", "-json"}, &out, &errb)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(out.String(), "\"jobs\":0"))
}

func TestJobLargerThanClusterIsReportedUnfinished(t *testing.T) {
	var out, errb bytes.Buffer
	body := "name,time,application,num_replicas,batch_size\nbert-0,0,bert,100,384\ncifar10-0,10,cifar10,4,2048\n"
	err := Run(context.Background(), []string{"-workload", writeWorkload(t, body), "-policy", "gavel,sia", "-json", "-noftf"}, &out, &errb)
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
	err := Run(context.Background(), []string{"-data", dir, "-cluster", "t4:1x4", "-workload", wl, "-noftf"}, &out, &errb)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(adir, "placements-aws.csv")+":1")
	assert.Contains(t, err.Error(), `"step_time": duplicate column`)
}

// hold is a test policy: every job gets one GPU of the first type that
// supports it, on the first node with a free GPU.
type hold struct{ truth sim.Truth }

func (hold) Name() string { return "hold" }

func (h hold) Schedule(_ context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	used := map[string][]int{}
	out := map[string]sim.Alloc{}
	for _, j := range s.Jobs {
		for _, g := range s.Cluster.Groups {
			if !h.truth.Supports(j.Spec.App, g.Type) {
				continue
			}
			u := used[g.Type]
			if u == nil {
				u = make([]int, g.Nodes)
				used[g.Type] = u
			}
			for n := range u {
				if u[n] < g.GPUsPerNode {
					u[n]++
					out[j.Name()] = sim.Alloc{Type: g.Type, Nodes: []int{n}}
					break
				}
			}
			if _, ok := out[j.Name()]; ok {
				break
			}
		}
	}
	return out, nil
}

func TestRegistryOwnPolicyGetsEveryOutput(t *testing.T) {
	r := Builtin()
	require.NoError(t, r.Register(Policy{Name: "hold", Rigid: true, New: func(env Env) (sim.Policy, error) { return hold{env.Truth}, nil }}))
	dir := t.TempDir()
	csvFile, jsonFile := filepath.Join(dir, "jobs.csv"), filepath.Join(dir, "jobs.json")
	var out, errb bytes.Buffer
	err := r.Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "hold,gavel", "-noftf",
		"-jobs-csv", csvFile, "-jobs-json", jsonFile, "-plot", dir}, &out, &errb)
	require.NoError(t, err, errb.String())
	assert.Contains(t, out.String(), "hold ")
	var rows []JobRow
	b, err := os.ReadFile(jsonFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rows))
	require.Len(t, rows, 6, "three jobs under two policies")
	for _, row := range rows {
		assert.Contains(t, []string{"hold", "gavel"}, row.Policy)
		assert.GreaterOrEqual(t, row.Start, row.Arrival, row.Job)
		assert.InDelta(t, row.Finish-row.Arrival, row.JCT, 1e-9, row.Job)
		assert.Greater(t, row.GPUHours, 0.0)
	}
	c, err := os.ReadFile(csvFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(c)), "\n")
	require.Len(t, lines, 7)
	assert.Equal(t, strings.Join(jobHeader, ","), lines[0])
	_, err = os.Stat(filepath.Join(dir, "gpus_hold.png"))
	assert.NoError(t, err)

	assert.ErrorIs(t, r.Register(Policy{Name: "hold", New: func(Env) (sim.Policy, error) { return nil, nil }}), ErrRegistry)
	assert.ErrorIs(t, r.Register(Policy{Name: "a,b", New: func(Env) (sim.Policy, error) { return nil, nil }}), ErrRegistry)
	assert.ErrorIs(t, r.Register(Policy{Name: "x"}), ErrRegistry)
	require.NoError(t, r.Register(Policy{Name: "nil", New: func(Env) (sim.Policy, error) { return nil, nil }}))
	err = r.Run(context.Background(), []string{"-workload", writeWorkload(t, small), "-policy", "nil"}, &out, &errb)
	assert.ErrorContains(t, err, "no policy")
	// The default registry does not know the test's policy.
	err = Run(context.Background(), []string{"-policy", "hold"}, &out, &errb)
	assert.ErrorContains(t, err, "unknown policy")
}

func TestSiaFlags(t *testing.T) {
	wl := writeWorkload(t, small)
	jct := func(args ...string) []JobRow {
		f := filepath.Join(t.TempDir(), "j.json")
		var out, errb bytes.Buffer
		require.NoError(t, Run(context.Background(), append([]string{"-workload", wl, "-policy", "sia", "-noftf", "-jobs-json", f}, args...), &out, &errb))
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var rows []JobRow
		require.NoError(t, json.Unmarshal(b, &rows))
		return rows
	}
	base := jct()
	assert.Equal(t, base, jct("-p", "-0.5", "-variant", "artifact"), "the defaults spelled out")
	assert.Len(t, jct("-p", "1", "-variant", "paper", "-round", "30s"), 3)
	for _, args := range [][]string{{"-variant", "nope"}, {"-p", "NaN"}, {"-p", "-1", "-lambda", "-2"}, {"-lambda", "Inf"}} {
		var out, errb bytes.Buffer
		err := Run(context.Background(), append([]string{"-workload", wl}, args...), &out, &errb)
		assert.Error(t, err, args)
	}
}

func TestFormatReasons(t *testing.T) {
	assert.Equal(t, "", formatReasons(nil))
	assert.Equal(t, "deadline:1;quota:3;too-large:12", formatReasons(map[string]int{"too-large": 12, "quota": 3, "deadline": 1}))
}
