package sia

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden plays every testdata/*.txt scenario and compares the transcript
// with testdata/*.golden (regenerate with go test ./sia -update).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			in, err := os.Open(f)
			require.NoError(t, err)
			defer in.Close()
			sc, err := parseScenario(in)
			require.NoError(t, err, f)
			got, _, err := sc.run(context.Background())
			require.NoError(t, err)
			golden := strings.TrimSuffix(f, ".txt") + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden file; run go test ./sia -update")
			assert.Equal(t, string(want), got)
		})
	}
}

// TestRunningExample checks the paper's running example explicitly: one node
// with 2 GPUs of type A, one with 4 of type B; J1 gets (1,4,B) and J2 gets
// (1,2,A).
func TestRunningExample(t *testing.T) {
	in, err := os.Open(filepath.Join("testdata", "running_example.txt"))
	require.NoError(t, err)
	defer in.Close()
	sc, err := parseScenario(in)
	require.NoError(t, err)
	_, plans, err := sc.run(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, plans)
	p := plans[0]
	j1, ok := p.Decision("J1")
	require.True(t, ok)
	j2, ok := p.Decision("J2")
	require.True(t, ok)
	assert.Equal(t, Start, j1.Action)
	assert.Equal(t, Allocation{Type: "B", Nodes: 1, GPUs: 4, Placement: []GPU{{"b0", 0}, {"b0", 1}, {"b0", 2}, {"b0", 3}}}, j1.Allocation)
	assert.Equal(t, Start, j2.Action)
	assert.Equal(t, Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}, j2.Allocation)
	// Brute force over all pairs of entries agrees with the solver.
	best, _ := bruteForce(p.matrix)
	assert.InDelta(t, best, p.Objective, 1e-9)
}
