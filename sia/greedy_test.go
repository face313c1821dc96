package sia

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// randomProblem returns a random allocation problem with capacities,
// reservations, quotas (some over every job, with a minimum size), pins
// that fit, and a warm start that may not.
func randomProblem(rng *rand.Rand) (*ilp.Problem, []int) {
	types := []string{"A", "B", "C"}[:1+rng.IntN(3)]
	p := &ilp.Problem{Sense: ilp.Sense(rng.IntN(2)), Capacity: map[string]int{}, Reserved: map[string]int{}}
	for _, t := range types {
		p.Capacity[t] = rng.IntN(17)
		p.Reserved[t] = rng.IntN(p.Capacity[t] + 1)
	}
	lambda := 1.1
	if p.Sense == ilp.Maximize {
		lambda = -1.1
	}
	n := 1 + rng.IntN(12)
	free := map[string]int{}
	for t := range p.Capacity {
		free[t] = p.Capacity[t] - p.Reserved[t]
	}
	warm := make([]int, n)
	for i := 0; i < n; i++ {
		j := ilp.Job{ID: fmt.Sprintf("j%d", i), Unallocated: lambda, Pin: -1}
		for k, m := 0, rng.IntN(5); k < m; k++ {
			j.Options = append(j.Options, ilp.Option{Type: types[rng.IntN(len(types))], GPUs: 1 + rng.IntN(8), Value: 2 * rng.Float64()})
		}
		warm[i] = rng.IntN(len(j.Options)+1) - 1
		if len(j.Options) > 0 && rng.IntN(6) == 0 {
			if o := j.Options[0]; o.GPUs <= free[o.Type] {
				j.Pin = 0
				free[o.Type] -= o.GPUs
			}
		}
		p.Jobs = append(p.Jobs, j)
	}
	for q, m := 0, rng.IntN(3); q < m; q++ {
		qu := ilp.Quota{Name: fmt.Sprintf("q%d", q), Limit: 100}
		if rng.IntN(2) == 0 {
			qu.Type = types[rng.IntN(len(types))]
		}
		if rng.IntN(3) == 0 {
			qu.AllJobs, qu.MinGPUs = true, rng.IntN(5)
		} else {
			for i := range p.Jobs {
				if rng.IntN(2) == 0 {
					qu.Jobs = append(qu.Jobs, i)
				}
			}
		}
		// The limit leaves room for the pins.
		used := 0
		for i, j := range p.Jobs {
			in := qu.AllJobs
			for _, k := range qu.Jobs {
				in = in || k == i
			}
			if in && j.Pin >= 0 && qu.Counts(j.Options[j.Pin]) {
				used += j.Options[j.Pin].GPUs
			}
		}
		qu.Limit = used + rng.IntN(8)
		p.Quotas = append(p.Quotas, qu)
	}
	return p, warm
}

// TestGreedyAssignment: the greedy allocation of a round out of time is
// feasible, keeps the pins, and is maximal: no waiting job has an option
// that beats waiting and fits what is left.
func TestGreedyAssignment(t *testing.T) {
	for seed := 0; seed < 2000; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 5))
		p, warm := randomProblem(rng)
		require.NoError(t, p.Validate(), "seed %d", seed)
		a, ok := greedyAssignment(p, warm)
		require.True(t, ok, "seed %d: the pins fit", seed)
		require.NoError(t, p.Check(a), "seed %d", seed)
		for i, j := range p.Jobs {
			if j.Pin >= 0 {
				assert.Equal(t, j.Pin, a[i], "seed %d: pin", seed)
			}
			if a[i] >= 0 {
				continue
			}
			for k, o := range j.Options {
				if !better(o.Value, j.Unallocated, p.Sense) {
					continue
				}
				try := append([]int(nil), a...)
				try[i] = k
				assert.Error(t, p.Check(try), "seed %d: job %d waits although option %d fits", seed, i, k)
			}
		}
		// The relaxed bound bounds every feasible assignment.
		b := relaxedBound(p)
		if p.Sense == ilp.Minimize {
			assert.LessOrEqual(t, b, p.Objective(a)+1e-9)
		} else {
			assert.GreaterOrEqual(t, b, p.Objective(a)-1e-9)
		}
	}
}
