package ilp_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"math"
	"os"
	"testing"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// TestRecordedRounds solves every allocation problem recorded from the
// published simulator (saturn workload 4, 64 GPUs) and checks the proven
// optimum, feasibility and pins, with and without the 0.01 grid.
func TestRecordedRounds(t *testing.T) {
	path := shareddata.Path(t, "mip-rounds", "saturn-w4.jsonl.gz")
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	n := 0
	for sc.Scan() {
		n++
		p, meta, err := ilp.ParseJSON(sc.Bytes())
		require.NoError(t, err, "line %d", n)
		require.NotNil(t, meta.Optimum, "line %d", n)
		for _, grid := range []float64{0, 0.01} {
			p.Grid = grid
			sol, err := ilp.Solve(context.Background(), p, nil)
			require.NoError(t, err, "%s", meta.Name)
			require.Equal(t, ilp.Optimal, sol.Status, "%s grid %v", meta.Name, grid)
			require.InDelta(t, *meta.Optimum, sol.Objective, 1e-6, "%s grid %v", meta.Name, grid)
			require.InDelta(t, sol.Objective, p.Objective(sol.Assignment), 1e-9)
			require.NoError(t, p.Check(sol.Assignment), "%s", meta.Name)
			for i, j := range p.Jobs {
				if j.Pin >= 0 {
					require.Equal(t, j.Pin, sol.Assignment[i], "%s job %s pin", meta.Name, j.ID)
				}
			}
			require.False(t, math.IsNaN(sol.Bound))
		}
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 987, n)
}
