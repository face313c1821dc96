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

	"github.com/sia-sched/sia/configset"
)

// shapedSnapshot is a random small fleet for the shaped-idle tests: one
// type of nodes of two or three sizes from 1 to 16 GPUs (any size, not
// only powers of two), restoring jobs pinned on random GPUs that fragment
// the nodes, and rigid and adaptive jobs (MinGPUs up to the type) whose
// goodput does not fall with the node count (cross 1), so that every
// shape of a job's count is worth as much as its offered ones; sometimes a
// quota over some of the jobs, or GPUs of the type reserved.
func shapedSnapshot(rng *rand.Rand) Snapshot {
	snap := Snapshot{Now: shapesT0().Add(time.Hour)}
	capacity := 0
	for p := 0; p < 2+rng.IntN(2); p++ {
		size := 1 + rng.IntN(16)
		for k := 0; k < 1+rng.IntN(2); k++ {
			snap.Nodes = append(snap.Nodes, Node{ID: fmt.Sprintf("n%d_%d", p, k), Type: "x", GPUs: size})
			capacity += size
		}
	}
	taken := map[GPU]bool{}
	for k := 0; k < rng.IntN(4); k++ {
		n := snap.Nodes[rng.IntN(len(snap.Nodes))]
		var pl []GPU
		for _, x := range rng.Perm(n.GPUs)[:1+rng.IntN(min(3, n.GPUs))] {
			if g := (GPU{Node: n.ID, Index: x}); !taken[g] {
				taken[g] = true
				pl = append(pl, g)
			}
		}
		if len(pl) == 0 {
			continue
		}
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprint("p", k), Kind: Rigid, GPUs: len(pl), Submitted: shapesT0(),
			Models: spanEval{speed: 1, gain: 1, cross: 1},
			State:  JobState{Restoring: true, Current: Allocation{Type: "x", Nodes: 1, GPUs: len(pl), Placement: pl}}})
	}
	for k := 0; k < 1+rng.IntN(4); k++ {
		j := Job{ID: fmt.Sprint("j", k), Submitted: shapesT0(), Models: spanEval{speed: 0.5 + rng.Float64(), gain: 0.5 + 0.5*rng.Float64(), cross: 1}}
		if rng.IntN(2) == 0 {
			j.Kind, j.GPUs = Rigid, 1+rng.IntN(capacity)
		} else {
			j.MinGPUs = 1 + rng.IntN(capacity)
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	if rng.IntN(3) == 0 { // a quota over some of the jobs
		q := Quota{Name: "q", Limit: rng.IntN(capacity)}
		for _, j := range snap.Jobs {
			if j.ID[0] == 'j' && rng.IntN(2) == 0 {
				q.Jobs = append(q.Jobs, j.ID)
			}
		}
		snap.Quotas = []Quota{q}
	}
	if free := capacity - len(taken); free > 0 && rng.IntN(4) == 0 { // never below what the pinned jobs hold
		snap.Reserved = map[string]int{"x": 1 + rng.IntN(free)}
	}
	return snap
}

// TestShapedIdleProperty: on random small fleets of any node sizes
// (shapedSnapshot), with no deadline,
//   - no job waits while the GPUs the plan leaves idle hold its smallest
//     count (a rigid job's count, the smallest count of an adaptive job's
//     row): the fill step starts it on a shape of them when no offered
//     entry fits;
//   - every allocation is placed exactly in its entry's shape (nodes, and
//     per node size the part's nodes and GPUs);
//   - the plan's bound holds against the brute-force optimum of its matrix
//     (of the uncharged relaxation, shaped entries included, when the fill
//     step changed the plan), its objective is no better than that
//     optimum, and an Optimal plan reaches it.
//
// Before the second pass, jobs waited beside idle GPUs that held them in
// many of these fleets (nodes of 15 and 4 GPUs with a rigid 9 placed: a
// rigid 10 waited beside 6 + 4 idle GPUs).
func TestShapedIdleProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2))
	s, err := New(nil)
	require.NoError(t, err)
	const iters = 300
	shaped, optimal := 0, 0
	for iter := 0; iter < iters; iter++ {
		snap := shapedSnapshot(rng)
		what := fmt.Sprintf("iter %d (%v)", iter, snap.Nodes)
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err, what)
		checkEvaluatedShape(t, &snap, &p, what)
		checkPlan(t, &snap, &p)
		idle := 0 // one type
		for _, n := range snap.Nodes {
			idle += n.GPUs
		}
		for _, d := range p.Decisions {
			idle -= len(d.Allocation.Placement)
		}
		if r := snap.Reserved["x"]; r > 0 {
			assert.GreaterOrEqual(t, idle, r, "%s: the reservation of %d GPUs holds", what, r)
			idle -= r
		}
		quota, held := map[string]bool{}, 0
		for _, q := range snap.Quotas {
			for _, id := range q.Jobs {
				quota[id] = true
			}
		}
		for _, d := range p.Decisions {
			if quota[d.Job] {
				held += d.Allocation.GPUs
			}
		}
		for _, q := range snap.Quotas {
			assert.LessOrEqual(t, held, q.Limit, "%s: quota", what)
		}
		for i, d := range p.Decisions {
			if e := p.entry(i); e != nil && e.Shaped {
				shaped++
			}
			if d.Allocation.Running() {
				continue
			}
			j := &snap.Jobs[i]
			need := math.MaxInt // the smallest count the job is offered
			for _, e := range p.matrix.Rows[i].Entries {
				if !e.Invalid && !e.Dropped {
					need = min(need, e.Config.GPUs)
				}
			}
			if quota[j.ID] && held+need > snap.Quotas[0].Limit {
				continue // the quota keeps it waiting
			}
			assert.Greater(t, need, idle, "%s: job %s of %d GPUs waits (%v) beside %d idle GPUs", what, j.ID, need, d.Reason, idle)
		}
		// a plan the fill step changed goes beyond the charged problem: it
		// is held to the uncharged relaxation, which holds every placeable
		// plan
		m := p.matrix
		if len(p.filled) > 0 {
			m = uncharged(m)
		}
		best, _ := bruteForce(m)
		tol := 1e-9 * math.Max(1, math.Abs(best))
		assert.False(t, better(best, p.Bound, p.matrix.Sense) && math.Abs(best-p.Bound) > tol, "%s: bound %v beaten by the uncharged optimum %v", what, p.Bound, best)
		assert.False(t, better(p.Objective, best, p.matrix.Sense) && math.Abs(best-p.Objective) > tol, "%s: objective %v beyond the uncharged optimum %v", what, p.Objective, best)
		if p.Status == StatusOptimal {
			optimal++
			assert.InDelta(t, best, p.Objective, tol, "%s: optimal", what)
		}
	}
	t.Logf("%d rounds: %d shaped allocations, %d optimal", iters, shaped, optimal)
	assert.Positive(t, shaped)
	assert.Positive(t, optimal)
}

