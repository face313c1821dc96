package ilp

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wideProblem is a valid round of n jobs with k options each (one type of
// two, sizes 1..k), a pin on every tenth job and a quota on the odd jobs.
func wideProblem(n, k int) *Problem {
	p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": n, "b": n / 2}, Grid: 0.01}
	for i := range n {
		j := Job{ID: fmt.Sprintf("j%d", i), Pin: -1, Unallocated: 0}
		for g := 1; g <= k; g++ {
			ty := "a"
			if g%2 == 0 {
				ty = "b"
			}
			j.Options = append(j.Options, Option{Type: ty, GPUs: g, Value: math.Round(100*math.Sqrt(float64(g))*float64(1+i%7)) / 100})
		}
		if i%10 == 0 {
			j.Pin = 0
		}
		p.Jobs = append(p.Jobs, j)
	}
	q := Quota{Name: "odd", Type: "a", Limit: n / 4}
	for i := 1; i < n; i += 2 {
		q.Jobs = append(q.Jobs, i)
	}
	p.Quotas = []Quota{q}
	return p
}

// lateClock is the clock of a call whose deadline (a millisecond after
// the call) passed a second ago: every step's end has passed.
func lateClock() *clock {
	return newClock(context.Background(), time.Now().Add(-time.Second), time.Millisecond)
}

// TestValidateStopsAtItsEnd: once validateEnd has passed, validation reads
// at most one more chunk of options, still checks every job-level field,
// the pins and the warm start's options, and finds their errors.
func TestValidateStopsAtItsEnd(t *testing.T) {
	const n, k = 4000, 20
	p := wideProblem(n, k)
	sc, err := p.validate(lateClock(), nil)
	require.NoError(t, err)
	assert.Less(t, sc.checked, n, "stopped")
	assert.LessOrEqual(t, sc.checked*k, validateChunk+k, "options read after the end")
	full, err := p.validate(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, n, full.checked)
	assert.Equal(t, full.best[:sc.checked], sc.best[:sc.checked])

	// errors the fallback plan depends on are still found after the stop
	bad := wideProblem(n, k)
	bad.Jobs[n-10].Options[0].Value = math.NaN() // pinned
	_, err = bad.validate(lateClock(), nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), fmt.Sprintf(`jobs[%d] "j%d".options[0].value`, n-10, n-10))
	bad = wideProblem(n, k)
	warm := make([]int, n)
	for i := range warm {
		warm[i] = bad.Jobs[i].Pin
	}
	warm[n-1] = 3
	bad.Jobs[n-1].Options[3].GPUs = 0
	_, err = bad.validate(lateClock(), warm)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), fmt.Sprintf(`jobs[%d] "j%d".options[3].gpus`, n-1, n-1))
	bad = wideProblem(n, k)
	bad.Jobs[n-1].Unallocated = math.Inf(1)
	_, err = bad.validate(lateClock(), nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	// an option neither pinned nor warm is not read after the stop
	bad = wideProblem(n, k)
	bad.Jobs[n-1].Options[5].Value = math.NaN()
	sc, err = bad.validate(lateClock(), nil)
	require.NoError(t, err)
	assert.Less(t, sc.checked, n)
	require.Error(t, bad.Validate(), "Validate reads everything")
}

// TestBuildModelStopsAtItsEnd: once buildEnd has passed, the model holds
// at most one more chunk of options, and restP bounds the profit of the
// jobs it does not hold.
func TestBuildModelStopsAtItsEnd(t *testing.T) {
	const n, k = 4000, 20
	p := wideProblem(n, k)
	sc, err := p.validate(nil, nil)
	require.NoError(t, err)
	m := buildModel(p, sc, lateClock())
	assert.Less(t, m.rest, n)
	opts := 0
	for _, j := range m.jobs {
		opts += len(p.Jobs[j.orig].Options)
	}
	assert.LessOrEqual(t, opts, validateChunk/4+k, "options modelled after the end")
	want := 0.0
	for i := m.rest; i < n; i++ {
		if p.Jobs[i].Pin < 0 {
			want += sc.best[i]
		}
	}
	assert.Equal(t, want, m.restP)
	full := buildModel(p, sc, nil)
	assert.Equal(t, n, full.rest)
	assert.Zero(t, full.restP)
}

