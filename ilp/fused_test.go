package ilp

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFusedStopsAtDeadline runs validateBuild on a clock whose deadline
// passes during the pass (a machine slower than fuseBefore expects): the
// pass stops building, validates every job (the same scan as validate's)
// and then builds the rest until buildEnd, as buildModel does: the whole
// model when buildEnd is far, else the jobs built by then (equal to the
// full model's), the rest's best profits as its bound; with the
// validation's end passed too, there is no model and the scan says where
// validation stopped.
func TestFusedStopsAtDeadline(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	t0 := time.Unix(1000, 0)
	defer func(f func() time.Time) { now = f }(now)
	calls := 0
	// the first look at the time (fuseBefore) is at t0, every later one an
	// hour after
	now = func() time.Time {
		if calls++; calls == 1 {
			return t0
		}
		return t0.Add(time.Hour)
	}
	for c := range 50 {
		p := randomProblem(rng, 100+rng.IntN(300), 30)
		want, err := p.validate(nil, nil)
		if err != nil {
			continue // infeasible pins: not this test's concern
		}
		full := buildModel(p, want, nil)
		for _, end := range []time.Duration{2 * time.Hour, time.Minute} {
			calls = 0
			clk := &clock{deadline: t0.Add(time.Minute), validateEnd: t0.Add(2 * time.Hour), buildEnd: t0.Add(end)}
			sc, m, err := p.validateBuild(clk, nil)
			require.NoError(t, err, "case %d", c)
			require.NotNil(t, m, "case %d", c)
			require.Equal(t, len(p.Jobs), sc.checked, "case %d", c)
			require.Equal(t, want.best, sc.best, "case %d", c)
			if end > time.Hour {
				require.NoError(t, diffModels(full, m), "case %d: buildEnd far", c)
				continue
			}
			require.Less(t, m.rest, len(p.Jobs), "case %d: buildEnd stopped the build", c)
			restP := 0.0
			for i := m.rest; i < len(p.Jobs); i++ {
				if p.Jobs[i].Pin < 0 {
					restP += want.best[i]
				}
			}
			require.Equal(t, restP, m.restP, "case %d", c)
			n := 0
			for n < len(full.jobs) && full.jobs[n].orig < m.rest {
				n++
			}
			require.Len(t, m.jobs, n, "case %d", c)
			for x := range m.jobs {
				require.Equal(t, full.jobs[x], m.jobs[x], "case %d job %d", c, x)
			}
		}

		// the validation's end passed as well: no model, validation cut
		calls = 0
		clk := &clock{deadline: t0.Add(time.Minute), validateEnd: t0.Add(time.Minute), buildEnd: t0.Add(time.Minute)}
		sc, m, err := p.validateBuild(clk, nil)
		require.NoError(t, err, "case %d", c)
		require.Nil(t, m, "case %d", c)
		require.Less(t, sc.checked, len(p.Jobs), "case %d", c)
	}
}
