package shockwave

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomProblem draws a small planning problem: some jobs too large for the
// cluster, some already able to finish within the horizon, some with
// fairness bounds that force rounds.
func randomProblem(rng *rand.Rand, J, R int) *Problem {
	p := &Problem{Rounds: R, GPUs: 2 + rng.IntN(7), Round: 60, K: []float64{0, 1e-9, 1e-4}[rng.IntN(3)]}
	for range J {
		total := 100 + rng.Float64()*1000
		j := PlanJob{GPUs: 1 + rng.IntN(p.GPUs+1), Total: total, Cur: total * rng.Float64() * rng.Float64(),
			IterTime: 0.05 + rng.Float64()*0.5, Weight: 1, MaxRemaining: math.Inf(1)}
		if rng.IntN(3) == 0 {
			j.Weight = math.Pow(1+rng.Float64(), 12)
		}
		if rng.IntN(3) == 0 {
			j.MaxRemaining = j.Remaining() - p.Round*float64(rng.IntN(R+1)) + rng.Float64()*30
		}
		p.Jobs = append(p.Jobs, j)
	}
	return p
}

// bruteForce enumerates every s[j,r] of the MILP.
func bruteForce(p *Problem) (best float64, feasible bool) {
	J, R := len(p.Jobs), p.Rounds
	best = math.Inf(-1)
	s := make([][]bool, J)
	for j := range s {
		s[j] = make([]bool, R)
	}
	for mask := 0; mask < 1<<(J*R); mask++ {
		for b := 0; b < J*R; b++ {
			s[b/R][b%R] = mask&(1<<b) != 0
		}
		v, ok := p.Objective(s)
		if ok && !math.IsInf(v, -1) {
			feasible = true
			best = math.Max(best, v)
		}
	}
	return best, feasible
}

// checkPlan asserts that a plan's rounds realise its counts within the
// capacity and that its objective is the MILP's for those rounds.
func checkPlan(t *testing.T, p *Problem, plan *Plan) {
	t.Helper()
	require.Len(t, plan.Schedule, p.Rounds)
	s := make([][]bool, len(p.Jobs))
	for j := range s {
		s[j] = make([]bool, p.Rounds)
	}
	for r, jobs := range plan.Schedule {
		load := 0
		for _, j := range jobs {
			require.False(t, s[j][r], "job %d twice in round %d", j, r)
			s[j][r] = true
			load += p.Jobs[j].GPUs
		}
		require.LessOrEqual(t, load, p.GPUs, "round %d over capacity", r)
	}
	for j := range p.Jobs {
		n := 0
		for _, on := range s[j] {
			if on {
				n++
			}
		}
		require.Equal(t, plan.N[j], n, "job %d: rounds scheduled vs planned", j)
	}
	v, ok := p.Objective(s)
	require.True(t, ok, "plan breaks a fairness bound")
	assert.InDelta(t, plan.Objective, v, 1e-12)
}

// TestSolveMatchesBruteForce checks the planner against an exhaustive
// solve of the MILP over every binary s[j,r] on small instances.
func TestSolveMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	infeasible := 0
	for it := 0; it < 400; it++ {
		J := 1 + rng.IntN(4)
		R := 1 + rng.IntN(5)
		for J*R > 12 {
			R--
		}
		p := randomProblem(rng, J, R)
		want, ok := bruteForce(p)
		plan, err := Solve(ctx, p, &PlanOptions{Gap: -1})
		if !ok {
			infeasible++
			require.ErrorIs(t, err, ErrInfeasible, "instance %d", it)
			continue
		}
		require.NoError(t, err, "instance %d", it)
		require.True(t, plan.Optimal)
		assert.InDelta(t, want, plan.Objective, 1e-12, "instance %d: %+v", it, p)
		checkPlan(t, p, plan)
		// The re-ranked rounds keep the same counts.
		prio := make([]float64, J)
		for j := range prio {
			prio[j] = rng.Float64()
		}
		plan.Schedule = newPacker(p, R).schedule(plan.N, prio, 0)
		checkPlan(t, p, plan)
	}
	assert.Greater(t, infeasible, 10, "some instances exercise the fairness fallback")
}

// TestSolveGapAndLimit: the default gap stays within 1e-3 of the exact
// optimum, and a node limit returns a plan marked not optimal with a bound.
func TestSolveGapAndLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 50; it++ {
		p := randomProblem(rng, 4, 3)
		for j := range p.Jobs {
			p.Jobs[j].MaxRemaining = math.Inf(1)
		}
		want, _ := bruteForce(p)
		plan, err := Solve(context.Background(), p, nil)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, plan.Objective, want-1e-3*math.Abs(want)-1e-15)
		assert.GreaterOrEqual(t, plan.Bound, want-1e-15)
		checkPlan(t, p, plan)
	}
	p := randomProblem(rand.New(rand.NewPCG(5, 6)), 40, 5)
	for j := range p.Jobs {
		p.Jobs[j].MaxRemaining = math.Inf(1)
	}
	p.GPUs = 16
	plan, err := Solve(context.Background(), p, &PlanOptions{Gap: -1, NodeLimit: 10})
	require.NoError(t, err)
	assert.False(t, plan.Optimal)
	assert.GreaterOrEqual(t, plan.Bound, plan.Objective)
	checkPlan(t, p, plan)
}