// TestShapedIdleCases: hand-made fleets where the jobs fit the idle GPUs
// only in a shape the configuration set does not offer them, each with
// the shape the fill step gives the waiting job; and, in
// TestShapedIdleReplicas, a hybrid-parallel job whose replicas the idle
// GPUs would split across nodes waits.
func TestShapedIdleCases(t *testing.T) {
	rigid := func(id string, g int) Job {
		return Job{ID: id, Kind: Rigid, GPUs: g, Submitted: shapesT0(), Models: spanEval{speed: 1, gain: 0.9, cross: 0.9}}
	}
	pinned := func(id, node string, idx ...int) Job {
		return pinnedOn(id, node, spanEval{speed: 1, gain: 0.9, cross: 0.9}, idx...)
	}
	nodes := func(sizes ...int) []Node {
		var out []Node
		for k, g := range sizes {
			out = append(out, Node{ID: fmt.Sprint("n", k), Type: "x", GPUs: g})
		}
		return out
	}
	cases := []struct {
		name  string
		snap  Snapshot
		job   string
		parts []configset.Part // nil: one pool of Nodes nodes
		nodes int
	}{
		{name: "15 + 4 with a rigid 9 and a rigid 10", snap: Snapshot{Nodes: nodes(15, 4), Jobs: []Job{rigid("a", 9), rigid("b", 10)}},
			job: "a", parts: []configset.Part{{NodeGPUs: 15, Nodes: 1, GPUs: 5}, {NodeGPUs: 4, Nodes: 1, GPUs: 4}}, nodes: 2},
		{name: "two 6-GPU nodes half held, a rigid 6", snap: Snapshot{Nodes: nodes(6, 6), Jobs: []Job{pinned("p", "n0", 0, 1, 2), pinned("q", "n1", 3, 4, 5), rigid("r", 6)}},
			job: "r", nodes: 2},
		{name: "12 with 7 held, 3 and 2, a rigid 10 across all", snap: Snapshot{Nodes: nodes(12, 3, 2), Jobs: []Job{pinned("p", "n0", 0, 1, 2, 3, 4, 5, 6), rigid("r", 10)}},
			job: "r", parts: []configset.Part{{NodeGPUs: 12, Nodes: 1, GPUs: 5}, {NodeGPUs: 3, Nodes: 1, GPUs: 3}, {NodeGPUs: 2, Nodes: 1, GPUs: 2}}, nodes: 3},
		{name: "12 and 10 with 3 held on each, a rigid 16", snap: Snapshot{Nodes: nodes(12, 10), Jobs: []Job{pinned("p", "n0", 0, 1, 2), pinned("q", "n1", 0, 1, 2), rigid("r", 16)}},
			job: "r", parts: []configset.Part{{NodeGPUs: 12, Nodes: 1, GPUs: 9}, {NodeGPUs: 10, Nodes: 1, GPUs: 7}}, nodes: 2},
	}
	hybrid := func(id string, g, stages int) Job {
		j := rigid(id, g)
		j.Models = pipelined{inner: j.Models, stages: map[string]int{"x": stages}}
		return j
	}
	cases = append(cases, struct {
		name  string
		snap  Snapshot
		job   string
		parts []configset.Part
		nodes int
	}{name: "hybrid of replicas of 2 on 4 + 2 idle", snap: Snapshot{Nodes: nodes(8, 8), Jobs: []Job{pinned("p", "n0", 0, 1, 2, 3), pinned("q", "n1", 0, 1, 2, 3, 4, 5), hybrid("h", 6, 2)}},
		job: "h", nodes: 2})
	s, err := New(nil)
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.snap.Now = shapesT0().Add(time.Hour)
			p, err := s.Round(context.Background(), c.snap)
			require.NoError(t, err)
			checkEvaluatedShape(t, &c.snap, &p, c.name)
			d, ok := p.Decision(c.job)
			require.True(t, ok)
			require.Equal(t, Start, d.Action, "%v", d.Reason)
			i := 0
			for i < len(c.snap.Jobs) && c.snap.Jobs[i].ID != c.job {
				i++
			}
			e := p.entry(i)
			assert.True(t, e.Shaped)
			assert.Equal(t, c.nodes, d.Allocation.Nodes)
			if c.parts != nil {
				assert.Equal(t, c.parts, e.Config.Parts())
			} else {
				assert.False(t, e.Config.Spanning())
			}
			for _, d := range p.Decisions {
				assert.True(t, d.Allocation.Running(), "job %s: %v", d.Job, d.Reason)
			}
		})
	}
}

