package ilp_test

// Probes by an independent checker (probe-ilp7): Solve against an exact
// dynamic-programming twin on problems of 6–40 jobs, too large for brute
// force but small in row capacity, of shapes ilptest.Small and the corpus
// generator never make: all jobs identical, many GPU types with equal GPU
// counts, one type with many jobs, values spanning 1e-300..1e278 in one
// problem, no job that gains, duplicate options, nested / overlapping /
// single-job / empty quotas and limits of 0, pins that break a quota, GPU
// counts that are multiples of a large k, and integer values on a grid of 1
// (many ties).

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

var (
	probe7Cases = flag.Int("probe7.cases", 0, "instances per shape of TestProbe7DPTwin and TestProbe7SteppedClock (0: the default, a few seconds)")
	probe7Known = flag.Bool("probe7.known", false, "also run the probe7 cases of known limits (they fail)")
)

// dpTwin returns an optimal assignment of p and its objective by dynamic
// programming over the vector of row usage (types in sorted order, then
// quotas), each row's limit lowered to what its jobs could use, and GPU
// counts divided by unit (every count, capacity and limit must be a
// multiple of unit, limits rounded down). ok is false when no assignment
// holds the pins; tooBig when the state space would exceed maxStates.
// Values are summed in job order, as Problem.Objective does.
func dpTwin(p *ilp.Problem, unit int) (assign []int, obj float64, ok, tooBig bool) {
	types := slices.Sorted(maps.Keys(p.Capacity))
	row := map[string]int{}
	nr := len(types) + len(p.Quotas)
	limit := make([]int, nr)
	for r, t := range types {
		row[t] = r
		limit[r] = (p.Capacity[t] - p.Reserved[t]) / unit
	}
	covers := make([][]int, len(p.Jobs)) // quotas covering each job
	for q, qu := range p.Quotas {
		limit[len(types)+q] = qu.Limit / unit
		if qu.AllJobs {
			for i := range p.Jobs {
				covers[i] = append(covers[i], q)
			}
		}
		for _, i := range qu.Jobs {
			covers[i] = append(covers[i], q)
		}
	}
	// usage vectors of each job's choices; options that exceed a limit on
	// their own are dropped
	type choice struct {
		k   int
		use []int
	}
	choices := make([][]choice, len(p.Jobs))
	demand := make([]int, nr)
	for i, j := range p.Jobs {
		lo, hi := -1, len(j.Options)-1
		if j.Pin >= 0 {
			lo, hi = j.Pin, j.Pin
		}
		most := make([]int, nr)
		for k := lo; k <= hi; k++ {
			use := make([]int, nr)
			fits := true
			if k >= 0 {
				o := j.Options[k]
				g := o.GPUs / unit
				rs := []int{row[o.Type]}
				for _, q := range covers[i] {
					if p.Quotas[q].Counts(o) {
						rs = append(rs, len(types)+q)
					}
				}
				for _, r := range rs {
					if g > limit[r] {
						fits = false
					}
					use[r] += g
				}
			}
			if fits {
				choices[i] = append(choices[i], choice{k, use})
				for r := range use {
					most[r] = max(most[r], use[r])
				}
			}
		}
		for r := range most {
			demand[r] += most[r]
		}
	}
	radix := make([]uint64, nr)
	space := 1.0
	for r := range limit {
		limit[r] = min(limit[r], demand[r])
		radix[r] = uint64(limit[r] + 1)
		space *= float64(radix[r])
	}
	const maxStates = 1 << 22
	if space > maxStates {
		return nil, 0, false, true
	}
	type entry struct {
		val    float64
		parent uint64
		k      int
	}
	better := func(a, b float64) bool {
		if p.Sense == ilp.Maximize {
			return a > b
		}
		return a < b
	}
	decode := func(s uint64, v []int) {
		for r := range v {
			v[r] = int(s % radix[r])
			s /= radix[r]
		}
	}
	encode := func(v []int) uint64 {
		s := uint64(0)
		for r := nr - 1; r >= 0; r-- {
			s = s*radix[r] + uint64(v[r])
		}
		return s
	}
	stages := make([]map[uint64]entry, len(p.Jobs)+1)
	stages[0] = map[uint64]entry{0: {}}
	cur := make([]int, nr)
	for i, j := range p.Jobs {
		next := map[uint64]entry{}
		for s, e := range stages[i] {
			decode(s, cur)
			for _, c := range choices[i] {
				okc := true
				for r := range cur {
					if cur[r]+c.use[r] > limit[r] {
						okc = false
						break
					}
				}
				if !okc {
					continue
				}
				v := j.Unallocated
				if c.k >= 0 {
					v = j.Options[c.k].Value
				}
				nv := e.val + v
				for r := range cur {
					cur[r] += c.use[r]
				}
				ns := encode(cur)
				for r := range cur {
					cur[r] -= c.use[r]
				}
				// ties: the smallest parent state, then the first choice,
				// so that the twin is deterministic whatever the map order
				if old, seen := next[ns]; !seen || better(nv, old.val) || nv == old.val && (s < old.parent || s == old.parent && c.k < old.k) {
					next[ns] = entry{nv, s, c.k}
				}
			}
		}
		stages[i+1] = next
	}
	var bestS uint64
	for s, e := range stages[len(p.Jobs)] {
		if !ok || better(e.val, obj) || e.val == obj && s < bestS {
			obj, bestS, ok = e.val, s, true
		}
	}
	if !ok {
		return nil, 0, false, false
	}
	assign = make([]int, len(p.Jobs))
	s := bestS
	for i := len(p.Jobs); i > 0; i-- {
		e := stages[i][s]
		assign[i-1] = e.k
		s = e.parent
	}
	return assign, obj, true, false
}

