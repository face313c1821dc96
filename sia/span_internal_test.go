package sia

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/ilp"
)

// spanEval is a concave goodput with a per-node penalty (as the external
// tests' shapeModel), so that node counts matter.
type spanEval struct {
	speed       float64
	gain, cross float64
}

func (m spanEval) Model(string) (goodput.Model, bootstrap.Source) {
	return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Measured
}

func (m spanEval) Evaluate(_ string, nodes, replicas int) (goodput.Choice, bool) {
	if nodes < 1 || replicas < 1 {
		return goodput.Choice{}, false
	}
	v := m.speed * math.Pow(float64(replicas), m.gain) * math.Pow(m.cross, float64(nodes-1))
	return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: replicas}, true
}

// checkEvaluatedShape asserts that every placed allocation of the plan has
// the shape of its entry: GPUs, nodes, and per node size the part's nodes
// and GPUs (a spanning entry) or its pool (NodeGPUs).
func checkEvaluatedShape(t *testing.T, snap *Snapshot, p *Plan, what string) {
	t.Helper()
	size := map[string]int{}
	for _, n := range snap.Nodes {
		size[n.ID] = n.GPUs
	}
	for i, d := range p.Decisions {
		if !d.Allocation.Running() {
			continue
		}
		e := p.entry(i)
		require.NotNil(t, e, what)
		c := e.Config
		require.Equal(t, c.GPUs, len(d.Allocation.Placement), "%s job %s", what, d.Job)
		require.Equal(t, c.Nodes, d.Allocation.Nodes, "%s job %s %v", what, d.Job, c)
		nodes, gpus := map[int]map[string]bool{}, map[int]int{}
		for _, g := range d.Allocation.Placement {
			r := size[g.Node]
			if nodes[r] == nil {
				nodes[r] = map[string]bool{}
			}
			nodes[r][g.Node] = true
			gpus[r]++
		}
		if !c.Spanning() {
			if c.NodeGPUs > 0 {
				require.Len(t, gpus, 1, "%s job %s off its pool", what, d.Job)
				require.Contains(t, gpus, c.NodeGPUs, "%s job %s", what, d.Job)
			}
			continue
		}
		parts := c.Parts()
		require.Len(t, gpus, len(parts), "%s job %s %v", what, d.Job, c)
		for _, pt := range parts {
			assert.Len(t, nodes[pt.NodeGPUs], pt.Nodes, "%s job %s part %+v", what, d.Job, pt)
			assert.Equal(t, pt.GPUs, gpus[pt.NodeGPUs], "%s job %s part %+v", what, d.Job, pt)
		}
	}
}

// TestSpanBruteForceProperty plays random rounds on small clusters whose
// types mix two or three node sizes, with rigid jobs of any count up to the
// type, adaptive jobs whose MinGPUs may exceed every pool, and jobs that
// become non-preemptible (pinned, also on nodes of several sizes), feeding
// each plan back: the objective equals the brute-force optimum over every
// entry (spanning ones included; over the uncharged entries when the fill
// step changed the plan) whenever the round is Optimal, every
// allocation is placed in its evaluated shape, and without pinned jobs the
// solver's allocation is always placed.
func TestSpanBruteForceProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 28))
	s, err := New(&Options{NoScaleUpCap: true})
	require.NoError(t, err)
	spanning, rounds, optimal := 0, 0, 0
	for iter := 0; iter < 150; iter++ {
		var nodes []Node
		sizes := []int{8, 6, 4, 3, 5, 2, 12, 10}
		rng.Shuffle(len(sizes), func(a, b int) { sizes[a], sizes[b] = sizes[b], sizes[a] })
		for p := 0; p < 2+rng.IntN(2); p++ {
			for k := 0; k < 1+rng.IntN(2); k++ {
				nodes = append(nodes, Node{ID: fmt.Sprintf("x%d_%d", p, k), Type: "x", GPUs: sizes[p]})
			}
		}
		if rng.IntN(3) == 0 {
			nodes = append(nodes, Node{ID: "y0", Type: "y", GPUs: 4})
		}
		capacity := 0
		for _, n := range nodes {
			if n.Type == "x" {
				capacity += n.GPUs
			}
		}
		var jobs []Job
		for k := 0; k < 1+rng.IntN(4); k++ {
			j := Job{ID: fmt.Sprintf("j%d", k), Submitted: shapesT0(), Models: spanEval{speed: 0.5 + rng.Float64(), gain: 0.5 + 0.5*rng.Float64(), cross: 0.7 + 0.3*rng.Float64()}}
			switch rng.IntN(3) {
			case 0:
				j.Kind, j.GPUs = Rigid, 1+rng.IntN(capacity)
			case 1:
				j.MinGPUs = 1 + rng.IntN(capacity)
				if rng.IntN(2) == 0 {
					j.MaxGPUs = j.MinGPUs + rng.IntN(capacity-j.MinGPUs+1)
				}
			}
			jobs = append(jobs, j)
		}
		snap := Snapshot{Nodes: nodes, Jobs: jobs}
		for r := 0; r < 3; r++ {
			what := fmt.Sprintf("iter %d round %d (%v)", iter, r, nodes)
			snap.Now = shapesT0().Add(time.Duration(r+1) * time.Hour)
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err, what)
			checkEvaluatedShape(t, &snap, &plan, what)
			pinned := false
			for i := range snap.Jobs {
				pinned = pinned || (snap.Jobs[i].NonPreemptible && snap.Jobs[i].State.Current.Running())
			}
			l := planLists(&plan)
			if !pinned {
				require.Empty(t, l.unplaced, what)
			}
			if plan.Status == StatusOptimal {
				optimal++
				// a plan the fill step changed is optimal among the
				// placeable plans: its optimum is the uncharged one's
				m := plan.matrix
				if len(plan.filled) > 0 {
					m = uncharged(m)
				}
				best, _ := bruteForce(m)
				require.InDelta(t, best, plan.Objective, 1e-9*math.Max(1, math.Abs(best)), what)
			}
			rounds++
			for i, d := range plan.Decisions {
				if e := plan.entry(i); e != nil && e.Config.Spanning() {
					spanning++
				}
				snap.Jobs[i].State.Current = d.Allocation
				if d.Allocation.Running() && rng.IntN(4) == 0 {
					snap.Jobs[i].NonPreemptible = true
				}
			}
		}
	}
	t.Logf("%d rounds (%d optimal), %d spanning allocations", rounds, optimal, spanning)
	assert.Positive(t, spanning)
	assert.Greater(t, optimal, rounds/2)
}

