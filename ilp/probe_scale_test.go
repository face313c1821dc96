package ilp_test

// Probes of issue 10's number classes: extreme values and grids on small
// random instances, each answer checked against the brute-force twin.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// extremeProblem draws a small problem whose numbers come from one of the
// extreme regimes: values near MaxValueSum, tiny or subnormal, mixed
// magnitudes, all equal, a few ulps apart, on coarse or fine grids; GPU
// counts and capacities scaled up to near MaxGPUs.
func extremeProblem(rng *rand.Rand) (p *ilp.Problem, regime string) {
	p = ilptest.Small(rng, 6, false)
	n := len(p.Jobs)
	vr := rng.IntN(11)
	scaleGPUs := []int{1, 1, 1000003, 1 << 40, 1 << 44}[rng.IntN(5)]
	grid := 0.0
	val := func() float64 { return 0 }
	switch vr {
	case 0: // huge: the sum stays within MaxValueSum
		top := ilp.MaxValueSum / float64(2*(n+1))
		val = func() float64 { return (rng.Float64()*2 - 1) * top }
	case 1: // tiny and subnormal
		val = func() float64 { return (rng.Float64()*2 - 1) * math.Ldexp(1, -1060+rng.IntN(40)) }
	case 2: // mixed magnitudes
		val = func() float64 { return (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(40)-20)) }
	case 3: // all equal
		v := float64(rng.IntN(5) - 2)
		val = func() float64 { return v }
	case 4: // a few ulps apart
		val = func() float64 { return 1 + float64(rng.IntN(8))*0x1p-52 }
	case 5: // coarse grid
		grid = []float64{2.5, 1000, 1e10, 3}[rng.IntN(4)]
		val = func() float64 { return float64(rng.IntN(9)-3) * grid }
	case 6: // fine grid with large values
		grid = []float64{0.01, 1e-6, 0.125}[rng.IntN(3)]
		val = func() float64 { return float64(rng.IntN(2001)-1000) * grid }
	case 7: // grid on huge values
		grid = 1e250
		val = func() float64 { return float64(rng.IntN(9)-3) * grid }
	case 8: // integers near 2^53
		val = func() float64 { return float64(1<<53 - rng.IntN(64)) }
	case 9: // one magnitude from 10^-15 to 10^45
		e := math.Pow(10, float64(rng.IntN(61)-15))
		val = func() float64 { return (rng.Float64()*4 - 1) * e }
	case 10: // a grid of 10^-15 to 10^45
		grid = math.Pow(10, float64(rng.IntN(61)-15))
		val = func() float64 { return float64(rng.IntN(401)-100) * grid }
	}
	p.Grid = grid
	for i := range p.Jobs {
		j := &p.Jobs[i]
		j.Unallocated = val()
		if rng.IntN(3) == 0 {
			j.Unallocated = 0
		}
		for k := range j.Options {
			j.Options[k].Value = val()
			j.Options[k].GPUs *= scaleGPUs
		}
	}
	for t := range p.Capacity {
		p.Capacity[t] *= scaleGPUs
		if r, ok := p.Reserved[t]; ok {
			p.Reserved[t] = r * scaleGPUs
		}
	}
	for q := range p.Quotas {
		p.Quotas[q].Limit *= scaleGPUs
		p.Quotas[q].MinGPUs *= scaleGPUs
	}
	return p, fmt.Sprintf("values %d, grid %g, GPUs ×%d", vr, grid, scaleGPUs)
}

