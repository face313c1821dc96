package sim

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
)

// profileFiles is a minimal valid cifar10 profile folder for type t4 (aws).
func profileFiles() map[string]string {
	return map[string]string{
		"validation-128.csv": "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,2\n20,20,0.6,1,2\n",
		"validation-256.csv": "progress,iteration,metric,grad_sqr,grad_var\n10,5,0.5,1,2\n20,10,0.6,1,2\n",
		"placements-aws.csv": "placement,local_bsz,step_time,sync_time\n1,64,0.1,0.01\n1,128,0.2,0.01\n2,64,0.12,0.03\n",
		"scalability-aws.csv": "num_nodes,num_replicas,local_bsz,step_time,sync_time\n" +
			"2,8,64,0.2,0.05\n",
	}
}

func writeProfiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	adir := filepath.Join(dir, "cifar10")
	require.NoError(t, os.Mkdir(adir, 0o755))
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(adir, name), []byte(body), 0o644))
	}
	return dir
}

func TestLoadTraceSmallFolder(t *testing.T) {
	tr, err := LoadTrace(writeProfiles(t, profileFiles()), []string{"t4", "a100"})
	require.NoError(t, err)
	assert.True(t, tr.Supports("cifar10", "t4"))
	assert.False(t, tr.Supports("cifar10", "a100"), "no placements-dgx-ext.csv")
	s, y, ok := tr.StepTime("cifar10", "t4", []int{1}, 96)
	require.True(t, ok)
	assert.InDelta(t, 0.15, s, 1e-12)
	assert.InDelta(t, 0.01, y, 1e-12)
	a, _ := tr.App("cifar10")
	assert.Equal(t, 128, a.InitBatch)
	assert.Equal(t, 256, a.MaxBatch)
	assert.Equal(t, 2, a.MaxEpochs)
}

// TestLoadTraceRejectsMalformedProfiles: the simulator reads profiles
// through bootstrap's reader, so every malformed file is an error naming the
// file, the line and the column, before the run starts.
func TestLoadTraceRejectsMalformedProfiles(t *testing.T) {
	const pl = "placements-aws.csv"
	const sc = "scalability-aws.csv"
	tests := []struct {
		name, file, body string
		line             int
		column           string
	}{
		{"duplicate step_time", pl, "placement,local_bsz,step_time,sync_time,step_time\n1,64,0.1,0.01,100\n", 1, "step_time"},
		{"duplicate column in scalability", sc, "num_nodes,num_replicas,local_bsz,step_time,sync_time,num_nodes\n2,8,64,0.2,0.05,1\n", 1, "num_nodes"},
		{"duplicate column in validation", "validation-128.csv", "progress,iteration,metric,grad_sqr,grad_var,grad_sqr\n10,10,0.5,1,2,3\n", 1, "grad_sqr"},
		{"missing column", pl, "placement,local_bsz,step_time\n1,64,0.1\n", 1, "sync_time"},
		{"zero step time", pl, "placement,local_bsz,step_time,sync_time\n1,64,0.1,0.01\n1,128,0,0\n", 3, "step_time"},
		{"zero step time in scalability", sc, "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,8,64,0,0\n", 2, "step_time"},
		{"sync above step", pl, "placement,local_bsz,step_time,sync_time\n1,64,0.1,0.2\n", 2, "sync_time"},
		{"sync equal to step", sc, "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,8,64,0.2,0.2\n", 2, "sync_time"},
		{"negative step time", pl, "placement,local_bsz,step_time,sync_time\n1,64,-0.1,0.01\n", 2, "step_time"},
		{"NaN sync time", pl, "placement,local_bsz,step_time,sync_time\n1,64,0.1,NaN\n", 2, "sync_time"},
		{"infinite step time", pl, "placement,local_bsz,step_time,sync_time\n1,64,+Inf,0.01\n", 2, "step_time"},
		{"zero batch", pl, "placement,local_bsz,step_time,sync_time\n1,0,0.1,0.01\n", 2, "local_bsz"},
		{"fractional batch", pl, "placement,local_bsz,step_time,sync_time\n1,6.5,0.1,0.01\n", 2, "local_bsz"},
		{"placement with a zero digit", pl, "placement,local_bsz,step_time,sync_time\n10,64,0.1,0.01\n", 2, "placement"},
		{"replicas below nodes", sc, "num_nodes,num_replicas,local_bsz,step_time,sync_time\n4,2,64,0.2,0.05\n", 2, "num_replicas"},
		{"ragged row", pl, "placement,local_bsz,step_time,sync_time\n1,64,0.1,0.01\n1,64,0.1\n", 3, ""},
		{"negative progress", "validation-128.csv", "progress,iteration,metric,grad_sqr,grad_var\n-1,10,0.5,1,2\n", 2, "progress"},
		{"empty placements file", pl, "", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := profileFiles()
			files[tc.file] = tc.body
			dir := writeProfiles(t, files)
			_, err := LoadTrace(dir, []string{"t4"})
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, filepath.Join(dir, "cifar10", tc.file), ie.File, err.Error())
			assert.Equal(t, tc.line, ie.Line, err.Error())
			assert.Equal(t, tc.column, ie.Field, err.Error())
			assert.ErrorIs(t, err, bootstrap.ErrMalformed, "the bootstrap reader's error is kept")
			assert.Contains(t, err.Error(), tc.file)
		})
	}
}

