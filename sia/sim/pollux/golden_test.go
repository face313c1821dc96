package pollux

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recorder wraps a policy and writes every round's allocations, one line per
// round, jobs in name order.
type recorder struct {
	sim.Policy
	b strings.Builder
}

func (r *recorder) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	out, err := r.Policy.Schedule(ctx, s)
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(&r.b, "t=%.0f", s.Now)
	for _, n := range names {
		fmt.Fprintf(&r.b, " %s:%s%v", n, out[n].Type, out[n].Nodes)
	}
	r.b.WriteByte('\n')
	return out, err
}

// TestGoldenRounds pins every round's allocations of short simulations with
// the default population of 100: a change to the search that is meant to be
// only faster (caching, fewer allocations, another sort) must leave them
// unchanged. Regenerate with go test -run TestGoldenRounds -update only for a
// deliberate change of the algorithm.
func TestGoldenRounds(t *testing.T) {
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	m, err := sim.LoadModel()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		wl   [3]float64 // seed, hours, rate
		opt  Options
	}{
		{"default", [3]float64{5, 0.5, 16}, Options{Seed: 1, Generations: 25}},
		{"busy", [3]float64{9, 0.25, 80}, Options{Seed: 2, Generations: 15}},
		{"p0.5-carry", [3]float64{5, 0.5, 16}, Options{Seed: 3, Generations: 15, P: 0.5, CarryPopulation: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl, err := sim.Generate(uint64(tc.wl[0]), tc.wl[1], tc.wl[2])
			require.NoError(t, err)
			rec := &recorder{Policy: New(c, m, tc.opt)}
			_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: m, Round: 60, MaxTime: 4 * 3600, Batch: sim.PooledModel}, wl, rec)
			require.NoError(t, err)
			path := filepath.Join("testdata", "rounds-"+tc.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(rec.b.String()), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, string(want), rec.b.String())
		})
	}
}
