package ilp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spreadProblem is n jobs of concave values (a·g^e, g = 1..k GPUs of one
// type) over capacity GPUs, a few of them pinned.
func spreadProblem(rng *rand.Rand, n, k, capacity int) *Problem {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": capacity}}
	e := 0.3 + 0.5*rng.Float64()
	for i := range n {
		a := 1 + rng.Float64()
		j := Job{ID: fmt.Sprint("j", i), Pin: -1}
		for g := 1; g <= k; g++ {
			j.Options = append(j.Options, Option{Type: "a", GPUs: g, Value: a * math.Pow(float64(g), e)})
		}
		p.Jobs = append(p.Jobs, j)
	}
	return p
}

// quickGreedyAt runs quickGreedy over every job of p at the multipliers
// lam returns for p's model, without a deadline, and returns its
// assignment.
func quickGreedyAt(t *testing.T, p *Problem, lam func(m *model) []float64) []int {
	sc, err := p.validate(nil, nil)
	require.NoError(t, err)
	m := buildModel(p, sc, nil)
	sr := newSearch(newClock(context.Background(), now(), 0), m, &Settings{})
	choice := sr.quickGreedy(m.allJobs(), m.cap, lam(m), nil)
	assign := append([]int(nil), m.pins...)
	for i, c := range choice {
		if c >= 0 {
			assign[m.jobs[i].orig] = int(m.jobs[i].opts[c].k)
		}
	}
	return assign
}

// TestQuickGreedySpreadsShortCapacity: at multipliers far too low for the
// capacity (a dual cut short by the deadline), the options quickGreedy
// would pick ask for several times the GPUs there are. It then gives each
// job its option of most profit per GPU and the GPUs left a step at a
// time, and reaches 90 % of the optimum's profit on concave jobs, against
// 35-60 % when the first jobs took their largest options whole.
func TestQuickGreedySpreadsShortCapacity(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 31))
	for it := range 40 {
		n, k := 20+rng.IntN(40), 4+rng.IntN(13)
		p := spreadProblem(rng, n, k, n/2+rng.IntN(n))
		desc := fmt.Sprintf("it %d: %d jobs of 1..%d GPUs on %d", it, n, k, p.Capacity["a"])
		exact, err := Solve(context.Background(), p, nil)
		require.NoError(t, err, desc)
		require.Equal(t, Optimal, exact.Status, desc)
		for _, lam := range []float64{0, 1e-3} {
			assign := quickGreedyAt(t, p, func(m *model) []float64 {
				l := make([]float64, m.nrows)
				for r := range l {
					l[r] = lam
				}
				return l
			})
			require.NoError(t, p.Check(assign), desc)
			assert.GreaterOrEqual(t, p.Objective(assign), 0.9*exact.Objective, "%s, λ %g", desc, lam)
		}
	}
}

// TestQuickGreedyAtGoodMultipliers: where the multipliers ask for about
// the capacity, quickGreedy keeps its Lagrangian choices: at the exact
// dual's multipliers of the same problems it is within 10 % too.
func TestQuickGreedyAtGoodMultipliers(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 37))
	for it := range 20 {
		n, k := 20+rng.IntN(40), 4+rng.IntN(13)
		p := spreadProblem(rng, n, k, n/2+rng.IntN(n))
		exact, err := Solve(context.Background(), p, nil)
		require.NoError(t, err)
		assign := quickGreedyAt(t, p, func(m *model) []float64 {
			lam, _ := m.minimizeDual(m.allJobs(), m.cap, nil, 1e-10*m.scale, 600)
			return lam
		})
		require.NoError(t, p.Check(assign), "it %d", it)
		assert.GreaterOrEqual(t, p.Objective(assign), 0.9*exact.Objective, "it %d", it)
	}
}
