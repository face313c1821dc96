package ilp_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// TestCapacityBeyondDemandTwin: raising capacities and quota limits past
// what the jobs could use changes no optimum (the solver caps each row at
// its jobs' demand): small random problems, solved with their capacities
// and limits raised by up to 2^20, against the brute-force twin.
func TestCapacityBeyondDemandTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 20))
	for it := range 300 {
		p := ilptest.Small(rng, 6, false)
		for ty := range p.Capacity {
			p.Capacity[ty] += rng.IntN(3) * rng.IntN(1<<20)
		}
		for qi := range p.Quotas {
			p.Quotas[qi].Limit += rng.IntN(2) * rng.IntN(64)
		}
		if p.Validate() != nil {
			continue
		}
		_, want, ok := ilptest.BruteForce(p)
		sol, err := ilp.Solve(context.Background(), p, nil)
		if !ok {
			require.Error(t, err, "problem %d", it)
			continue
		}
		require.NoError(t, err, "problem %d", it)
		require.Equal(t, ilp.Optimal, sol.Status, "problem %d", it)
		require.NoError(t, p.Check(sol.Assignment))
		assert.InDelta(t, want, sol.Objective, 1e-9*(1+abs(want)), "problem %d", it)
	}
}

// TestBigJobWithTime: a job of many options (past the size the build times
// before it starts) is still built and solved to optimality when the
// deadline leaves the time.
func TestBigJobWithTime(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 1000}}
	j := ilp.Job{ID: "big", Pin: -1}
	for k := range 20000 {
		j.Options = append(j.Options, ilp.Option{Type: "a", GPUs: 1 + k%999, Value: float64(k%1000) / 7})
	}
	p.Jobs = []ilp.Job{j, {ID: "small", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 1, Value: 1}}}}
	sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{TimeLimit: 20 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, ilp.Optimal, sol.Status)
	assert.InDelta(t, 999.0/7+1, sol.Objective, 1e-9)
}