func shapesT0() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// spanCrowd is a type of one 8-GPU and one 6-GPU node and n rigid jobs of
// 14 GPUs, each of which has one spanning entry only.
func spanCrowd(n int) Snapshot {
	snap := Snapshot{Now: shapesT0().Add(time.Hour), Nodes: []Node{{ID: "e0", Type: "x", GPUs: 8}, {ID: "s0", Type: "x", GPUs: 6}}}
	for k := 0; k < n; k++ {
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("r%d", k), Kind: Rigid, GPUs: 14, Submitted: shapesT0().Add(time.Duration(k) * time.Minute),
			Models: spanEval{speed: 1 + float64(k)/10, gain: 1, cross: 0.9}})
	}
	return snap
}

// TestSolveSpansBudget: with more jobs with spanning entries than
// maxSpanBranches enumerates, the answer is Feasible (never Optimal), its
// allocation valid, and its bound a true bound on the brute-force optimum;
// within the budget it is Optimal and equals the brute force.
func TestSolveSpansBudget(t *testing.T) {
	for _, n := range []int{3, 6, 7, 9} {
		snap := spanCrowd(n)
		m, err := newMatrix(&snap, nil)
		require.NoError(t, err)
		sol, err := solveMatrix(context.Background(), m, nil)
		require.NoError(t, err)
		best, _ := bruteForce(m)
		allocated := 0
		for _, c := range sol.Choice {
			if c >= 0 {
				allocated++
			}
		}
		assert.LessOrEqual(t, allocated, 1, "n=%d: one 14-GPU job fits", n)
		complete := 1<<n <= maxSpanBranches
		if complete {
			assert.Equal(t, StatusOptimal, sol.Status, "n=%d", n)
			assert.InDelta(t, best, sol.Objective, 1e-9*math.Abs(best), "n=%d", n)
		} else {
			assert.Equal(t, StatusFeasible, sol.Status, "n=%d: enumeration cut short", n)
		}
		if m.Sense == 0 { // Minimize
			assert.LessOrEqual(t, sol.Bound, best+1e-9, "n=%d", n)
			assert.GreaterOrEqual(t, sol.Objective, best-1e-9, "n=%d", n)
		} else {
			assert.GreaterOrEqual(t, sol.Bound, best-1e-9, "n=%d", n)
			assert.LessOrEqual(t, sol.Objective, best+1e-9, "n=%d", n)
		}
	}
}