// shape7 draws a problem of one of the shapes this file probes; unit is
// the common factor of its GPU counts (for dpTwin).
func shape7(rng *rand.Rand, shape int) (p *ilp.Problem, unit int, desc string) {
	p = &ilp.Problem{Capacity: map[string]int{}, Sense: ilp.Sense(rng.IntN(2))}
	unit = 1
	grid := []float64{0, 0.01, 1}[rng.IntN(3)]
	val := func() float64 {
		switch grid {
		case 0.01:
			return math.Round((rng.Float64()*4-1)*100) / 100
		case 1:
			return float64(rng.IntN(7) - 2)
		}
		return rng.Float64()*4 - 1
	}
	unalloc := func() float64 {
		if rng.IntN(2) == 0 {
			return 0
		}
		return val()
	}
	addTypes := func(n, maxCap int) []string {
		var ts []string
		for k := 0; k < n; k++ {
			t := fmt.Sprintf("t%d", k)
			p.Capacity[t] = rng.IntN(maxCap + 1)
			ts = append(ts, t)
		}
		return ts
	}
	job := func(i int) ilp.Job { return ilp.Job{ID: fmt.Sprintf("j%d", i), Pin: -1, Unallocated: unalloc()} }
	switch shape {
	case 0: // all jobs identical
		desc = "identical"
		ts := addTypes(1+rng.IntN(3), 9)
		proto := job(0)
		for k := rng.IntN(5); k >= 0; k-- {
			proto.Options = append(proto.Options, ilp.Option{Type: ts[rng.IntN(len(ts))], GPUs: 1 + rng.IntN(4), Value: val()})
		}
		for i := 0; i < 8+rng.IntN(25); i++ {
			j := proto
			j.ID = fmt.Sprintf("j%d", i)
			j.Options = slices.Clone(proto.Options)
			p.Jobs = append(p.Jobs, j)
		}
	case 1: // many types, equal GPU counts on several of them
		desc = "many types"
		ts := addTypes(5+rng.IntN(4), 3)
		for i := 0; i < 6+rng.IntN(10); i++ {
			j := job(i)
			g := 1 + rng.IntN(2)
			for _, t := range ts {
				if rng.IntN(3) > 0 {
					j.Options = append(j.Options, ilp.Option{Type: t, GPUs: g, Value: val()})
				}
			}
			p.Jobs = append(p.Jobs, j)
		}
	case 2: // one type, many jobs
		desc = "one type"
		ts := addTypes(1, 40)
		for i := 0; i < 20+rng.IntN(21); i++ {
			j := job(i)
			for k := rng.IntN(4); k >= 0; k-- {
				j.Options = append(j.Options, ilp.Option{Type: ts[0], GPUs: 1 + rng.IntN(8), Value: val()})
			}
			p.Jobs = append(p.Jobs, j)
		}
	case 3: // values from 1e-300 to 1e278 in one problem
		desc = "wide values"
		grid = 0
		ts := addTypes(2+rng.IntN(2), 6)
		n := 6 + rng.IntN(8)
		top := ilp.MaxValueSum / float64(4*(n+1))
		wide := func() float64 {
			return (rng.Float64()*2 - 1) * top * math.Pow(10, -float64(rng.IntN(579)))
		}
		for i := 0; i < n; i++ {
			j := job(i)
			j.Unallocated = wide()
			for k := rng.IntN(4); k >= 0; k-- {
				j.Options = append(j.Options, ilp.Option{Type: ts[rng.IntN(len(ts))], GPUs: 1 + rng.IntN(3), Value: wide()})
			}
			p.Jobs = append(p.Jobs, j)
		}
	case 4: // no job gains anything over staying unallocated (or only ties)
		desc = "no gain"
		ts := addTypes(2, 6)
		for i := 0; i < 6+rng.IntN(15); i++ {
			j := job(i)
			for k := rng.IntN(4); k >= 0; k-- {
				d := math.Abs(val())
				if rng.IntN(3) == 0 {
					d = 0
				}
				v := j.Unallocated - d // a loss when maximising
				if p.Sense == ilp.Minimize {
					v = j.Unallocated + d
				}
				j.Options = append(j.Options, ilp.Option{Type: ts[rng.IntN(2)], GPUs: 1 + rng.IntN(3), Value: v})
			}
			p.Jobs = append(p.Jobs, j)
		}
	case 5: // quota zoo: nested, overlapping, single-job, empty, limit 0
		desc = "quota zoo"
		ts := addTypes(2+rng.IntN(2), 8)
		n := 8 + rng.IntN(13)
		for i := 0; i < n; i++ {
			j := job(i)
			for k := rng.IntN(4); k >= 0; k-- {
				j.Options = append(j.Options, ilp.Option{Type: ts[rng.IntN(len(ts))], GPUs: 1 + rng.IntN(4), Value: val()})
			}
			if rng.IntN(25) == 0 {
				j.Pin = rng.IntN(len(j.Options)) // may break a capacity or quota
			}
			p.Jobs = append(p.Jobs, j)
		}
		outer := rng.Perm(n)[:n/2+rng.IntN(n/2)]
		slices.Sort(outer)
		inner := slices.Clone(outer[:len(outer)/2])
		other := rng.Perm(n)[:n/3]
		slices.Sort(other)
		lim := func() int { return []int{0, 1, 2, 4, 6, 9}[rng.IntN(6)] }
		p.Quotas = []ilp.Quota{
			{Name: "outer", Jobs: outer, Limit: lim() + 3},
			{Name: "inner", Jobs: inner, Type: ts[0], Limit: lim()},
			{Name: "other", Jobs: other, Types: ts[1:], MinGPUs: rng.IntN(3), Limit: lim()},
			{Name: "single", Jobs: []int{rng.IntN(n)}, Limit: lim()},
			{Name: "empty", Limit: 0},
		}
		if rng.IntN(2) == 0 {
			p.Quotas = append(p.Quotas, ilp.Quota{Name: "all", AllJobs: true, Type: ts[len(ts)-1], MinGPUs: 2, Limit: lim()})
		}
		rng.Shuffle(len(p.Quotas), func(a, b int) { p.Quotas[a], p.Quotas[b] = p.Quotas[b], p.Quotas[a] })
		p.Quotas = p.Quotas[:2+rng.IntN(len(p.Quotas)-1)]
	case 6: // duplicate options: same type and count, other values; pins to any
		desc = "duplicates"
		ts := addTypes(2, 8)
		for i := 0; i < 8+rng.IntN(15); i++ {
			j := job(i)
			o := ilp.Option{Type: ts[rng.IntN(2)], GPUs: 1 + rng.IntN(3), Value: val()}
			for k := rng.IntN(4); k >= 0; k-- {
				j.Options = append(j.Options, o)
				if rng.IntN(2) == 0 {
					o.Value = val()
				}
			}
			if rng.IntN(12) == 0 {
				j.Pin = rng.IntN(len(j.Options)) // perhaps a dominated duplicate
			}
			p.Jobs = append(p.Jobs, j)
		}
	case 7: // GPU counts multiples of a large k (capacities near MaxGPUs)
		unit = []int{1000003, 1 << 40, ilp.MaxGPUs / 16}[rng.IntN(3)]
		desc = fmt.Sprintf("GPUs ×%d", unit)
		ts := addTypes(2+rng.IntN(2), 6)
		for t := range p.Capacity {
			p.Capacity[t] *= unit
		}
		for i := 0; i < 8+rng.IntN(15); i++ {
			j := job(i)
			for k := rng.IntN(4); k >= 0; k-- {
				j.Options = append(j.Options, ilp.Option{Type: ts[rng.IntN(len(ts))], GPUs: (1 + rng.IntN(3)) * unit, Value: val()})
			}
			p.Jobs = append(p.Jobs, j)
		}
		if rng.IntN(2) == 0 {
			p.Quotas = []ilp.Quota{{Name: "q", AllJobs: true, MinGPUs: 2 * unit, Limit: rng.IntN(5) * unit}}
		}
	case 8: // dense: three types of 8-16 GPUs, 25-40 jobs of 3-5 options, a quota
		desc = "dense"
		ts := addTypes(3, 16)
		for _, t := range ts {
			p.Capacity[t] = max(p.Capacity[t], 8)
		}
		n := 25 + rng.IntN(16)
		for i := 0; i < n; i++ {
			j := job(i)
			for k := 3 + rng.IntN(3); k > 0; k-- {
				j.Options = append(j.Options, ilp.Option{Type: ts[rng.IntN(3)], GPUs: 1 << rng.IntN(4), Value: val()})
			}
			p.Jobs = append(p.Jobs, j)
		}
		if rng.IntN(2) == 0 {
			p.Quotas = []ilp.Quota{{Name: "half", Jobs: rng.Perm(n)[:n/2], Limit: 4 + rng.IntN(12)}}
		}
	}
	p.Grid = grid
	return p, unit, fmt.Sprintf("%s, %d jobs, grid %g, %v", desc, len(p.Jobs), grid, p.Sense)
}

