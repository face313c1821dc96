package sia

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// fillModel is a concave goodput model on type "g": r^gain·cross^(nodes−1).
type fillModel struct{ gain, cross float64 }

func (m fillModel) Model(t string) (goodput.Model, bootstrap.Source) {
	if t != "g" {
		return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Excluded
	}
	return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Measured
}

func (m fillModel) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	if t != "g" || nodes < 1 || replicas < 1 {
		return goodput.Choice{}, false
	}
	v := math.Pow(float64(replicas), m.gain) * math.Pow(m.cross, float64(nodes-1))
	return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: replicas}, true
}

var fillT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func fillGPUs(node string, from, n int) []GPU {
	gs := make([]GPU, n)
	for k := range gs {
		gs[k] = GPU{Node: node, Index: from + k}
	}
	return gs
}

// fillStranded is the snapshot of TestProbeChargeStrandsGPUs: a rigid 5 on
// one of two 15-GPU nodes, a rigid 15 on the other, a job waiting.
func fillStranded() Snapshot {
	m := fillModel{gain: 0.9, cross: 0.9}
	return Snapshot{Now: fillT0, Nodes: []Node{{ID: "n0", Type: "g", GPUs: 15}, {ID: "n1", Type: "g", GPUs: 15}}, Jobs: []Job{
		{ID: "rigid", Kind: Rigid, GPUs: 5, Models: m, State: JobState{Current: Allocation{Type: "g", Nodes: 1, GPUs: 5, Placement: fillGPUs("n0", 0, 5)}}},
		{ID: "whole", Kind: Rigid, GPUs: 15, Models: m, State: JobState{Current: Allocation{Type: "g", Nodes: 1, GPUs: 15, Placement: fillGPUs("n1", 0, 15)}}},
		{ID: "small", Models: m},
	}}
}

// TestFillOutOfTime: a round out of time (its clock an hour late, past
// placement's end, or its ctx cancelled) does no fill: the waiting job
// keeps waiting; with time, the same snapshot fills it.
func TestFillOutOfTime(t *testing.T) {
	s, err := New(nil)
	require.NoError(t, err)
	snap := fillStranded()
	s.noLean = true // the standard path's fill; the lean round's is below
	p := roundOutOfTime(t, s, snap)
	assert.Empty(t, p.filled)
	assert.Equal(t, Queue, p.Decisions[2].Action)
	// The lean round (lean.go) starts the waiting job on the idle GPUs
	// by the fill step, sized by the cheap rows it built.
	s.noLean = false
	p = roundOutOfTime(t, s, snap)
	require.True(t, p.lean)
	assert.Equal(t, []string{"small"}, p.filled)
	assert.Equal(t, Start, p.Decisions[2].Action)
	checkPlan(t, &snap, &p)
	s.noLean = true
	s.now = nil
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	p, err = s.Round(cancelled, snap)
	require.NoError(t, err)
	assert.Empty(t, p.filled, "a cancelled round is out of time")
	p, err = s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, []string{"small"}, p.filled)
	assert.Equal(t, Start, p.Decisions[2].Action)

	late := &roundClock{now: func() time.Time { return fillT0.Add(time.Hour) }, deadline: fillT0, placeEnd: fillT0.Add(time.Millisecond)}
	assert.Zero(t, fillBudget(late), "past placement's end")
	early := &roundClock{now: func() time.Time { return fillT0 }, deadline: fillT0.Add(time.Second), placeEnd: fillT0.Add(time.Second)}
	assert.Equal(t, time.Second, fillBudget(early))
	assert.Equal(t, time.Duration(-1), fillBudget(&roundClock{now: time.Now}), "no deadline: no limit")
}

