package ilp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// bigShape7 builds the large shapes of the deadline probe (see
// TestProbe7DeadlineShapes).
func bigShape7(name string) *ilp.Problem {
	rng := rand.New(rand.NewPCG(7, uint64(len(name))))
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{}}
	job := func(i int) ilp.Job { return ilp.Job{ID: fmt.Sprint("j", i), Pin: -1} }
	val := func() float64 { return math.Round(rng.Float64()*300) / 100 }
	switch name {
	case "one type, 10000 jobs of one option", "one type, 40000 jobs of one option":
		n := 10000
		if name == "one type, 40000 jobs of one option" {
			n = 40000
		}
		p.Capacity["a"] = 3 * n / 2
		for i := range n {
			j := job(i)
			j.Options = []ilp.Option{{Type: "a", GPUs: 1 + rng.IntN(4), Value: val()}}
			p.Jobs = append(p.Jobs, j)
		}
	case "5000 identical jobs":
		p.Capacity = map[string]int{"a": 3001, "b": 2999, "c": 1503}
		var opts []ilp.Option
		for _, t := range []string{"a", "b", "c"} {
			for g := 1; g <= 16; g *= 2 {
				opts = append(opts, ilp.Option{Type: t, GPUs: g, Value: math.Sqrt(float64(g)) * (1 + float64(len(t)))})
			}
		}
		for i := range 5000 {
			j := job(i)
			j.Unallocated = -1
			j.Options = opts
			p.Jobs = append(p.Jobs, j)
		}
	case "60 types, 300 jobs":
		for k := range 60 {
			p.Capacity[fmt.Sprint("t", k)] = 3 + rng.IntN(6)
		}
		for i := range 300 {
			j := job(i)
			g := 1 << rng.IntN(3)
			for k := range 60 {
				j.Options = append(j.Options, ilp.Option{Type: fmt.Sprint("t", k), GPUs: g, Value: val()})
			}
			p.Jobs = append(p.Jobs, j)
		}
	case "5000 jobs, a quota per job":
		p.Capacity = map[string]int{"a": 4000, "b": 4000}
		for i := range 5000 {
			j := job(i)
			j.Options = []ilp.Option{{Type: "a", GPUs: 1 + i%4, Value: val()}, {Type: "b", GPUs: 2, Value: val()}}
			p.Jobs = append(p.Jobs, j)
			p.Quotas = append(p.Quotas, ilp.Quota{Name: fmt.Sprint("q", i), Jobs: []int{i}, Type: "a", Limit: i % 3})
		}
	case "3000 jobs, 100 nested quotas", "3000 jobs, 30 nested quotas":
		levels := 100
		if name == "3000 jobs, 30 nested quotas" {
			levels = 30
		}
		p.Capacity = map[string]int{"a": 3000, "b": 3000}
		for i := range 3000 {
			j := job(i)
			j.Options = []ilp.Option{{Type: "a", GPUs: 1 + i%4, Value: val()}, {Type: "b", GPUs: 1 + i%2, Value: val()}}
			p.Jobs = append(p.Jobs, j)
		}
		for k := 1; k <= levels; k++ {
			q := ilp.Quota{Name: fmt.Sprint("n", k), Limit: 20 * k}
			for i := 0; i < 3000*k/levels; i++ {
				q.Jobs = append(q.Jobs, i)
			}
			p.Quotas = append(p.Quotas, q)
		}
	case "5000 jobs, values 1e-300..1e275":
		p.Capacity = map[string]int{"a": 2000, "b": 2000, "c": 2000}
		for i := range 5000 {
			j := job(i)
			for k := range 4 {
				v := rng.Float64() * 1e275 * math.Pow(10, -float64(rng.IntN(575)))
				j.Options = append(j.Options, ilp.Option{Type: []string{"a", "b", "c"}[k%3], GPUs: 1 << rng.IntN(4), Value: v})
			}
			p.Jobs = append(p.Jobs, j)
		}
	case "4000 jobs of 50 duplicate options":
		p.Capacity = map[string]int{"a": 3000, "b": 3000}
		for i := range 4000 {
			j := job(i)
			o := ilp.Option{Type: []string{"a", "b"}[i%2], GPUs: 1 + i%3, Value: val()}
			for range 50 {
				j.Options = append(j.Options, o)
			}
			p.Jobs = append(p.Jobs, j)
		}
	case "3000 jobs, counts ×2^40":
		p.Capacity = map[string]int{"a": 300 << 40, "b": 300 << 40, "c": 200 << 40}
		for i := range 3000 {
			j := job(i)
			for k := range 3 {
				j.Options = append(j.Options, ilp.Option{Type: []string{"a", "b", "c"}[k], GPUs: (1 + rng.IntN(8)) << 40, Value: val()})
			}
			p.Jobs = append(p.Jobs, j)
		}
	default:
		panic(name)
	}
	return p
}

