package ilp_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbe7LateKeepsWarmStart: Settings.WarmStart promises a result at
// least as good as a feasible warm start, also out of time. When the
// deadline cut the model's build short, the model's incumbent (over the
// jobs the model holds) took the capacity the warm start gives to the jobs
// after them, whose warm options then no longer fitted: 16 jobs on 8 GPUs,
// the warm start running the 4 best, came back with the 4 first (objective
// 4 instead of 12). Found by TestProbe7SteppedClock; the clock advances by
// a fixed step at every look, which cuts the solve at every point.
func TestProbe7LateKeepsWarmStart(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 8}}
	warm := make([]int, 16)
	for i := range 16 {
		v := 1.0
		warm[i] = -1
		if i >= 12 {
			v, warm[i] = 3, 0
		}
		p.Jobs = append(p.Jobs, ilp.Job{ID: fmt.Sprint("j", i), Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 2, Value: v}}})
	}
	require.NoError(t, p.Check(warm))
	w := p.Objective(warm)
	cut := 0
	for step := time.Microsecond; step <= 4*time.Millisecond; step += step / 4 {
		for _, d := range []time.Duration{0, 200 * time.Microsecond, time.Millisecond} {
			sol, _, err := ilp.SteppedSolve(p, d, step, &ilp.Settings{WarmStart: warm})
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			if sol.Status != ilp.Optimal {
				cut++
			}
			assert.GreaterOrEqual(t, sol.Objective, w, "step %v, deadline %v: %v %v", step, d, sol.Status, sol.Assignment)
			assert.GreaterOrEqual(t, sol.Bound, 12.0, "step %v, deadline %v", step, d)
		}
	}
	t.Logf("%d solves cut short", cut)
	assert.Positive(t, cut)
}
