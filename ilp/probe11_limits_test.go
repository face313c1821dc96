package ilp_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/internal/measure"
)

// p11Problem draws a small problem a direct user builds at the numeric
// limits: values of every magnitude from 1e-300 to 1e270 mixed in one
// problem (and 0, and signs), GPU counts from 1 to near MaxInt32 and 2^48,
// capacities of 0, reservations, quotas of every form, pins.
func p11Problem(rng *rand.Rand) *ilp.Problem {
	mags := []float64{0, 1e-300, 1e-150, 1e-20, 1, 3.5, 1e20, 1e150, 1e250, 1e270, 1e279, 1e300, math.SmallestNonzeroFloat64}
	val := func() float64 {
		v := mags[rng.IntN(len(mags))] * (1 + rng.Float64())
		if rng.IntN(3) == 0 {
			v = -v
		}
		return v
	}
	types := []string{"a", "b", "c"}[:1+rng.IntN(3)]
	scale := []int{1, 1, 1 << 20, math.MaxInt32 - 7, 1 << 48, 1 << 50, math.MaxInt64 / 2}[rng.IntN(7)]
	p := &ilp.Problem{Sense: ilp.Sense(rng.IntN(2)), Capacity: map[string]int{}}
	for _, t := range types {
		c := 0
		if rng.IntN(5) > 0 {
			c = 1 + rng.IntN(8)
			if scale > 1 {
				c = scale/4*rng.IntN(4) + rng.IntN(3)
			}
		}
		p.Capacity[t] = c
		if rng.IntN(4) == 0 && c > 0 {
			if p.Reserved == nil {
				p.Reserved = map[string]int{}
			}
			p.Reserved[t] = rng.IntN(c + 1)
		}
	}
	count := func() int {
		if scale == 1 {
			return 1 + rng.IntN(6)
		}
		return max(1, scale/4*(1+rng.IntN(3))+rng.IntN(3)-1)
	}
	for i := 0; i < 1+rng.IntN(6); i++ {
		j := ilp.Job{ID: fmt.Sprint("j", i), Unallocated: val(), Pin: -1}
		for k := 0; k < rng.IntN(4); k++ {
			j.Options = append(j.Options, ilp.Option{Type: types[rng.IntN(len(types))], GPUs: count(), Value: val()})
		}
		if len(j.Options) > 0 && rng.IntN(8) == 0 {
			j.Pin = rng.IntN(len(j.Options))
		}
		p.Jobs = append(p.Jobs, j)
	}
	for q := 0; q < rng.IntN(3); q++ {
		qq := ilp.Quota{Name: fmt.Sprint("q", q), Limit: count() * rng.IntN(3)}
		switch rng.IntN(3) {
		case 0:
			qq.AllJobs = true
		default:
			for i := range p.Jobs {
				if rng.IntN(2) == 0 {
					qq.Jobs = append(qq.Jobs, i)
				}
			}
		}
		switch rng.IntN(3) {
		case 0:
			qq.Type = types[rng.IntN(len(types))]
		case 1:
			qq.Types = []string{types[0]}
		}
		if rng.IntN(3) == 0 {
			qq.MinGPUs = count()
		}
		p.Quotas = append(p.Quotas, qq)
	}
	return p
}

// p11Feasible is an independent check of an assignment: one option or
// none per job, pins, capacity less reserved per type, quotas (counted in
// big numbers: no overflow).
func p11Feasible(p *ilp.Problem, a []int) error {
	if len(a) != len(p.Jobs) {
		return fmt.Errorf("assignment of %d entries for %d jobs", len(a), len(p.Jobs))
	}
	use := map[string]float64{}
	for i, j := range p.Jobs {
		if a[i] < -1 || a[i] >= len(j.Options) {
			return fmt.Errorf("job %d: option %d", i, a[i])
		}
		if j.Pin >= 0 && a[i] != j.Pin {
			return fmt.Errorf("job %d pinned to %d, given %d", i, j.Pin, a[i])
		}
		if a[i] >= 0 {
			o := j.Options[a[i]]
			use[o.Type] += float64(o.GPUs)
		}
	}
	for t, u := range use {
		if u > float64(p.Capacity[t]-p.Reserved[t]) {
			return fmt.Errorf("type %s: %v GPUs of %d less %d", t, u, p.Capacity[t], p.Reserved[t])
		}
	}
	for qi, q := range p.Quotas {
		jobs := q.Jobs
		if q.AllJobs {
			jobs = nil
			for i := range p.Jobs {
				jobs = append(jobs, i)
			}
		}
		u := 0.0
		for _, i := range jobs {
			if a[i] >= 0 && q.Counts(p.Jobs[i].Options[a[i]]) {
				u += float64(p.Jobs[i].Options[a[i]].GPUs)
			}
		}
		if u > float64(q.Limit) {
			return fmt.Errorf("quota %d: %v GPUs, limit %d", qi, u, q.Limit)
		}
	}
	return nil
}