// TestLateSearch: a search on a model cut short keeps the warm start of
// the jobs it does not hold, never breaks a constraint, is not Optimal, and
// its bound does not cut off the optimum; the greedy incumbent reads no job
// after greedyEnd.
func TestLateSearch(t *testing.T) {
	const n, k = 600, 8
	p := wideProblem(n, k)
	exact, err := Solve(context.Background(), p, &Settings{MaxNodes: 20000})
	require.NoError(t, err)
	// warm start: the pins and the even jobs at their smallest option that fits
	warm := make([]int, n)
	for i, j := range p.Jobs {
		warm[i] = j.Pin
	}
	for i := 2; i < n; i += 2 {
		if warm[i] < 0 {
			warm[i] = 0
			if p.Check(warm) != nil {
				warm[i] = -1
			}
		}
	}
	require.NoError(t, p.Check(warm))
	set := &Settings{WarmStart: warm}
	sc, err := p.validate(nil, warm)
	require.NoError(t, err)
	clk := lateClock()
	m := buildModel(p, sc, clk)
	require.Less(t, m.rest, n)
	clk.beginSearch()
	sr := newSearch(clk, m, set)
	sr.run()
	sol := sr.solution()
	require.NoError(t, p.Check(sol.Assignment))
	assert.Equal(t, Feasible, sol.Status)
	assert.GreaterOrEqual(t, sol.Bound, exact.Objective-1e-9)
	assert.GreaterOrEqual(t, sol.Objective, p.Objective(warm)-1e-9, "the warm start is kept")
	for i := m.rest; i < n; i++ {
		if warm[i] >= 0 && p.Jobs[i].Pin < 0 {
			assert.Equal(t, warm[i], sol.Assignment[i], "job %d keeps its warm start", i)
		}
	}
}

// TestLateGreedyBounded: after greedyEnd the greedy incumbent considers at
// most greedyMinJobs jobs in each of its two passes (without a clock it
// admits many more), and admitLate at most greedyMinJobs.
func TestLateGreedyBounded(t *testing.T) {
	p := wideProblem(3000, 8)
	sc, err := p.validate(nil, nil)
	require.NoError(t, err)
	m := buildModel(p, sc, nil)
	lam := make([]float64, m.nrows)
	all := newSearch(newClock(context.Background(), time.Now(), 0), m, &Settings{}).quickGreedy(m.allJobs(), m.cap, lam, nil)
	require.Greater(t, admittedCount(all), 4*greedyMinJobs)
	got := newSearch(lateClock(), m, &Settings{}).quickGreedy(m.allJobs(), m.cap, lam, nil)
	assert.LessOrEqual(t, admittedCount(got), 2*greedyMinJobs)

	pins := make([]int, len(p.Jobs))
	for i, j := range p.Jobs {
		pins[i] = j.Pin
	}
	assign := append([]int(nil), pins...)
	_, err = admitLate(p, assign, 0, nil, len(p.Jobs), nil, nil)
	require.NoError(t, err)
	require.NoError(t, p.Check(assign))
	require.Greater(t, admittedCount(assign)-admittedCount(pins), 4*greedyMinJobs)
	assign = append([]int(nil), pins...)
	_, err = admitLate(p, assign, 0, nil, len(p.Jobs), lateClock(), nil)
	require.NoError(t, err)
	require.NoError(t, p.Check(assign))
	assert.LessOrEqual(t, admittedCount(assign)-admittedCount(pins), greedyMinJobs)
}

func admittedCount(choice []int) int {
	n := 0
	for _, c := range choice {
		if c >= 0 {
			n++
		}
	}
	return n
}

// TestLateAdmitsPastKeptJobs: a solve whose deadline has passed when it
// starts admits queued jobs that fit the free GPUs even when hundreds of
// jobs kept by the warm start come before them (a sia round out of time
// lists its running jobs first). The first greedyMinJobs jobs the late
// greedy looks at whatever the clock are jobs it may admit: before, the
// kept jobs used them up and the queued jobs behind them never started.
func TestLateAdmitsPastKeptJobs(t *testing.T) {
	for _, kept := range []int{0, 64, 300, 2000, 5000} {
		p := &Problem{Sense: Maximize, Capacity: map[string]int{"a": kept + 8}}
		warm := make([]int, 0, kept+20)
		for i := range kept {
			p.Jobs = append(p.Jobs, Job{ID: fmt.Sprintf("kept%d", i), Pin: -1, Options: []Option{{Type: "a", GPUs: 1, Value: 1}}})
			warm = append(warm, 0)
		}
		for i := range 20 {
			p.Jobs = append(p.Jobs, Job{ID: fmt.Sprintf("queued%d", i), Pin: -1, Options: []Option{{Type: "a", GPUs: 1, Value: 0.5}}})
			warm = append(warm, -1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		sol, err := Solve(ctx, p, &Settings{WarmStart: warm})
		cancel()
		require.NoError(t, err)
		require.NoError(t, p.Check(sol.Assignment))
		admitted := 0
		for i := kept; i < len(p.Jobs); i++ {
			if sol.Assignment[i] >= 0 {
				admitted++
			}
		}
		for i := range kept {
			assert.Equal(t, 0, sol.Assignment[i], "kept job %d keeps its warm option", i)
		}
		assert.Equal(t, 8, admitted, "%d kept jobs before the queued ones: the 8 free GPUs are used", kept)
	}
}