// TestFillRowsSized: fill scans the waiting jobs' entries in snapshot order
// only as far as its budget affords (fillCostPerEntry each, after
// fillCostFixed), and none with no budget: its work is sized before it
// starts.
func TestFillRowsSized(t *testing.T) {
	m := &goodputMatrix{Rows: make([]matrixRow, 6)}
	snap := &Snapshot{Jobs: make([]Job, 6)}
	lay := &layout{GPUs: make([][]GPU, 6)}
	for i := range m.Rows {
		m.Rows[i] = matrixRow{Current: -1, Pin: -1, Entries: make([]matrixEntry, 3)}
	}
	m.Rows[1].Pin = 0                 // pinned: never
	lay.GPUs[2] = fillGPUs("n", 0, 1) // holds GPUs: never
	assert.Equal(t, []int{0, 3, 4, 5}, fillRows(snap, m, lay, -1))
	assert.Nil(t, fillRows(snap, m, lay, fillCostFixed))
	assert.Equal(t, []int{0, 3}, fillRows(snap, m, lay, fillCostFixed+7*fillCostPerEntry), "6 entries afforded, not 9")
	assert.Nil(t, fillIdle(snap, m, solution{Choice: make([]int, 6)}, lay, 0))
}

// TestFillStatus: on random snapshots of two or three nodes of one type
// (3–15 GPUs) with running rigid jobs off the chain and waiting jobs, a
// plan the fill step changed is Optimal only when its objective is the
// uncharged relaxation's optimum (brute force), and its Bound is never
// beaten by that optimum; a plan it did not change keeps the solver's
// status. Both outcomes occur, and so do preempted jobs the fill puts back
// on their current GPUs (Keep) and preempted jobs it restarts on a shape of
// idle GPUs (a Shaped entry valued with the row's restart factor).
func TestFillStatus(t *testing.T) {
	s, err := New(nil)
	require.NoError(t, err)
	var filled, optimal, feasible, kept, moved int
	for c := 0; c < 300; c++ {
		rng := rand.New(rand.NewPCG(uint64(c), 5))
		size := 3 + rng.IntN(13)
		snap := Snapshot{Now: fillT0}
		for k := 0; k < 2+rng.IntN(2); k++ {
			snap.Nodes = append(snap.Nodes, Node{ID: fmt.Sprintf("n%d", k), Type: "g", GPUs: size})
		}
		mod := fillModel{gain: 0.5 + 0.5*rng.Float64(), cross: 0.7 + 0.3*rng.Float64()}
		for k, n := range snap.Nodes {
			if g := 1 + rng.IntN(size); rng.IntN(3) > 0 {
				snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("r%d", k), Kind: Rigid, GPUs: g, Models: mod,
					State: JobState{Current: Allocation{Type: "g", Nodes: 1, GPUs: g, Placement: fillGPUs(n.ID, 0, g)}}})
			}
		}
		for k := 0; k < 1+rng.IntN(2); k++ {
			j := Job{ID: fmt.Sprintf("w%d", k), Models: mod}
			if rng.IntN(2) == 0 {
				j.Kind, j.GPUs = Rigid, 1+rng.IntN(size)
			}
			snap.Jobs = append(snap.Jobs, j)
		}
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		if len(p.filled) == 0 {
			continue
		}
		filled++
		for i, d := range p.Decisions {
			if !slices.Contains(p.filled, d.Job) || !snap.Jobs[i].State.Current.Running() {
				continue
			}
			if e := p.entry(i); e.Shaped {
				// restarted on a shape of idle GPUs: valued with its restart factor
				moved++
				assert.NotEqual(t, Keep, d.Action, "case %d", c)
				assert.False(t, e.Current, "case %d", c)
				assert.Equal(t, p.matrix.Rows[i].Restart, e.Restart, "case %d", c)
				continue
			}
			kept++
			assert.Equal(t, Keep, d.Action, "case %d: a preempted job put back on its GPUs", c)
			assert.ElementsMatch(t, snap.Jobs[i].State.Current.Placement, d.Allocation.Placement)
		}
		best, _ := bruteForce(uncharged(p.matrix))
		tol := 1e-9 * math.Max(1, math.Abs(best))
		assert.False(t, better(best, p.Bound, p.matrix.Sense) && math.Abs(best-p.Bound) > tol, "case %d: bound %v beaten by the uncharged optimum %v", c, p.Bound, best)
		assert.False(t, better(p.Objective, best, p.matrix.Sense) && math.Abs(best-p.Objective) > tol, "case %d: objective %v beyond the uncharged optimum %v", c, p.Objective, best)
		switch p.Status {
		case StatusOptimal:
			optimal++
			assert.InDelta(t, best, p.Objective, tol, "case %d: optimal", c)
		case StatusFeasible:
			feasible++
		default:
			t.Errorf("case %d: status %v", c, p.Status)
		}
	}
	t.Logf("%d filled plans: %d optimal, %d feasible; %d preempted jobs kept, %d moved to idle GPUs", filled, optimal, feasible, kept, moved)
	assert.Positive(t, optimal)
	assert.Positive(t, moved)
	assert.Positive(t, feasible)
	assert.Positive(t, kept)
}

