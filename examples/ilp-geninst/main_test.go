package main

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunRejectsCollisions: flags whose instances would be written to the
// same file (powers equal at the name's one decimal, a job count or scale
// given twice, seeds past the end of uint64, which wrap to seed 0) are
// errors naming the flag, before anything is written: each used to
// overwrite an instance silently with another, leaving fewer files than
// asked for (or the same instance under two seeds).
func TestRunRejectsCollisions(t *testing.T) {
	for _, c := range []struct {
		name                 string
		scales, jobs, powers string
		seeds                int
		seed0                uint64
		want                 string
	}{
		{"powers equal at one decimal", "1", "30", "0.5,0.54", 1, 1000, "-powers"},
		{"job count twice", "1", "30,30", "0.5", 1, 1000, "-jobs"},
		{"scale twice", "1,1", "30", "0.5", 1, 1000, "-scales"},
		{"seeds wrap", "1", "30", "0.5", 2, math.MaxUint64, "-seed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			err := run(out, c.scales, c.jobs, c.powers, c.seeds, c.seed0, 0.05, false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			files, _ := os.ReadDir(out)
			assert.Empty(t, files, "nothing written")
		})
	}
	out := t.TempDir()
	require.NoError(t, run(out, "1,8", "30,31", "-0.5,0.5", 2, 1000, 0.05, true))
	files, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Len(t, files, 2*2*2*2*2, "one .json and one .lp per instance")
}