// TestSolveSpansDeadline: an expired deadline still gives a valid plan with
// spanning entries, and never an Optimal status claimed by a greedy answer
// that is not proven.
func TestSolveSpansDeadline(t *testing.T) {
	snap := spanCrowd(4)
	m, err := newMatrix(&snap, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	sol, err := solveMatrix(ctx, m, nil)
	require.NoError(t, err)
	require.Len(t, sol.Choice, 4)
	assert.Equal(t, StatusFeasible, sol.Status, "an expired deadline proves nothing")
	best, _ := bruteForce(m)
	if m.Sense == 0 { // Minimize
		assert.LessOrEqual(t, sol.Bound, best+1e-9)
		assert.GreaterOrEqual(t, sol.Objective, best-1e-9)
	} else {
		assert.GreaterOrEqual(t, sol.Bound, best-1e-9)
		assert.LessOrEqual(t, sol.Objective, best+1e-9)
	}
	n := 0
	for _, c := range sol.Choice {
		if c >= 0 {
			n++
		}
	}
	assert.LessOrEqual(t, n, 1)
}

// BenchmarkRoundSpans: a round on a type of 16 8-GPU and 16 6-GPU nodes
// (224 GPUs) with 100 adaptive jobs and k rigid jobs of 140 GPUs (above
// the 128-GPU pool), each with one spanning entry: the enumeration solves
// 2^k branches.
func BenchmarkRoundSpans(b *testing.B) {
	for _, k := range []int{0, 1, 3, 5} {
		b.Run(fmt.Sprintf("spanning=%d", k), func(b *testing.B) {
			var nodes []Node
			for n := 0; n < 16; n++ {
				nodes = append(nodes, Node{ID: fmt.Sprintf("e%d", n), Type: "x", GPUs: 8}, Node{ID: fmt.Sprintf("s%d", n), Type: "x", GPUs: 6})
			}
			snap := Snapshot{Now: shapesT0().Add(time.Hour), Nodes: nodes}
			rng := rand.New(rand.NewPCG(1, 2))
			for j := 0; j < 100; j++ {
				snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("a%d", j), Submitted: shapesT0(), MaxGPUs: 32,
					Models: spanEval{speed: 0.5 + rng.Float64(), gain: 0.5 + 0.4*rng.Float64(), cross: 0.8 + 0.2*rng.Float64()}})
			}
			for j := 0; j < k; j++ {
				snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("r%d", j), Kind: Rigid, GPUs: 140, Submitted: shapesT0(),
					Models: spanEval{speed: 1, gain: 1, cross: 0.99}})
			}
			s, err := New(&Options{NoScaleUpCap: true})
			require.NoError(b, err)
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				p, err := s.Round(context.Background(), snap)
				require.NoError(b, err)
				if it == 0 {
					b.ReportMetric(float64(p.Status), "status")
				}
			}
		})
	}
}

// TestSpanPinnedRowOffersNoSpan: a job pinned to a one-pool entry is never
// given one of its spanning entries by the enumeration.
func TestSpanPinnedRowOffersNoSpan(t *testing.T) {
	snap := Snapshot{Now: shapesT0().Add(time.Hour), Nodes: []Node{{ID: "e0", Type: "x", GPUs: 8}, {ID: "s0", Type: "x", GPUs: 6}},
		Jobs: []Job{{ID: "j", MinGPUs: 1, Submitted: shapesT0(), Models: spanEval{speed: 1, gain: 1, cross: 1}, NonPreemptible: true,
			State: JobState{Current: Allocation{Type: "x", Nodes: 1, GPUs: 2, Placement: []GPU{{Node: "e0", Index: 0}, {Node: "e0", Index: 1}}}}}}}
	m, err := newMatrix(&snap, &Options{NoScaleUpCap: true})
	require.NoError(t, err)
	// give the pinned row a spanning entry worth far more than its pin
	row := &m.Rows[0]
	require.GreaterOrEqual(t, row.Pin, 0)
	row.Entries = append(row.Entries, matrixEntry{Config: m.Rows[0].Entries[row.Pin].Config, Value: 1e6, Restart: 1})
	e := &row.Entries[len(row.Entries)-1]
	e.Config.Span, e.Config.NodeGPUs, e.Config.Nodes, e.Config.GPUs, e.Charge = "8x1:8+6x1:6", 0, 2, 14, 14
	if m.Sense == 0 {
		e.Value = 1e-6
	}
	sol, err := solveMatrix(context.Background(), m, nil)
	require.NoError(t, err)
	assert.Equal(t, row.Pin, sol.Choice[0])
}

// TestSpanWarmBranchFirst: the enumeration solves every branch once, the
// warm branch first (branchAt is a permutation starting at it), and the
// warm branch fixes each enumerated job on its current spanning entry (none
// for a job without one; its pin for a pinned job), whatever the jobs'
// row order.
func TestSpanWarmBranchFirst(t *testing.T) {
	p := &ilp.Problem{Jobs: make([]ilp.Job, 4)}
	spans := []spanOpt{
		{pos: 0, entry: 0}, {pos: 0, entry: 1}, // no current
		{pos: 1, entry: 0}, {pos: 1, entry: 1, current: true}, {pos: 1, entry: 2},
		{pos: 2, entry: 3, pinned: true},
		{pos: 3, entry: 0, current: true},
	}
	e := newSpanEnum(p, spans)
	require.Equal(t, 3*4*1*2, e.branches)
	require.Len(t, e.enum, 4)
	assert.Equal(t, 1, e.enum[0].pos, "jobs running on a span are enumerated first")
	assert.Equal(t, 3, e.enum[1].pos)

	first := e.warmBranch()
	seen := map[int]bool{}
	for k := 0; k < e.branches; k++ {
		b := branchAt(k, first)
		require.False(t, seen[b], "branch %d solved twice", b)
		require.True(t, b >= 0 && b < e.branches)
		seen[b] = true
	}
	assert.Equal(t, first, branchAt(0, first))

	fixed := make([]*spanOpt, len(e.enum))
	e.branch(first, fixed)
	got := map[int]int{}
	for _, s := range fixed {
		if s != nil {
			got[s.pos] = s.entry
		}
	}
	assert.Equal(t, map[int]int{1: 1, 3: 0, 2: 3}, got)
}