// TestShapedIdleReplicas: a hybrid-parallel job of 3 replicas of 2 GPUs
// beside idle GPUs that hold 6 only as 3 + 3 on two nodes (a replica would
// span nodes) waits; a plain rigid 6 there starts on those 3 + 3.
func TestShapedIdleReplicas(t *testing.T) {
	m := spanEval{speed: 1, gain: 0.9, cross: 0.9}
	nodes := []Node{{ID: "n0", Type: "x", GPUs: 8}, {ID: "n1", Type: "x", GPUs: 8}}
	s, err := New(nil)
	require.NoError(t, err)
	for _, stages := range []int{2, 1} {
		j := Job{ID: "h", Kind: Rigid, GPUs: 6, Submitted: shapesT0(), Models: pipelined{inner: m, stages: map[string]int{"x": stages}}}
		snap := Snapshot{Now: shapesT0().Add(time.Hour), Nodes: nodes, Jobs: []Job{pinnedOn("p", "n0", m, 0, 1, 2, 3, 4), pinnedOn("q", "n1", m, 0, 1, 2, 3, 4), j}}
		p, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		checkEvaluatedShape(t, &snap, &p, "replicas")
		d, _ := p.Decision("h")
		if stages == 2 {
			assert.Equal(t, Queue, d.Action, "replicas of 2 on 3 + 3 idle GPUs")
			continue
		}
		require.Equal(t, Start, d.Action, "%v", d.Reason)
		assert.Equal(t, 2, d.Allocation.Nodes)
	}
}

// pinnedOn is a non-preemptible rigid job of type x running on GPUs idx of
// node (pinned there), with models m.
func pinnedOn(id, node string, m Models, idx ...int) Job {
	var pl []GPU
	for _, x := range idx {
		pl = append(pl, GPU{Node: node, Index: x})
	}
	return Job{ID: id, Kind: Rigid, GPUs: len(pl), NonPreemptible: true, Submitted: shapesT0(), Models: m,
		State: JobState{Current: Allocation{Type: "x", Nodes: 1, GPUs: len(pl), Placement: pl}}}
}