// p11Brute returns the best objective over every feasible assignment
// (NaN when none is), the objective summed in job order as Solve does.
func p11Brute(p *ilp.Problem) float64 {
	best := math.NaN()
	a := make([]int, len(p.Jobs))
	var rec func(i int)
	rec = func(i int) {
		if i == len(p.Jobs) {
			if p11Feasible(p, a) != nil {
				return
			}
			v := p.Objective(a)
			if math.IsNaN(best) || (p.Sense == ilp.Maximize) == (v > best) && v != best {
				best = v
			}
			return
		}
		for o := -1; o < len(p.Jobs[i].Options); o++ {
			a[i] = o
			rec(i + 1)
		}
	}
	rec(0)
	return best
}

// TestProbe11NumericLimitsTwin: 3,000 problems at the numeric limits,
// each solved under no deadline, an expired one, 1 ms, 20 ms, 1 s and a
// node limit of 1, against brute force: an input error only for input
// the docs rule out; Infeasible exactly when brute force finds no
// assignment; otherwise a feasible assignment whose Objective is its
// objective, a Bound no better optimum beats, and "optimal" only for the
// brute-force optimum (within Settings.Tolerance's default).
func TestProbe11NumericLimitsTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	n := 3000
	if testing.Short() {
		n = 500
	}
	counts := map[string]int{}
	for it := 0; it < n; it++ {
		p := p11Problem(rng)
		best := p11Brute(p)
		maxAbs := 1.0
		for _, j := range p.Jobs {
			maxAbs = math.Max(maxAbs, math.Abs(j.Unallocated))
			for _, o := range j.Options {
				maxAbs = math.Max(maxAbs, math.Abs(o.Value))
			}
		}
		tol := 1e-9*maxAbs + 1e-12*maxAbs*float64(len(p.Jobs)+1)
		// the documented limits: the sum of the jobs' largest |value| at
		// most MaxValueSum, the total capacity at most MaxGPUs
		valueSum, capSum := 0.0, 0.0
		for _, j := range p.Jobs {
			m := math.Abs(j.Unallocated)
			for _, o := range j.Options {
				m = math.Max(m, math.Abs(o.Value))
			}
			valueSum += m
		}
		for _, c := range p.Capacity {
			capSum += float64(c)
		}
		outside := valueSum > ilp.MaxValueSum || capSum > ilp.MaxGPUs
		for _, mode := range []string{"none", "expired", "1ms", "20ms", "1s", "nodes1"} {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			var s *ilp.Settings
			switch mode {
			case "expired":
				ctx, cancel = context.WithDeadline(ctx, time.Now().Add(-time.Millisecond))
			case "1ms":
				ctx, cancel = context.WithTimeout(ctx, time.Millisecond)
			case "20ms":
				ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
			case "1s":
				s = &ilp.Settings{TimeLimit: time.Second}
			case "nodes1":
				s = &ilp.Settings{MaxNodes: 1}
			}
			sol, err := ilp.Solve(ctx, p, s)
			cancel()
			what := fmt.Sprintf("problem %d (%s): %+v", it, mode, p)
			if outside {
				require.ErrorIs(t, err, ilp.ErrInvalidInput, "%s: beyond the limits (values %v, capacity %v)", what, valueSum, capSum)
				counts["beyond limits"]++
				continue
			}
			if err != nil {
				if math.IsNaN(best) {
					require.ErrorIs(t, err, ilp.ErrInfeasible, what)
					require.Equal(t, ilp.Infeasible, sol.Status, what)
					counts["infeasible"]++
					continue
				}
				require.True(t, errors.Is(err, ilp.ErrInvalidInput), "%s: %v", what, err)
				counts["invalid: "+err.Error()[:min(40, len(err.Error()))]]++
				continue
			}
			require.False(t, math.IsNaN(best), "%s: solved (%v) but no assignment is feasible", what, sol.Status)
			require.NoError(t, p11Feasible(p, sol.Assignment), what)
			require.Equal(t, p.Objective(sol.Assignment), sol.Objective, what)
			better := func(a, b float64) bool { // a strictly better than b beyond tol
				if p.Sense == ilp.Maximize {
					return a > b+tol
				}
				return a < b-tol
			}
			require.False(t, better(best, sol.Bound), "%s: bound %v, but %v is feasible", what, sol.Bound, best)
			require.False(t, better(sol.Objective, best), "%s: objective %v beats the optimum %v", what, sol.Objective, best)
			if sol.Status == ilp.Optimal {
				require.False(t, better(best, sol.Objective), "%s: optimal %v, but %v is feasible", what, sol.Objective, best)
				counts["optimal"]++
			} else {
				require.Equal(t, ilp.Feasible, sol.Status, what)
				counts["feasible"]++
			}
		}
	}
	t.Log(counts)
	require.Positive(t, counts["optimal"])
}

