//go:build clp

package ilp

import (
	"bufio"
	"compress/gzip"
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/sia-sched/sia/internal/shareddata"
	"github.com/stretchr/testify/require"
)

// lagrangianBound is the pure-Go root bound in objective units.
func lagrangianBound(p *Problem) float64 {
	m := newModel(p)
	free := m.allJobs()
	_, f := m.minimizeDual(free, m.cap, nil, 1e-10, 2000)
	pins := append([]int(nil), m.pins...)
	return p.Objective(pins) + m.sign*f
}

// crossCheck compares the pure-Go Lagrangian bound, the CLP relaxation and
// the solver's optimum: optimum ≤ Lagrangian ≤ CLP (maximising; reversed
// when minimising). The Lagrangian bound may be tighter than CLP's because
// the model drops options that exceed a capacity on their own, which the LP
// may use fractionally.
func crossCheck(t *testing.T, name string, p *Problem) (gap float64) {
	rel, err := RelaxCLP(p)
	require.NoError(t, err, name)
	lag := lagrangianBound(p)
	sol, err := Solve(context.Background(), p, nil)
	require.NoError(t, err, name)
	require.Equal(t, Optimal, sol.Status, name)
	s := 1.0
	if p.Sense == Minimize {
		s = -1
	}
	tol := 1e-6 * (1 + math.Abs(rel.Bound))
	require.LessOrEqual(t, s*sol.Objective, s*lag+tol, "%s: optimum %v beyond the Lagrangian bound %v", name, sol.Objective, lag)
	require.LessOrEqual(t, s*lag, s*rel.Bound+tol, "%s: Lagrangian bound %v weaker than CLP %v", name, lag, rel.Bound)
	for i, j := range p.Jobs {
		sum := 0.0
		for k := range j.Options {
			sum += rel.X[i][k]
		}
		require.LessOrEqual(t, sum, 1+1e-7, "%s job %s", name, j.ID)
		if j.Pin >= 0 {
			require.InDelta(t, 1, rel.X[i][j.Pin], 1e-7)
		}
	}
	return s * (rel.Bound - lag)
}

func TestCLPCrossCheckRecorded(t *testing.T) {
	f, err := os.Open(shareddata.Path(t, "mip-rounds", "saturn-w4.jsonl.gz"))
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	n := 0
	for sc.Scan() {
		p, meta, err := ParseJSON(sc.Bytes())
		require.NoError(t, err)
		crossCheck(t, meta.Name, p)
		n++
	}
	require.Equal(t, 987, n)
}

func TestCLPCrossCheckRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for it := 0; it < 500; it++ {
		p := smallForCLP(rng)
		crossCheck(t, "random", p)
	}
}

// TestCLPAgreesWhenNothingIsOversized: with every option fitting its
// capacity alone, the pure-Go Lagrangian dual and CLP give the same LP value.
func TestCLPAgreesWhenNothingIsOversized(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for it := 0; it < 300; it++ {
		p := smallForCLP(rng)
		for i := range p.Jobs {
			p.Jobs[i].Pin = -1
			for k := range p.Jobs[i].Options {
				p.Jobs[i].Options[k].GPUs = 1
			}
		}
		for _, ty := range slices.Sorted(maps.Keys(p.Capacity)) {
			if p.Capacity[ty] == 0 {
				p.Capacity[ty] = 1
			}
			p.Reserved[ty] = 0
		}
		p.Quotas = nil
		gap := crossCheck(t, "agree", p)
		require.InDelta(t, 0, gap, 1e-6, "instance %d", it)
	}
}

func smallForCLP(rng *rand.Rand) *Problem {
	types := []string{"a", "b", "c"}
	p := &Problem{Capacity: map[string]int{}, Reserved: map[string]int{}}
	if rng.IntN(2) == 1 {
		p.Sense = Maximize
	}
	for _, ty := range types {
		p.Capacity[ty] = rng.IntN(12)
	}
	n := rng.IntN(15)
	used := map[string]int{}
	for i := 0; i < n; i++ {
		j := Job{ID: string(rune('A' + i)), Unallocated: math.Round(rng.Float64()*100) / 100, Pin: -1}
		for k := rng.IntN(6); k > 0; k-- {
			j.Options = append(j.Options, Option{Type: types[rng.IntN(3)], GPUs: 1 + rng.IntN(6), Value: math.Round(rng.Float64()*300) / 100})
		}
		if len(j.Options) > 0 && rng.IntN(8) == 0 {
			o := j.Options[0]
			if used[o.Type]+o.GPUs <= p.Capacity[o.Type] {
				used[o.Type] += o.GPUs
				j.Pin = 0
			}
		}
		p.Jobs = append(p.Jobs, j)
	}
	if n > 2 && rng.IntN(2) == 0 {
		p.Quotas = append(p.Quotas, Quota{Name: "q", Jobs: []int{0, 1, 2}, Type: types[rng.IntN(3)], Limit: 20})
	}
	return p
}