// TestProbe7DeadlineShapes: the deadline contract on the solving thread's
// CPU clock (the least CPU past D of five solves within Slack(D), as
// TestProbe5DeadlineShapes), with deadlines of 0, 1 µs, 1 ms and 5 ms, on
// large shapes no test had: a plain knapsack of 10,000 jobs, 5,000
// identical jobs, 60 types, a quota per job, 100 nested quotas, values
// from 1e-300 to 1e275, 50 duplicate options per job, counts of 2^40;
// each cold and warm-started from its own previous answer (a round loop).
// -probe7.known adds a shape known to break the contract.
func TestProbe7DeadlineShapes(t *testing.T) {
	skipCPUSolves(t)
	names := []string{
		"one type, 10000 jobs of one option", "5000 identical jobs", "60 types, 300 jobs",
		"5000 jobs, a quota per job", "3000 jobs, 30 nested quotas", "5000 jobs, values 1e-300..1e275",
		"4000 jobs of 50 duplicate options", "3000 jobs, counts ×2^40",
	}
	if *probe7Known {
		// a known limit: 151,500 quota-list entries (a few MB of input).
		// Past an expired deadline, validating the quotas (all read, as
		// a fallback plan needs them) ends 1.2-1.5 ms after D (its share
		// is 0.33 ms) and the admission's per-job quota lists
		// (jobQuotaLists: scattered writes, ten times a plain read of
		// the lists) take 1.6-3.5 ms more: 2.6-5 ms past D in all
		names = append(names, "3000 jobs, 100 nested quotas")
		// and 40,000 jobs: validation's per-job checks (IDs, Unallocated,
		// Pin) and the admission's setup, about 60 ns a job, end 2.5 ms
		// past an expired deadline (20,000 jobs: 1.1 ms)
		names = append(names, "one type, 40000 jobs of one option")
	}
	for _, name := range names {
		p := bigShape7(name)
		require.NoError(t, p.Validate(), name)
		var warm []int
		for _, d := range []time.Duration{0, time.Microsecond, time.Millisecond, 5 * time.Millisecond} {
			for _, warmed := range []bool{false, true} {
				var s *ilp.Settings
				if warmed {
					s = &ilp.Settings{WarmStart: warm}
				}
				least := time.Duration(math.MaxInt64)
				var last ilp.Solution
				for range 5 {
					over, _, sol, err := ilp.TraceSolve(p, d, s)
					require.NoError(t, err, name)
					require.NoError(t, p.Check(sol.Assignment), name)
					require.False(t, sol.Bound < sol.Objective-1e-9*math.Abs(sol.Objective), "%s: bound %v below objective %v", name, sol.Bound, sol.Objective)
					if warmed && warm != nil {
						require.GreaterOrEqual(t, sol.Objective, p.Objective(warm), "%s, %v: worse than the warm start", name, d)
					}
					least = min(least, over)
					last = sol
				}
				if !warmed {
					warm = last.Assignment
				}
				if testing.Verbose() {
					t.Logf("%s, D %v, warm %v: least CPU past D %v, %v objective %.6g bound %.6g", name, d, warmed, least, last.Status, last.Objective, last.Bound)
				}
				assert.LessOrEqual(t, least, ilp.Slack(d), "%s, D %v, warm %v: CPU past the deadline", name, d, warmed)
			}
		}
	}
}

// TestProbe7RoundLoop: a host's round loop under a 5 ms deadline, each
// round warm-started from the previous answer on the same problem, never
// goes back (a feasible warm start is a floor), and keeps within the
// contract on the solving thread's CPU clock. It logs how many jobs each
// round runs: out of time, each round's admission starts only the first
// few dozen jobs it considers (see the report of probe-ilp7).
func TestProbe7RoundLoop(t *testing.T) {
	skipCPUSolves(t)
	for _, name := range []string{"5000 identical jobs", "5000 jobs, a quota per job", "3000 jobs, counts ×2^40"} {
		p := bigShape7(name)
		var warm []int
		prev := math.Inf(-1)
		var runs []int
		for round := range 8 {
			over, _, sol, err := ilp.TraceSolve(p, 5*time.Millisecond, &ilp.Settings{WarmStart: warm})
			require.NoError(t, err, name)
			require.NoError(t, p.Check(sol.Assignment), name)
			require.GreaterOrEqual(t, sol.Objective, prev, "%s, round %d: worse than the warm start", name, round)
			if !raceEnabled && over > 2*ilp.Slack(5*time.Millisecond) {
				t.Errorf("%s, round %d: %v of CPU past D", name, round, over)
			}
			prev, warm = sol.Objective, sol.Assignment
			n := 0
			for _, k := range sol.Assignment {
				if k >= 0 {
					n++
				}
			}
			runs = append(runs, n)
		}
		t.Logf("%s: jobs running after each round %v (objective %.6g)", name, runs, prev)
	}
}