// TestProbe11HugeCountsDeadline: 2,000 jobs whose GPU counts are near
// 2^40 on capacities near 2^48 (and one type of capacity 0), values of
// every magnitude, solved under an expired deadline, 1 ms and 20 ms: a
// feasible answer with a valid bound that starts jobs, and memory by the
// input's size (the bytes allocated per call stay below 64 MB, where
// tables of jobs × capacity would need petabytes).
func TestProbe11HugeCountsDeadline(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	const unit = 1 << 40
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{"a": 200 * unit, "b": 37*unit + 5, "z": 0}}
	mags := []float64{1e-300, 1e-20, 1, 1e20, 1e200}
	for i := 0; i < 2000; i++ {
		j := ilp.Job{ID: fmt.Sprint("j", i), Unallocated: 0, Pin: -1}
		for k := 0; k < 1+rng.IntN(4); k++ {
			typ := []string{"a", "b", "z"}[rng.IntN(3)]
			j.Options = append(j.Options, ilp.Option{Type: typ, GPUs: unit/2 + rng.IntN(3*unit), Value: mags[rng.IntN(len(mags))] * (1 + rng.Float64())})
		}
		p.Jobs = append(p.Jobs, j)
	}
	p.Quotas = []ilp.Quota{{Name: "half", AllJobs: true, Type: "a", Limit: 100 * unit}}
	deadlines := []time.Duration{-time.Millisecond, time.Millisecond, 20 * time.Millisecond}
	for r := 0; r < 10; r++ {
		deadlines = append(deadlines, 5*time.Millisecond, 10*time.Millisecond)
	}
	for _, d := range deadlines {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ctx, cancel := context.WithTimeout(context.Background(), d)
		start := time.Now()
		runtime.LockOSThread()
		r0 := measure.Read()
		sol, err := ilp.Solve(ctx, p, nil)
		cpu := measure.Read().Since(r0)
		runtime.UnlockOSThread()
		took := time.Since(start)
		cancel()
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.NoError(t, p11Feasible(p, sol.Assignment), "deadline %v", d)
		require.NoError(t, p.Check(sol.Assignment))
		require.GreaterOrEqual(t, sol.Bound, sol.Objective, "deadline %v", d)
		// every job fits alone and is worth more than waiting: the greedy
		// incumbents start some (marginalGreedy kept the options' GPUs
		// as int32, so that on the Newton path of a tight deadline its
		// counts near 2^40 wrapped and its answer was dropped: objective
		// 0, nothing started, 5-14 solves of 20 at 5-10 ms)
		require.Positive(t, sol.Objective, "deadline %v: nothing started", d)
		alloc := after.TotalAlloc - before.TotalAlloc
		require.Less(t, alloc, uint64(64<<20), "deadline %v: %d bytes allocated", d, alloc)
		t.Logf("deadline %v: %v in %v of thread CPU, %v wall (%s), objective %.4g, bound %.4g, %d MB allocated", d, sol.Status, cpu, took, p11Load(), sol.Objective, sol.Bound, alloc>>20)
	}
}

func p11Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load ?"
	}
	return "load " + strings.Fields(string(b))[0]
}