func TestValidate(t *testing.T) {
	good := func() *Problem {
		return &Problem{Rounds: 5, GPUs: 8, Round: 60, Jobs: []PlanJob{{GPUs: 2, Total: 10, IterTime: 1, Weight: 1, MaxRemaining: math.Inf(1)}}}
	}
	for name, mod := range map[string]func(*Problem){
		"Rounds":   func(p *Problem) { p.Rounds = 0 },
		"Round":    func(p *Problem) { p.Round = math.NaN() },
		"K":        func(p *Problem) { p.K = -1 },
		"GPUs":     func(p *Problem) { p.Jobs[0].GPUs = 0 },
		"Total":    func(p *Problem) { p.Jobs[0].Total = 0 },
		"Cur":      func(p *Problem) { p.Jobs[0].Cur = 11 },
		"IterTime": func(p *Problem) { p.Jobs[0].IterTime = math.Inf(1) },
		"Weight":   func(p *Problem) { p.Jobs[0].Weight = math.NaN() },
	} {
		p := good()
		mod(p)
		_, err := Solve(context.Background(), p, nil)
		require.ErrorIs(t, err, ErrInvalidPlan, name)
		assert.Contains(t, err.Error(), name)
	}
	_, err := Solve(context.Background(), good(), nil)
	require.NoError(t, err)
}

// FuzzSolve: any problem either fails validation or yields a plan within
// capacity whose rounds realise its counts.
func FuzzSolve(f *testing.F) {
	f.Add([]byte{3, 5, 8, 1, 200, 7, 2, 100, 30, 9, 9, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 3 {
			return
		}
		p := &Problem{Rounds: 1 + int(b[0])%5, GPUs: int(b[1]) % 17, Round: 60, K: 1e-9}
		for i := 2; i+3 < len(b) && len(p.Jobs) < 12; i += 4 {
			total := 1 + float64(b[i+1])*10
			p.Jobs = append(p.Jobs, PlanJob{GPUs: 1 + int(b[i])%16, Total: total, Cur: total * float64(b[i+2]) / 256,
				IterTime: 0.01 + float64(b[i+3])/64, Weight: 1, MaxRemaining: math.Inf(1)})
		}
		plan, err := Solve(context.Background(), p, &PlanOptions{NodeLimit: 5000})
		require.NoError(t, err)
		checkPlan(t, p, plan)
	})
}

// bruteRank enumerates every s[j,r] of the re-ranking MILP.
func bruteRank(p *Problem, n []int, prio []float64) float64 {
	J, R := len(p.Jobs), p.Rounds
	best := math.Inf(1)
	for mask := 0; mask < 1<<(J*R); mask++ {
		sched := make([][]int, R)
		for b := 0; b < J*R; b++ {
			if mask&(1<<b) != 0 {
				sched[b%R] = append(sched[b%R], b/R)
			}
		}
		if c, ok := RankCost(p, n, prio, sched); ok {
			best = math.Min(best, c)
		}
	}
	return best
}

// TestRankMatchesBruteForce checks the re-ranking MILP's solver against
// every binary s[j,r] on small instances whose counts come from a plan.
func TestRankMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	differs := 0
	for it := 0; it < 300; it++ {
		J := 2 + rng.IntN(3)
		R := 2 + rng.IntN(4)
		for J*R > 14 {
			R--
		}
		p := randomProblem(rng, J, R)
		for j := range p.Jobs {
			p.Jobs[j].MaxRemaining = math.Inf(1)
		}
		plan, err := Solve(ctx, p, &PlanOptions{Gap: -1})
		require.NoError(t, err)
		prio := make([]float64, J)
		for j := range prio {
			prio[j] = []float64{1, 1, math.Pow(1+rng.Float64(), 12), rng.Float64() * 10}[rng.IntN(4)]
		}
		want := bruteRank(p, plan.N, prio)
		rk, err := Rank(ctx, p, plan.N, prio, &PlanOptions{Gap: -1})
		require.NoError(t, err)
		require.True(t, rk.Optimal)
		c, ok := RankCost(p, plan.N, prio, rk.Schedule)
		require.True(t, ok, "instance %d: ranking breaks a constraint", it)
		assert.InDelta(t, rk.Cost, c, 1e-9)
		assert.InDelta(t, want, rk.Cost, 1e-9*math.Max(1, want), "instance %d", it)
		g, _ := RankCost(p, plan.N, prio, newPacker(p, R).schedule(plan.N, prio, 0))
		if g > want+1e-9*math.Max(1, want) {
			differs++
		}
	}
	t.Logf("the priority-order greedy is above the optimum on %d of 300", differs)
	assert.Positive(t, differs, "some instances need more than the greedy")
}