// TestProbeExtremeBruteForce: on small random problems with extreme numbers
// and every kind of settings, Solve never panics or hangs, and every answer
// is feasible with a true bound; every Optimal answer is the brute-force
// optimum within the declared grid step or tolerance (and the float64
// resolution of the sums).
func TestProbeExtremeBruteForce(t *testing.T) {
	seed := uint64(10)
	n := 1500
	if v := os.Getenv("PROBE_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
		n = 30000 // PROBE_SEED=s: a long run on another seed
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	if testing.Short() || raceEnabled {
		n = 300
	}
	optimal := 0
	for it := 0; it < n; it++ {
		if checkExtreme(t, rng, fmt.Sprintf("it %d", it), 20*time.Second) {
			optimal++
		}
	}
	t.Logf("%d instances, %d optimal", n, optimal)
	assert.Greater(t, optimal, n/3)
}

// FuzzSolveExtreme is TestProbeExtremeBruteForce on fuzzed seeds, each
// solve under a 2 s deadline: a few instances with capacities of millions
// of GPUs take seconds without one (BenchmarkProbeCapacityCliff), which the
// fuzzer takes for a hang.
func FuzzSolveExtreme(f *testing.F) {
	f.Add(uint64(10), uint64(5))
	f.Add(uint64(4), uint64(9256))
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		checkExtreme(t, rand.New(rand.NewPCG(s1, s2)), "fuzz", 2*time.Second)
	})
}