// fillBruteIdle is the least number of GPUs a brute force over the entries
// of the jobs fill may start — the ones it started, and the jobs neither
// running in the snapshot nor given GPUs by the plan — leaves idle beside
// the GPUs the plan's other jobs hold: each job on one offered entry worth
// more than waiting, or none, every entry by its evaluated shape on
// distinct nodes of its pool. (A preempted job fill may only put back on
// exactly its GPUs is left out: moving it would be a restart its entry's
// value does not count.)
func fillBruteIdle(snap *Snapshot, p *Plan) int {
	m := p.matrix
	idle := map[string]int{}
	total := 0
	for _, n := range snap.Nodes {
		idle[n.ID] = n.GPUs
		total += n.GPUs
	}
	var waiting []int
	for i, d := range p.Decisions {
		if slices.Contains(p.filled, d.Job) {
			waiting = append(waiting, i)
			continue
		}
		if m.Rows[i].Pin < 0 && len(d.Allocation.Placement) == 0 && !snap.Jobs[i].State.Current.Running() {
			waiting = append(waiting, i)
			continue
		}
		for _, g := range d.Allocation.Placement {
			idle[g.Node]--
			total--
		}
	}
	largest := 0
	for _, n := range snap.Nodes {
		largest = max(largest, n.GPUs)
	}
	best := total
	var try func(w int, left int)
	try = func(w int, left int) {
		if w == len(waiting) {
			best = min(best, left)
			return
		}
		try(w+1, left) // job waits
		row := &m.Rows[waiting[w]]
		for k := range row.Entries {
			e := &row.Entries[k]
			if e.Dropped || e.Dominated || e.Invalid || !better(e.Value, row.Unallocated, m.Sense) || e.Config.Spanning() {
				continue
			}
			r := e.Config.NodeGPUs
			if r == 0 {
				r = largest
			}
			parts := fillShape(e.Config.GPUs, e.Config.Nodes, r)
			var put func(k int, used map[string]bool)
			put = func(x int, used map[string]bool) {
				if x == len(parts) {
					try(w+1, left-e.Config.GPUs)
					return
				}
				for _, n := range snap.Nodes {
					if n.Type != e.Config.Type || e.Config.NodeGPUs > 0 && n.GPUs != e.Config.NodeGPUs || used[n.ID] || idle[n.ID] < parts[x] {
						continue
					}
					used[n.ID] = true
					idle[n.ID] -= parts[x]
					put(x+1, used)
					idle[n.ID] += parts[x]
					used[n.ID] = false
				}
			}
			if parts != nil {
				put(0, map[string]bool{})
			}
		}
	}
	try(0, total)
	return best
}