func TestLoadTraceReadsBOMHeader(t *testing.T) {
	files := profileFiles()
	for _, f := range []string{"placements-aws.csv", "scalability-aws.csv", "validation-128.csv"} {
		files[f] = "\ufeff" + files[f]
	}
	tr, err := LoadTrace(writeProfiles(t, files), []string{"t4"})
	require.NoError(t, err)
	s, _, ok := tr.StepTime("cifar10", "t4", []int{1}, 64)
	require.True(t, ok)
	assert.Equal(t, 0.1, s)
}

// TestLoadTraceUnreadableFileIsAnError: a scalability file that exists but
// cannot be read is not skipped (it would silently change the ground truth).
func TestLoadTraceUnreadableFileIsAnError(t *testing.T) {
	files := profileFiles()
	delete(files, "scalability-aws.csv")
	dir := writeProfiles(t, files)
	sf := filepath.Join(dir, "cifar10", "scalability-aws.csv")
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone.csv"), sf)) // readable by nobody, root included
	_, err := LoadTrace(dir, []string{"t4"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), sf)

	if os.Geteuid() != 0 {
		require.NoError(t, os.Remove(sf))
		require.NoError(t, os.WriteFile(sf, []byte(profileFiles()["scalability-aws.csv"]), 0))
		_, err := LoadTrace(dir, []string{"t4"})
		assert.ErrorIs(t, err, os.ErrPermission)
		assert.Contains(t, err.Error(), sf)
	}
}

// TestLoadTraceReadsOnlyRequestedTypes: a malformed file of a type the
// cluster does not use does not fail the load (only used files are read).
func TestLoadTraceReadsOnlyRequestedTypes(t *testing.T) {
	files := profileFiles()
	files["placements-rtx.csv"] = "placement,local_bsz,step_time,sync_time\n1,64,0,0\n"
	dir := writeProfiles(t, files)
	_, err := LoadTrace(dir, []string{"t4"})
	require.NoError(t, err)
	_, err = LoadTrace(dir, []string{"t4", "rtx"})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "step_time", ie.Field)
}

func TestLoadTraceDuplicateValidationBatch(t *testing.T) {
	files := profileFiles()
	files["validation-0128.csv"] = files["validation-128.csv"]
	_, err := LoadTrace(writeProfiles(t, files), []string{"t4"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "batch size 128 also given by")
}

func TestLoadTraceModelPathNotAFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bert"), []byte("x"), 0o644))
	_, err := LoadTrace(dir, []string{"t4"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrInvalidInput))
	assert.Contains(t, err.Error(), filepath.Join(dir, "bert"))
}
