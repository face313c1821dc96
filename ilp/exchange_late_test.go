package ilp_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/sia-sched/sia/internal/measure"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoExchangePastDeadline: a search that starts after its deadline (the
// problem's validation and model took it all) does not run the exchange
// moves: the allowance after D is the admission's and the Solution's. On
// the 5,000-job corpus instance at 20 ms the exchange ran 0.1 ms past D,
// and the whole solve 1.5–1.8 ms of CPU past D against an allowance of 2 ms.
func TestNoExchangePastDeadline(t *testing.T) {
	if !measure.ThreadCPUAvailable {
		t.Skip("no thread CPU clock on this system")
	}
	p := ilptest.Hard(ilptest.HardConfig{Jobs: 1000, GPUs: 2000, Types: 3, Seed: 9001, Power: 0.5, PinFrac: 0.05, Quotas: true})
	// Measure when validation and model building end with time to spare,
	// then set the deadline halfway through the building (of a model built
	// after the validation, as under a tight deadline: see ilp.NoFuse).
	defer ilp.NoFuse()()
	const long = time.Second
	_, steps, _, err := ilp.TraceSolve(p, long, nil)
	require.NoError(t, err)
	at := func(steps []ilp.StepCPU, name string) time.Duration {
		for _, s := range steps {
			if s.Step == name {
				return s.CPU
			}
		}
		t.Fatalf("no step %q in %v", name, steps)
		return 0
	}
	// (from the end of the build's setup: a setup that would end after
	// the build's end is not started, see setupAffordable)
	validated, built := long+at(steps, "build.setup"), long+at(steps, "build")
	require.Less(t, validated, built)
	// The CPU times vary from solve to solve: up to five tries for one whose
	// model is built past the deadline (the case under test).
	var sol ilp.Solution
	late := false
	for try := 0; try < 5 && !late; try++ {
		_, steps, sol, err = ilp.TraceSolve(p, validated+(built-validated)/4, nil)
		require.NoError(t, err)
		late = at(steps, "build") > 0
	}
	require.True(t, late, "no solve built its model past the deadline")
	require.NotEqual(t, ilp.Optimal, sol.Status)
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Step
	}
	require.Contains(t, names, "quickGreedy", "the search ran its greedy incumbent")
	assert.False(t, slices.Contains(names, "exchange"), "no exchange past the deadline: %v", names)

	// With time left after the model the exchange runs (the 100 ms gap
	// depends on it): in at least one of the solves that leave the search
	// one to eight times the building's time. The race detector slows the
	// solve past what counts as very tight, a fixed count of greedy passes.
	if raceEnabled {
		return
	}
	ran := false
	for k := 1; k <= 8 && !ran; k++ {
		_, steps, _, err = ilp.TraceSolve(p, built+time.Duration(k)*(built-validated), nil)
		require.NoError(t, err)
		for _, s := range steps {
			ran = ran || s.Step == "exchange"
		}
	}
	assert.True(t, ran, "a very tight deadline not yet passed runs the exchange")
}