// checkExtreme draws one extremeProblem and settings, solves it and checks
// the answer against brute force; it reports whether it was Optimal.
func checkExtreme(t testing.TB, rng *rand.Rand, it string, timeout time.Duration) bool {
	t.Helper()
	p, regime := extremeProblem(rng)
	if err := p.Validate(); err != nil {
		require.ErrorIs(t, err, ilp.ErrInvalidInput, "%s: %v", regime, err)
		return false
	}
	var s *ilp.Settings
	tol := 0.0
	switch rng.IntN(6) {
	case 1:
		tol = []float64{1e-300, 1e-15, 0.5, 1e300}[rng.IntN(4)]
		s = &ilp.Settings{Tolerance: tol}
	case 2:
		s = &ilp.Settings{MaxNodes: 1}
	case 3:
		w := make([]int, len(p.Jobs))
		for i := range w {
			w[i] = rng.IntN(len(p.Jobs[i].Options)+2) - 1
		}
		s = &ilp.Settings{WarmStart: w}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	if rng.IntN(8) == 0 {
		cancel()
	}
	sol, err := ilp.Solve(ctx, p, s)
	cancel()
	name := fmt.Sprintf("%s (%s, settings %+v)", it, regime, s)
	require.NoError(t, err, name)
	require.NoError(t, p.Check(sol.Assignment), name)
	require.Equal(t, p.Objective(sol.Assignment), sol.Objective, name)
	require.False(t, math.IsNaN(sol.Bound) || math.IsInf(sol.Bound, 0), "%s: bound %v", name, sol.Bound)
	_, want, ok := ilptest.BruteForce(p)
	require.True(t, ok, name)
	scale := 1.0
	for _, j := range p.Jobs {
		scale = math.Max(scale, math.Abs(j.Unallocated))
		for _, o := range j.Options {
			scale = math.Max(scale, math.Abs(o.Value))
		}
	}
	// float64 resolution of a sum of n+1 values of this scale, and the
	// solver's own equality tolerance (1e-12 × scale × (n+1))
	noise := 2e-12 * scale * float64(len(p.Jobs)+1)
	better := func(a, b, by float64) bool { // a better than b by more than by
		if p.Sense == ilp.Maximize {
			return a > b+by
		}
		return a < b-by
	}
	boundAllow := noise
	if sol.Status == ilp.Optimal && p.Grid == 0 && tol == 0 {
		boundAllow += 1e-9 * scale // Bound = Objective, optimal within the default tolerance
	}
	if !assert.False(t, better(want, sol.Bound, boundAllow), "%s: %v bound %v excludes the optimum %v (scale %g)", name, sol.Status, sol.Bound, want, scale) {
		t.Logf("%#v", *p)
	}
	if sol.Status == ilp.Optimal {
		allow := 1e-9 * scale
		switch {
		case p.Grid > 0:
			allow = p.Grid * (1 - 1e-9)
		case tol > 0:
			allow = tol
		}
		assert.False(t, better(want, sol.Objective, allow+noise), "%s: optimal %v but brute force %v", name, sol.Objective, want)
	}
	return sol.Status == ilp.Optimal
}

// TestProbeValueScale: two problems the brute-force property found, solved
// at every power of ten of their values (and grid) from 10^-300 to their
// own: Solve called assignments optimal that were a grid step or a fifth of
// the values off whenever the values were of order 10^40 and above, or on a
// grid of 10^-13 (the search's tolerances are sized for values near 1).
func TestProbeValueScale(t *testing.T) {
	ps := []ilp.Problem{
		{Sense: ilp.Minimize, Capacity: map[string]int{"a": 8, "b": 8, "c": 0}, Reserved: map[string]int{"a": 6}, Grid: 1e250, Jobs: []ilp.Job{
			{ID: "s0", Pin: -1, Unallocated: 3e250, Options: []ilp.Option{{Type: "b", GPUs: 1, Value: 1e250}}},
			{ID: "s1", Pin: -1, Unallocated: 1e250, Options: []ilp.Option{{Type: "b", GPUs: 4, Value: -2e250}, {Type: "c", GPUs: 4, Value: 4e250}, {Type: "a", GPUs: 2, Value: 5e250}}},
			{ID: "s2", Pin: -1, Options: []ilp.Option{{Type: "b", GPUs: 1, Value: 4e250}, {Type: "a", GPUs: 3, Value: 3e250}, {Type: "b", GPUs: 2, Value: 5e250}}},
			{ID: "s3", Pin: -1, Unallocated: 3e250, Options: []ilp.Option{{Type: "c", GPUs: 4, Value: 4e250}, {Type: "a", GPUs: 4, Value: 1e250}, {Type: "b", GPUs: 1, Value: 3e250}}}},
			Quotas: []ilp.Quota{{Name: "q2", AllJobs: true, Type: "b", Limit: 4}, {Name: "q1", Jobs: []int{0, 2, 3}, Types: []string{"a", "c", "b"}, Limit: 1}}},
		{Sense: ilp.Minimize, Capacity: map[string]int{"a": 4, "b": 7}, Jobs: []ilp.Job{
			{ID: "s0", Pin: -1, Options: []ilp.Option{{Type: "a", GPUs: 4, Value: -4.993058751172409e+278}}},
			{ID: "s1", Pin: -1, Options: []ilp.Option{{Type: "b", GPUs: 3, Value: 2.4023608282987315e+277}}},
			{ID: "s2", Pin: -1, Options: []ilp.Option{{Type: "b", GPUs: 2, Value: -2.6633193684547733e+278}, {Type: "a", GPUs: 4, Value: -6.690190238271987e+278}, {Type: "b", GPUs: 1, Value: -3.560590690236208e+277}}},
			{ID: "s3", Pin: -1, Unallocated: 1.6768335817770166e+278, Options: []ilp.Option{{Type: "b", GPUs: 2, Value: -3.903856474134594e+278}, {Type: "a", GPUs: 3, Value: -5.794837042947865e+278}}},
			{ID: "s4", Pin: -1, Unallocated: 3.482182665116897e+278, Options: []ilp.Option{{Type: "a", GPUs: 3, Value: 5.960250002279867e+278}, {Type: "b", GPUs: 1, Value: 5.960514180436655e+278}, {Type: "b", GPUs: 4, Value: -4.629606834007896e+278}}},
			{ID: "s5", Pin: -1, Unallocated: 6.896085489324495e+278}},
			Quotas: []ilp.Quota{{Name: "q1", Jobs: []int{0, 1, 5}, Type: "b", MinGPUs: 4, Limit: 1}}},
	}
	wrong := 0
	for i := range ps {
		for e := -300; e <= 0; e++ {
			p := scaleValues(&ps[i], math.Pow(10, float64(e)))
			require.NoError(t, p.Validate())
			sol, err := ilp.Solve(context.Background(), p, nil)
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			_, want, _ := ilptest.BruteForce(p)
			// within the grid step or the default tolerance (1e-9 of the
			// largest value, at least 1e-9)
			allow := p.Grid
			if allow == 0 {
				allow = 1e-9 * max(1, 7e278*math.Pow(10, float64(e)))
			}
			if assert.False(t, sol.Objective > want+0.5*allow, "problem %d at 1e%d: %v %v, brute force %v", i, e, sol.Status, sol.Objective, want) {
				assert.False(t, sol.Bound > want+0.5*allow, "problem %d at 1e%d: bound %v, brute force %v", i, e, sol.Bound, want)
			} else {
				wrong++
			}
		}
	}
	t.Logf("%d of %d wrong", wrong, 2*301)
}

// scaleValues returns a copy of p with every value and the grid times f.
func scaleValues(p *ilp.Problem, f float64) *ilp.Problem {
	q := *p
	q.Grid *= f
	q.Jobs = nil
	for _, j := range p.Jobs {
		j.Unallocated *= f
		j.Options = append([]ilp.Option(nil), j.Options...)
		for k := range j.Options {
			j.Options[k].Value *= f
		}
		q.Jobs = append(q.Jobs, j)
	}
	return &q
}

// TestProbeDefaultToleranceScaled: values of 10^10 were scaled into
// [0.5, 1), where the default tolerance's floor of 1 doubled it (2e-9 of
// the largest value instead of 1e-9): this job's best option, 78 better
// than staying unallocated, was left out as within the tolerance of 73.
func TestProbeDefaultToleranceScaled(t *testing.T) {
	p := &ilp.Problem{Sense: ilp.Minimize, Capacity: map[string]int{"a": 5, "b": 2}, Jobs: []ilp.Job{
		{ID: "s0", Pin: -1},
		{ID: "s1", Pin: -1, Unallocated: 6.442812779726533e-06, Options: []ilp.Option{
			{Type: "b", GPUs: 1, Value: -77.98064088758852}, {Type: "b", GPUs: 1, Value: 7.904549981699236e-18},
			{Type: "b", GPUs: 3, Value: -7.304701967780037e+10}, {Type: "b", GPUs: 4, Value: 94197.80703655604}}}},
		Quotas: []ilp.Quota{{Name: "q1", Jobs: []int{1}, Type: "a", MinGPUs: 2, Limit: 4}}}
	for _, s := range []*ilp.Settings{nil, {MaxNodes: 1}} {
		sol, err := ilp.Solve(context.Background(), p, s)
		require.NoError(t, err)
		require.Equal(t, ilp.Optimal, sol.Status)
		assert.InDelta(t, -77.98064088758852, sol.Objective, 1e-9*7.304701967780037e+10)
		assert.LessOrEqual(t, sol.Bound, sol.Objective)
	}
}

// TestProbeScaledDeadline: the scaling of values far from 1 (a copy of the
// problem, validated again) stays within the deadline contract: the hard
// rounds with every value times 2^200 or 2^-100 do at most Slack(D) of
// work past D, on the solving thread's CPU clock, with a feasible plan and
// a bound on the right side.
func TestProbeScaledDeadline(t *testing.T) {
	if !ilp.ThreadCPUClock {
		t.Skip("needs a per-thread CPU clock (Linux)")
	}
	corpus := ilptest.HardCorpus()
	for _, base := range []*ilp.Problem{hardRound(), ilptest.Hard(corpus[len(corpus)-2])} {
		for _, f := range []float64{0x1p200, 0x1p-100} {
			p := scaleValues(base, f)
			require.NoError(t, p.Validate())
			for _, d := range []time.Duration{5 * time.Millisecond, 20 * time.Millisecond} {
				least := time.Duration(math.MaxInt64)
				for range 3 {
					over, _, sol, err := ilp.TraceSolve(p, d, nil)
					require.NoError(t, err)
					require.NoError(t, p.Check(sol.Assignment))
					if p.Sense == ilp.Maximize {
						assert.GreaterOrEqual(t, sol.Bound, sol.Objective)
					} else {
						assert.LessOrEqual(t, sol.Bound, sol.Objective)
					}
					least = min(least, over)
				}
				if !raceEnabled {
					assert.LessOrEqual(t, least, ilp.Slack(d), "%d jobs ×%g, deadline %v", len(p.Jobs), f, d)
				}
			}
		}
	}
}

// BenchmarkProbeCapacityCliff: a five-job problem whose GPU counts are
// multiples of 1,000,003 (capacities of 5–6 million) took 4.5 s and 565 MB
// to solve to optimality, in the root heuristics' knapsack programs (seqDP,
// mckp and improveByType build tables as large as the capacities, up to
// dpMaxCells), while the same problem with counts ×10,000,019 (past the
// cells cap) took milliseconds and ×100,003 microseconds. Found by
// FuzzSolveExtreme, which took it for a hang. With each row capped at what
// its jobs could use (capToDemand: 2 M GPUs of a and c, none of b) it takes
// 42 ms and 40 MB: the capacity left is really used, by options of 2 M
// GPUs. Every useful option's count is a multiple of 1,000,003: tables
// indexed by multiples of the gcd of a row's option counts would have a
// few cells: now the tables are (gcdUnit), and a model whose counts share
// a factor is counted in that unit (divideCounts, TestProbe9CapacityCliff).
func BenchmarkProbeCapacityCliff(b *testing.B) {
	for _, k := range []int{100003, 1000003, 10000019} {
		p := &ilp.Problem{Sense: ilp.Minimize, Capacity: map[string]int{"a": 5 * k, "b": 6 * k, "c": 5 * k}, Jobs: []ilp.Job{
			{ID: "s0", Options: []ilp.Option{{Type: "b", GPUs: 2 * k, Value: -2}, {Type: "a", GPUs: k, Value: -2}}, Pin: 1},
			{ID: "s1", Options: []ilp.Option{{Type: "c", GPUs: 2 * k, Value: -2}}, Pin: -1},
			{ID: "s2", Unallocated: -2, Pin: -1},
			{ID: "s3", Options: []ilp.Option{{Type: "a", GPUs: 4 * k, Value: -2}, {Type: "a", GPUs: 2 * k, Value: -2}, {Type: "a", GPUs: 2 * k, Value: -2}, {Type: "c", GPUs: 4 * k, Value: -2}}, Pin: -1},
			{ID: "s4", Unallocated: -2, Pin: -1, Options: []ilp.Option{{Type: "b", GPUs: 1, Value: -1}}}},
			Quotas: []ilp.Quota{{Name: "q2", AllJobs: true, Limit: 3 * k}, {Name: "q1", Jobs: []int{0, 1, 2}, Type: "a", MinGPUs: k, Limit: 2 * k}}}
		b.Run(fmt.Sprintf("x%d", k), func(b *testing.B) {
			for range b.N {
				sol, err := ilp.Solve(context.Background(), p, nil)
				if err != nil || sol.Status != ilp.Optimal {
					b.Fatal(sol.Status, err)
				}
			}
		})
	}
}

// TestProbeToleranceFloor: a Settings.Tolerance below the objective's
// float64 resolution (1e-12 × max(1, largest |value|) × (jobs + 1)) acts as
// that resolution, as documented: with Tolerance 1e-14, about one Optimal
// answer in eleven had Bound more than Tolerance from Objective (up to
// 2.3e-11) while the documentation promised Tolerance. Every Optimal answer
// is within the resolution of Objective and of the brute-force optimum.
func TestProbeToleranceFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	optimal := 0
	for it := 0; it < 600; it++ {
		p := ilptest.Small(rng, 7, false)
		const tol = 1e-14
		sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{Tolerance: tol})
		require.NoError(t, err)
		if sol.Status != ilp.Optimal {
			continue
		}
		optimal++
		scale := 1.0
		for _, j := range p.Jobs {
			scale = math.Max(scale, math.Abs(j.Unallocated))
			for _, o := range j.Options {
				scale = math.Max(scale, math.Abs(o.Value))
			}
		}
		res := math.Max(tol, 1e-12*scale*float64(len(p.Jobs)+1))
		// (plus the rounding of Objective + res)
		assert.LessOrEqual(t, sol.Gap(), res+1e-15*math.Max(1, math.Abs(sol.Objective)), "it %d", it)
		_, want, _ := ilptest.BruteForce(p)
		assert.InDelta(t, want, sol.Objective, res+1e-15*scale, "it %d", it)
	}
	assert.Greater(t, optimal, 400)
}