// TestFillGrowsToIdle: on two nodes of one type, one holding a rigid job
// off the chain of sizes (a rigid 5 on 15-GPU nodes, whose sizes are 1, 3,
// 15), the other a whole-node rigid job, the waiting adaptive jobs the fill
// step starts take the largest entries of their rows that fit the idle
// GPUs by their evaluated shape: the idle GPUs after the round are the
// least a brute force over the waiting jobs' entries reaches. Before the
// grow step fill started each job on its best entry per GPU and left more
// idle: on 12-GPU nodes beside a rigid 5, 6, 7 (here 5 and 6) or 8, 2 GPUs
// more (5, 4, 3, 2 idle instead of 3, 2, 1, 0); likewise on 16-GPU nodes
// beside a rigid 9–12. (A job that never ran is offered one GPU only, the
// scale-up cap: there is nothing to grow to.)
func TestFillGrowsToIdle(t *testing.T) {
	s, err := New(nil)
	require.NoError(t, err)
	mod := fillModel{gain: 0.9, cross: 0.9}
	for _, c := range []struct{ node, rigid, waiting, peak, max int }{
		{15, 5, 1, 0, 0}, {11, 2, 1, 0, 0}, {8, 6, 1, 0, 0}, {13, 4, 1, 0, 0}, {7, 3, 1, 0, 0},
		{15, 5, 1, 10, 10}, {11, 2, 1, 9, 9}, {8, 6, 1, 2, 2}, {13, 4, 1, 9, 9}, {7, 3, 1, 4, 4},
		{15, 5, 1, 4, 10}, {11, 2, 1, 4, 9}, {13, 4, 1, 4, 9}, {7, 3, 1, 2, 4},
		{6, 1, 1, 5, 5}, {10, 3, 1, 7, 7}, {12, 5, 1, 7, 7}, {16, 7, 1, 9, 9}, {5, 2, 1, 3, 3}, {9, 2, 1, 7, 7}, {14, 3, 1, 11, 11},
		{12, 6, 1, 6, 6}, {12, 8, 1, 4, 4}, {16, 9, 1, 7, 7}, {16, 12, 1, 4, 4},
		{15, 5, 2, 5, 5}, {12, 5, 2, 4, 4}, {16, 7, 2, 4, 5}, {10, 3, 2, 4, 4}, {13, 4, 2, 8, 6},
	} {
		name := fmt.Sprintf("node %d rigid %d waiting %d peak %d max %d", c.node, c.rigid, c.waiting, c.peak, c.max)
		snap := Snapshot{Now: fillT0, Nodes: []Node{{ID: "n0", Type: "g", GPUs: c.node}, {ID: "n1", Type: "g", GPUs: c.node}}, Jobs: []Job{
			{ID: "rigid", Kind: Rigid, GPUs: c.rigid, Models: mod, State: JobState{Current: Allocation{Type: "g", Nodes: 1, GPUs: c.rigid, Placement: fillGPUs("n0", 0, c.rigid)}}},
			{ID: "whole", Kind: Rigid, GPUs: c.node, Models: mod, State: JobState{Current: Allocation{Type: "g", Nodes: 1, GPUs: c.node, Placement: fillGPUs("n1", 0, c.node)}}},
		}}
		for k := 0; k < c.waiting; k++ {
			snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("w%d", k), Models: mod, MaxGPUs: c.max, State: JobState{PeakReplicas: c.peak}})
		}
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err, name)
		idle := 2 * c.node
		for _, d := range p.Decisions {
			idle -= len(d.Allocation.Placement)
		}
		brute := fillBruteIdle(&snap, &p)
		var got []string
		for _, d := range p.Decisions[2:] {
			got = append(got, fmt.Sprintf("%s %v %d", d.Job, d.Action, d.Allocation.GPUs))
			if d.Allocation.GPUs > 0 {
				assert.Equal(t, d.Allocation.GPUs, len(d.Allocation.Placement), name)
				assert.Equal(t, d.Allocation.Nodes, p.entry(slices.IndexFunc(p.Decisions, func(x Decision) bool { return x.Job == d.Job })).Config.Nodes, "%s: the evaluated shape", name)
			}
		}
		t.Logf("%s: %v; %d of %d idle, brute force %d; filled %v, %v", name, got, idle, 2*c.node, brute, p.filled, p.Status)
		assert.Equal(t, brute, idle, "%s: idle GPUs after the round", name)
	}
}