// valueScale is max(1, the largest |Value| or |Unallocated|).
func valueScale(p *ilp.Problem) float64 {
	s := 1.0
	for _, j := range p.Jobs {
		s = math.Max(s, math.Abs(j.Unallocated))
		for _, o := range j.Options {
			s = math.Max(s, math.Abs(o.Value))
		}
	}
	return s
}

// TestProbe7DPTwin: on every shape, with default settings, MaxNodes 1, a
// tolerance, an expired deadline and warm starts (the twin's optimum, or a
// random feasible assignment), every answer is feasible, reports its own
// objective, has a Bound the twin's optimum does not beat, is Optimal only
// within the grid step or tolerance of that optimum, is at least as good as
// a feasible warm start, and is the same when solved again. Pins that
// cannot hold (the twin finds no assignment) are ErrInfeasible.
func TestProbe7DPTwin(t *testing.T) {
	per := 15
	if *probe7Cases > 0 {
		per = *probe7Cases
	}
	if testing.Short() || raceEnabled {
		per = 25
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for shape := 0; shape < 9; shape++ {
		optimal, searched, infeasible, skipped := 0, 0, 0, 0
		var desc string
		n := per
		if shape == 8 && *probe7Cases == 0 {
			n = 4 // the twin's tables are largest there
		}
		for it := 0; it < n; it++ {
			var p *ilp.Problem
			var unit int
			p, unit, desc = shape7(rng, shape)
			name := fmt.Sprintf("shape %d it %d (%s)", shape, it, desc)
			if err := p.Validate(); err != nil {
				// the only invalid draws are pins that cannot hold
				require.ErrorIs(t, err, ilp.ErrInfeasible, name)
			}
			want, wantObj, ok, tooBig := dpTwin(p, unit)
			if tooBig {
				skipped++
				continue
			}
			if !ok {
				infeasible++
				sol, err := ilp.Solve(context.Background(), p, nil)
				require.ErrorIs(t, err, ilp.ErrInfeasible, name)
				assert.Equal(t, ilp.Infeasible, sol.Status, name)
				continue
			}
			require.NoError(t, p.Check(want), name)
			o, s := checkTwin7(t, p, wantObj, want, rng, name)
			optimal += o
			searched += s
		}
		t.Logf("shape %d (%s, ...): %d instances, %d settings optimal, %d searched past the root, %d infeasible pins, %d too large for the twin",
			shape, desc, n, optimal, searched, infeasible, skipped)
	}
}

// checkTwin7 solves p under each setting and checks the answers against
// the twin's optimum; it returns how many were Optimal and how many
// twinCompare7 returns p's value scale, the rounding noise a solve's sums
// may carry on it, and better(a, b, by): a better than b in p's sense by
// more than by.
func twinCompare7(p *ilp.Problem) (scale, noise float64, better func(a, b, by float64) bool) {
	scale = valueScale(p)
	noise = 4e-12 * scale * float64(len(p.Jobs)+1)
	better = func(a, b, by float64) bool {
		if p.Sense == ilp.Maximize {
			return a > b+by
		}
		return a < b-by
	}
	return scale, noise, better
}

// dropSome7 returns want with each free job dropped with probability 1/n
// (pins kept): a feasible warm start when want is feasible.
func dropSome7(p *ilp.Problem, want []int, rng *rand.Rand, n int) []int {
	w := slices.Clone(want)
	for i := range w {
		if p.Jobs[i].Pin < 0 && rng.IntN(n) == 0 {
			w[i] = -1
		}
	}
	return w
}

// explored more than one node.
func checkTwin7(t *testing.T, p *ilp.Problem, wantObj float64, want []int, rng *rand.Rand, name string) (optimal, searched int) {
	t.Helper()
	scale, noise, better := twinCompare7(p)
	// a random feasible warm start: the twin's optimum with some jobs
	// dropped (pins kept), or a random assignment when it holds
	random := dropSome7(p, want, rng, 2)
	if rng.IntN(2) == 0 {
		r := make([]int, len(p.Jobs))
		for i, j := range p.Jobs {
			r[i] = j.Pin
			if j.Pin < 0 {
				r[i] = rng.IntN(len(j.Options)+1) - 1
			}
		}
		if p.Check(r) == nil {
			random = r
		}
	}
	for _, c := range []struct {
		what    string
		s       *ilp.Settings
		expired bool
	}{
		{"defaults", nil, false},
		{"MaxNodes 1", &ilp.Settings{MaxNodes: 1}, false},
		{"MaxNodes 4", &ilp.Settings{MaxNodes: 4}, false},
		{"tolerance 0.05", &ilp.Settings{Tolerance: 0.05 * scale}, false},
		{"expired", nil, true},
		{"warm optimum, expired", &ilp.Settings{WarmStart: want}, true},
		{"warm random, expired", &ilp.Settings{WarmStart: random}, true},
		{"warm random", &ilp.Settings{WarmStart: random}, false},
	} {
		ctx := context.Background()
		cancel := func() {}
		if c.expired {
			ctx, cancel = context.WithDeadline(ctx, time.Unix(0, 0))
		}
		sol, err := ilp.Solve(ctx, p, c.s)
		cancel()
		n := fmt.Sprintf("%s, %s", name, c.what)
		require.NoError(t, err, n)
		require.NoError(t, p.Check(sol.Assignment), n)
		require.Equal(t, p.Objective(sol.Assignment), sol.Objective, n)
		require.False(t, math.IsNaN(sol.Bound), n)
		require.False(t, better(wantObj, sol.Bound, noise+1e-9*scale), "%s: %v bound %v excludes the optimum %v", n, sol.Status, sol.Bound, wantObj)
		if c.s != nil && c.s.WarmStart != nil {
			w := p.Objective(c.s.WarmStart)
			require.False(t, better(w, sol.Objective, noise), "%s: %v objective %v worse than the warm start's %v", n, sol.Status, sol.Objective, w)
		}
		if sol.Status == ilp.Optimal {
			optimal++
			allow := 1e-9 * scale
			switch {
			case p.Grid > 0:
				allow = p.Grid * (1 - 1e-9)
			case c.s != nil && c.s.Tolerance > 0:
				allow = c.s.Tolerance
			}
			require.False(t, better(wantObj, sol.Objective, allow+noise), "%s: optimal %v, twin %v (%v)", n, sol.Objective, wantObj, want)
		} else {
			require.Equal(t, ilp.Feasible, sol.Status, n)
			require.True(t, c.expired || c.s != nil && c.s.MaxNodes > 0, "%s: %v without a limit", n, sol.Status)
		}
		if sol.Nodes > 1 {
			searched++
		}
		if c.s != nil && c.s.MaxNodes > 0 {
			require.LessOrEqual(t, sol.Nodes, c.s.MaxNodes, "%s: nodes past MaxNodes", n)
		}
		if !c.expired {
			again, err := ilp.Solve(context.Background(), p, c.s)
			require.NoError(t, err, n)
			require.Equal(t, sol, again, "%s: not deterministic", n)
		}
	}
	return optimal, searched
}

// TestProbe7SteppedClock: the twin's checks on solves cut at every point:
// the solver's clock advances by a fixed step at every look (from 1 µs to
// 3 ms: a process descheduled between two looks), with deadlines already
// past or a little after the call. Every answer is feasible with a true
// bound and, given a feasible warm start, at least as good as it.
func TestProbe7SteppedClock(t *testing.T) {
	per := 12
	if *probe7Cases > 0 {
		per = *probe7Cases
	}
	if testing.Short() || raceEnabled {
		per = 3
	}
	rng := rand.New(rand.NewPCG(7, 8))
	steps := []time.Duration{time.Microsecond, 20 * time.Microsecond, 150 * time.Microsecond, 400 * time.Microsecond, 700 * time.Microsecond, 3 * time.Millisecond}
	cuts := 0
	for shape := 0; shape < 9; shape++ {
		for it := 0; it < per; it++ {
			p, unit, desc := shape7(rng, shape)
			want, wantObj, ok, tooBig := dpTwin(p, unit)
			if tooBig || !ok {
				continue
			}
			scale, noise, better := twinCompare7(p)
			warm := dropSome7(p, want, rng, 3)
			for _, step := range steps {
				for _, d := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond} {
					for _, s := range []*ilp.Settings{nil, {WarmStart: want}, {WarmStart: warm}} {
						sol, _, err := ilp.SteppedSolve(p, d, step, s)
						n := fmt.Sprintf("shape %d it %d (%s), step %v, deadline %v, settings %v", shape, it, desc, step, d, s)
						require.NoError(t, err, n)
						require.NoError(t, p.Check(sol.Assignment), n)
						require.Equal(t, p.Objective(sol.Assignment), sol.Objective, n)
						require.False(t, better(wantObj, sol.Bound, noise+1e-9*scale), "%s: %v bound %v excludes the optimum %v", n, sol.Status, sol.Bound, wantObj)
						if sol.Status == ilp.Optimal {
							allow := 1e-9 * scale
							if p.Grid > 0 {
								allow = p.Grid * (1 - 1e-9)
							}
							require.False(t, better(wantObj, sol.Objective, allow+noise), "%s: optimal %v, twin %v", n, sol.Objective, wantObj)
						} else {
							cuts++
						}
						if s != nil {
							w := p.Objective(s.WarmStart)
							require.False(t, better(w, sol.Objective, noise), "%s: %v objective %v (%v) worse than the warm start's %v (%v)", n, sol.Status, sol.Objective, sol.Assignment, w, s.WarmStart)
						}
					}
				}
			}
		}
	}
	t.Logf("%d solves cut short", cuts)
}
