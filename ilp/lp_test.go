package ilp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteLPShape(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 4, "b": 2}, Reserved: map[string]int{"a": 1},
		Jobs: []ilp.Job{
			{ID: "x", Unallocated: -1, Pin: 1, Options: []ilp.Option{{Type: "a", GPUs: 2, Value: 1.5}, {Type: "b", GPUs: 1, Value: -0.25}}},
			{ID: "y\nz", Unallocated: 0, Pin: -1},
		},
		Quotas: []ilp.Quota{{Name: "q", Jobs: []int{0}, Type: "", Limit: 3}}}
	var buf bytes.Buffer
	require.NoError(t, ilp.WriteLP(&buf, p))
	s := buf.String()
	for _, want := range []string{
		"Maximize\n obj: 1.5 x0_0 - 0.25 x0_1 - 1 u0 + 0 u1\n",
		" one0: 1 x0_0 + 1 x0_1 + 1 u0 = 1\n",
		" one1: 1 u1 = 1\n",
		" cap0: 2 x0_0 <= 3\n",
		" cap1: 1 x0_1 <= 2\n",
		" quota0: 2 x0_0 + 1 x0_1 <= 3\n",
		"Bounds\n x0_1 = 1\n",
		"Binaries\n x0_0 x0_1 u0\n u1\nEnd\n",
		`\ job 1 = "y z"`,
	} {
		assert.Contains(t, s, want)
	}
	require.ErrorIs(t, ilp.WriteLP(&buf, &ilp.Problem{Capacity: map[string]int{"a": -1}}), ilp.ErrInvalidInput)

	// a quota over all jobs counting only options of at least 2 GPUs
	p.Quotas = []ilp.Quota{{Name: "big", AllJobs: true, Type: "a", MinGPUs: 2, Limit: 2}}
	buf.Reset()
	require.NoError(t, ilp.WriteLP(&buf, p))
	assert.Contains(t, buf.String(), " quota0: 2 x0_0 <= 2\n")
}

var objRe = regexp.MustCompile(`(?m)^Objective value:\s+(\S+)|^Objective:\s+obj = (\S+)`)

// TestWriteLPExternal solves written LP files with cbc and glpsol, when they
// are installed, and compares their optimum with ours.
func TestWriteLPExternal(t *testing.T) {
	tools := map[string]func(lp, out string) *exec.Cmd{
		"cbc":    func(lp, _ string) *exec.Cmd { return exec.Command("cbc", lp, "-solve") },
		"glpsol": func(lp, out string) *exec.Cmd { return exec.Command("glpsol", "--lp", lp, "-o", out) },
	}
	ran := 0
	for name, cmd := range tools {
		if _, err := exec.LookPath(name); err != nil {
			continue
		}
		ran++
		dir := t.TempDir()
		for seed := uint64(1); seed <= 3; seed++ {
			for _, pw := range []float64{-0.5, 0.5} {
				p := ilptest.Generate(ilptest.Config{Scale: 1, Jobs: 12, Seed: seed, Power: pw, PinFrac: 0.2})
				p.Quotas = []ilp.Quota{{Name: "q", Jobs: []int{0, 1, 2, 3}, Type: "a100", Limit: 8}}
				if p.Validate() != nil {
					p.Quotas = nil
				}
				sol, err := ilp.Solve(context.Background(), p, nil)
				require.NoError(t, err)
				lp := filepath.Join(dir, "p.lp")
				out := filepath.Join(dir, "out.txt")
				f, err := os.Create(lp)
				require.NoError(t, err)
				require.NoError(t, ilp.WriteLP(f, p))
				require.NoError(t, f.Close())
				res, err := cmd(lp, out).CombinedOutput()
				require.NoError(t, err, "%s: %s", name, res)
				if name == "glpsol" {
					res, err = os.ReadFile(out)
					require.NoError(t, err)
				}
				m := objRe.FindStringSubmatch(string(res))
				require.NotNil(t, m, "%s output: %s", name, res)
				v, err := strconv.ParseFloat(strings.TrimSpace(m[1]+m[2]), 64)
				require.NoError(t, err)
				assert.InDelta(t, sol.Objective, v, 1e-5, "%s seed %d p %v", name, seed, pw)
			}
		}
	}
	if ran == 0 {
		t.Skip("neither cbc nor glpsol is installed")
	}
}
