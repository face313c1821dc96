package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	placementsHeader  = "placement,local_bsz,step_time,sync_time\n"
	scalabilityHeader = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
	goodPlacements    = placementsHeader + "1,4,0.40,0.01\n1,8,0.70,0.01\n2,4,0.45,0.05\n4,8,0.80,0.09\n"
)

// writeTree creates files (relative path -> content) under a new temporary
// folder and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return dir
}

// TestCatalogueBadInput is the catalogue of bad input to the fit command:
// each case exits non-zero with exactly one line on stderr that starts with
// "fit: " and names the offending flag, folder, file and line (or data row).
func TestCatalogueBadInput(t *testing.T) {
	type tc struct {
		name  string
		files map[string]string // nil: no -data folder is made
		args  []string          // "DIR" is replaced by the folder
		code  int
		want  []string // substrings of the message; "DIR" is replaced
	}
	cases := []tc{
		// flags
		{"unknown flag", nil, []string{"-x"}, 2, []string{"flag provided but not defined: -x"}},
		{"starts not a number", nil, []string{"-starts", "many"}, 2, []string{"-starts"}},
		{"starts float", nil, []string{"-starts", "1.5"}, 2, []string{"-starts"}},
		{"starts overflows int", nil, []string{"-starts", "99999999999999999999"}, 2, []string{"-starts"}},
		{"starts negative", nil, []string{"-starts", "-3"}, 2, []string{"-starts -3"}},
		{"starts above MaxStarts", nil, []string{"-starts", "100000"}, 2, []string{"-starts 100000"}},
		{"data without value", nil, []string{"-data"}, 2, []string{"flag needs an argument", "-data"}},
		{"positional argument", nil, []string{"extra"}, 2, []string{`unexpected argument "extra"`}},
		// folders
		{"missing folder", nil, []string{"-data", "/nonexistent/profiles"}, 1, []string{"/nonexistent/profiles", "no such file"}},
		{"data is a file", map[string]string{"f": "x"}, []string{"-data", "DIR/f"}, 1, []string{"DIR/f is not a folder"}},
		{"empty folder", map[string]string{}, []string{"-data", "DIR"}, 1, []string{"DIR: no placements"}},
		{"only empty model folders", map[string]string{"m/README": "x", "n/notes.txt": "y"}, []string{"-data", "DIR"}, 1, []string{"no placements"}},
		{"a model folder instead of its parent", map[string]string{"placements-a.csv": goodPlacements}, []string{"-data", "DIR"}, 1, []string{"looks like one model's folder"}},
		// files
		{"binary garbage", map[string]string{"m/placements-a.csv": "\x00\x01\xff\xfe\x89PNG\r\n\x1a\n\x00"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:1", "missing column"}},
		{"garbage with quoted newline", map[string]string{"m/placements-a.csv": "\"x\ny\",z\n1,2\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:1", `x\ny`}},
		{"missing column", map[string]string{"m/placements-a.csv": "placement,local_bsz,step_time\n1,4,0.4\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:1", `column "sync_time"`, "missing column"}},
		{"short row", map[string]string{"m/placements-a.csv": placementsHeader + "1,4,0.4,0.01\n1,4\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:3", "wrong number of fields"}},
		{"zero local batch", map[string]string{"m/placements-a.csv": placementsHeader + "1,0,0.4,0.01\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:2", `column "local_bsz"`}},
		{"negative local batch", map[string]string{"m/placements-a.csv": placementsHeader + "1,-4,0.4,0.01\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:2", `column "local_bsz"`}},
		{"zero GPUs in placement", map[string]string{"m/placements-a.csv": placementsHeader + "0,4,0.4,0.01\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:2", `column "placement"`}},
		{"negative step time", map[string]string{"m/placements-a.csv": goodPlacements + "1,4,-0.4,0.01\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:6", `column "step_time"`, "negative"}},
		{"zero step time", map[string]string{"m/placements-a.csv": placementsHeader + "1,4,0,0\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:2", `column "step_time"`}},
		{"negative sync time", map[string]string{"m/placements-a.csv": placementsHeader + "1,4,0.4,-0.01\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:2", `column "sync_time"`}},
		{"NaN time", map[string]string{"m/placements-a.csv": placementsHeader + "1,4,NaN,0.01\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv:2", `column "step_time"`}},
		{"sync not below step", map[string]string{"m/placements-a.csv": goodPlacements + "1,4,0.4,0.5\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv data row 5", "SyncTime"}},
		{"sync not below step, scalability", map[string]string{"m/placements-a.csv": goodPlacements, "m/scalability-a.csv": scalabilityHeader + "2,8,4,0.9,0.4\n2,8,4,0.9,0.95\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/scalability-a.csv data row 2", "SyncTime"}},
		{"zero nodes", map[string]string{"m/placements-a.csv": goodPlacements, "m/scalability-a.csv": scalabilityHeader + "0,8,4,0.9,0.4\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/scalability-a.csv:2", `column "num_nodes"`}},
		{"replicas below nodes", map[string]string{"m/placements-a.csv": goodPlacements, "m/scalability-a.csv": scalabilityHeader + "4,2,4,0.9,0.4\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/scalability-a.csv:2", `column "num_replicas"`}},
		{"scalability without placements", map[string]string{"m/placements-a.csv": goodPlacements, "m/scalability-b.csv": scalabilityHeader}, []string{"-data", "DIR"}, 1, []string{"DIR/m/scalability-b.csv", "no placements-b.csv"}},
		{"header-only placements", map[string]string{"m/placements-a.csv": placementsHeader}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv", "no data rows"}},
		{"empty placements file", map[string]string{"m/placements-a.csv": ""}, []string{"-data", "DIR"}, 1, []string{"DIR/m/placements-a.csv", "empty file"}},
		{"bad validation name", map[string]string{"m/placements-a.csv": goodPlacements, "m/validation-big.csv": "x"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/validation-big.csv", "batch size"}},
		{"duplicate validation batch", map[string]string{"m/placements-a.csv": goodPlacements, "m/validation-64.csv": "progress,iteration,metric,grad_sqr,grad_var\n", "m/validation-0064.csv": "progress,iteration,metric,grad_sqr,grad_var\n"}, []string{"-data", "DIR"}, 1, []string{"validation-64.csv", "batch size 64 also given by"}},
		{"bad validation row", map[string]string{"m/placements-a.csv": goodPlacements, "m/validation-64.csv": "progress,iteration,metric,grad_sqr,grad_var\n1,1,0.5,-1,1\n"}, []string{"-data", "DIR"}, 1, []string{"DIR/m/validation-64.csv:2", `column "grad_sqr"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := "/nonexistent"
			if c.files != nil {
				dir = writeTree(t, c.files)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "DIR", dir)
			}
			var out, errOut bytes.Buffer
			code := run(args, &out, &errOut)
			assert.Equal(t, c.code, code)
			msg := errOut.String()
			assert.Equal(t, 1, strings.Count(msg, "\n"), "one line: %q", msg)
			assert.True(t, strings.HasSuffix(msg, "\n"))
			assert.True(t, strings.HasPrefix(msg, "fit: "), msg)
			for _, w := range c.want {
				assert.Contains(t, msg, strings.ReplaceAll(w, "DIR", dir))
			}
		})
	}
	t.Logf("%d bad inputs", len(cases))
}

// TestValidEdgeCases: a profile with one row fits; a model folder without
// profiles is listed as skipped; a type without multi-node rows shows "-";
// -h prints the usage on stdout and exits 0.
func TestValidEdgeCases(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"one/placements-a.csv":    placementsHeader + "1,4,0.40,0.01\n",
		"empty/README":            "nothing here",
		"multi/placements-b.csv":  goodPlacements,
		"multi/scalability-b.csv": scalabilityHeader + "2,8,4,0.9,0.4\n4,16,4,1.1,0.6\n",
		"stray.csv":               "ignored: not in a model folder",
	})
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-data", dir, "-starts", "1"}, &out, &errOut), errOut.String())
	assert.Empty(t, errOut.String())
	s := out.String()
	assert.Contains(t, s, "skipped empty (no placements-<type>.csv)")
	assert.Contains(t, s, "overall: 2 fits")
	assert.Contains(t, s, "single-node to multi-node: 1 fits")
	assert.Regexp(t, `one\s+a\s+1\s+0\s+-\s+-`, s)
	// Deterministic.
	var again bytes.Buffer
	require.Equal(t, 0, run([]string{"-data", dir, "-starts", "1"}, &again, &errOut))
	assert.Equal(t, s, again.String())

	out.Reset()
	errOut.Reset()
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errOut))
	assert.Contains(t, out.String(), "usage: fit")
	assert.Empty(t, errOut.String())
}

// TestMainExitStatus runs the command's main in a subprocess (this test
// binary, re-executed) to check the real exit status and stderr.
func TestMainExitStatus(t *testing.T) {
	if os.Getenv("FIT_RUN_MAIN") == "1" {
		os.Args = append([]string{"fit"}, strings.Fields(os.Getenv("FIT_ARGS"))...)
		main()
		return
	}
	garbage := writeTree(t, map[string]string{"m/placements-a.csv": "\x00\xffgarbage"})
	for _, c := range []struct {
		args string
		code int
	}{
		{"-nope", 2},
		{"-data " + garbage, 1},
		{"-data " + filepath.Join(garbage, "absent"), 1},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitStatus$")
		cmd.Env = append(os.Environ(), "FIT_RUN_MAIN=1", "FIT_ARGS="+c.args)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%s: %v", c.args, err)
		assert.Equal(t, c.code, ee.ExitCode(), c.args)
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "%s: %q", c.args, stderr.String())
		assert.True(t, strings.HasPrefix(stderr.String(), "fit: "))
		assert.Empty(t, stdout.String())
	}
}

// FuzzRun writes arbitrary placements and scalability files into a model
// folder and runs the command: it must exit 0 with a report, or 1 with
// exactly one line on stderr naming the model folder; never panic.
func FuzzRun(f *testing.F) {
	f.Add(goodPlacements, scalabilityHeader+"2,8,4,0.9,0.4\n")
	f.Add(placementsHeader+"1,4,0.4,0.5\n", "")
	f.Add("\x00\xff", "\"a\nb\"")
	f.Fuzz(func(t *testing.T, placements, scalability string) {
		files := map[string]string{"m/placements-a.csv": placements}
		if scalability != "" {
			files["m/scalability-a.csv"] = scalability
		}
		dir := writeTree(t, files)
		var out, errOut bytes.Buffer
		code := run([]string{"-data", dir, "-starts", "1"}, &out, &errOut)
		switch code {
		case 0:
			require.Empty(t, errOut.String())
			require.Contains(t, out.String(), "overall: 1 fits")
		case 1:
			msg := errOut.String()
			require.Equal(t, 1, strings.Count(msg, "\n"), "%q", msg)
			require.True(t, strings.HasPrefix(msg, "fit: "+filepath.Join(dir, "m")), "%q", msg)
		default:
			t.Fatalf("exit %d: %q", code, errOut.String())
		}
	})
}
