package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/shareddata"
)

var update = flag.Bool("update", false, "rewrite testdata/fit.golden from the current output")

var overallRE = regexp.MustCompile(`^overall: (\d+) fits, median relative error (\d+\.\d)%, p90 (\d+\.\d)%$`)

func TestRunSharedProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 66 profiles")
	}
	dir := shareddata.Path(t, "profiles")
	var out, errOut bytes.Buffer
	code := run([]string{"-data", dir}, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Empty(t, errOut.String())
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	m := overallRE.FindStringSubmatch(last)
	require.NotNil(t, m, "last line %q", last)
	assert.Equal(t, "36", m[1])
	med, _ := strconv.ParseFloat(m[2], 64)
	p90, _ := strconv.ParseFloat(m[3], 64)
	// The published fitting procedure on the same profiles: 7.3 % and 27.8 %.
	assert.LessOrEqual(t, med, 7.3)
	assert.LessOrEqual(t, p90, 27.8)
	assert.Contains(t, out.String(), "skipped gpt_pmp")
	assert.Contains(t, out.String(), "single-node to multi-node: 30 fits")

	// Deterministic output.
	var again bytes.Buffer
	require.Equal(t, 0, run([]string{"-data", dir}, &again, &errOut))
	assert.Equal(t, out.String(), again.String())
}

func TestRunErrors(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "m")
	require.NoError(t, os.Mkdir(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "placements-x.csv"),
		[]byte("placement,local_bsz,step_time,sync_time\n1,4,0.4,0.01\n1,4,oops,0.01\n"), 0o644))
	empty := t.TempDir()
	file := filepath.Join(tmp, "file.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"bad starts", []string{"-starts", "x"}, 2, "-starts"},
		{"negative starts", []string{"-starts", "-1", "-data", tmp}, 2, "-starts -1"},
		{"extra argument", []string{"-data", tmp, "more"}, 2, "unexpected argument"},
		{"missing folder", []string{"-data", filepath.Join(tmp, "absent")}, 1, "absent"},
		{"not a folder", []string{"-data", file}, 1, "not a folder"},
		{"no profiles", []string{"-data", empty}, 1, "no placements"},
		{"malformed file", []string{"-data", tmp}, 1, filepath.Join(bad, "placements-x.csv") + ":3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tc.args, &out, &errOut)
			assert.Equal(t, tc.code, code)
			msg := errOut.String()
			assert.Equal(t, 1, strings.Count(msg, "\n"), "one line: %q", msg)
			assert.True(t, strings.HasPrefix(msg, "fit: "), msg)
			assert.Contains(t, msg, tc.msg)
		})
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 9, 8, 7, 6, 10}
	assert.Equal(t, 6.0, quantile(v, 0.5))
	assert.Equal(t, 10.0, quantile(v, 0.9))
	assert.Equal(t, 10.0, quantile(v, 1))
	assert.Equal(t, 1.0, quantile(v, 0))
	assert.Equal(t, []float64{5, 1, 4, 2, 3, 9, 8, 7, 6, 10}, v, "input unchanged")
}

// TestGolden compares the full report on the shared profiles with
// testdata/fit.golden; run with -update to accept a new output.
func TestGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("fits 66 profiles")
	}
	dir := shareddata.Path(t, "profiles")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"-data", dir}, &out, &errOut), errOut.String())
	golden := filepath.Join("testdata", "fit.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create it")
	assert.Equal(t, string(want), out.String())
}
