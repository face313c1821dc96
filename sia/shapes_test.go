package sia_test

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
	"github.com/sia-sched/sia/placement"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/siatest"
)

// shapeModel predicts goodput per configuration: speed per type, a gain per
// extra GPU that falls off (concave), and a penalty per extra node, so that
// the node count of a configuration matters. Types not in speed cannot run
// the job.
type shapeModel struct {
	speed map[string]float64
	gain  float64 // goodput of r replicas on one node: r^gain
	cross float64 // factor per extra node
}

func (m shapeModel) Model(t string) (goodput.Model, bootstrap.Source) {
	if _, ok := m.speed[t]; !ok {
		return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.None
	}
	return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Measured
}

func (m shapeModel) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	s, ok := m.speed[t]
	if !ok || nodes < 1 || replicas < 1 {
		return goodput.Choice{}, false
	}
	v := s * math.Pow(float64(replicas), m.gain) * math.Pow(m.cross, float64(nodes-1))
	return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: replicas}, true
}

var shapesT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func nodesOf(prefix, typ string, n, gpus int) []sia.Node {
	var out []sia.Node
	for k := 0; k < n; k++ {
		out = append(out, sia.Node{ID: fmt.Sprintf("%s%d", prefix, k), Type: typ, GPUs: gpus})
	}
	return out
}

// checkShapes asserts the invariants of a plan on any node shape: no GPU to
// two jobs; every allocation has its entry's GPUs, node count and pool (the
// shape whose goodput was predicted), split as placement.Shape (or evenly
// over the entry's nodes) unless the fill step built the entry from idle
// GPUs (Shaped: split as they were idle).
func checkShapes(t *testing.T, snap sia.Snapshot, plan sia.Plan) {
	t.Helper()
	size := map[string]int{}
	for _, n := range snap.Nodes {
		size[n.ID] = n.GPUs
	}
	used := map[sia.GPU]string{}
	for i, d := range plan.Decisions {
		a := d.Allocation
		if !a.Running() {
			continue
		}
		e := sia.PlanEntry(&plan, i)
		require.NotNil(t, e, d.Job)
		require.Len(t, a.Placement, a.GPUs, d.Job)
		require.Equal(t, e.Config.GPUs, a.GPUs, d.Job)
		require.Equal(t, e.Config.Nodes, a.Nodes, "job %s: placed on %d nodes, evaluated on %d (%v)", d.Job, a.Nodes, e.Config.Nodes, e.Config)
		per := map[string]int{}
		for _, g := range a.Placement {
			require.Empty(t, used[g], "GPU %v given to %s and %s", g, used[g], d.Job)
			used[g] = d.Job
			per[g.Node]++
			if e.Config.NodeGPUs > 0 {
				require.Equal(t, e.Config.NodeGPUs, size[g.Node], "job %s off its pool %s", d.Job, e.Config.Pool())
			}
		}
		if d.Action == sia.Keep {
			continue // a kept job keeps the GPUs it has
		}
		if e.Config.Spanning() {
			checkParts(t, d.Job, e.Config.Parts(), per, size, !e.Shaped)
			continue
		}
		if e.Shaped {
			continue
		}
		counts := make([]int, 0, len(per))
		for _, c := range per {
			counts = append(counts, c)
		}
		slices.Sort(counts)
		slices.Reverse(counts)
		r := 0
		for n := range per {
			r = max(r, size[n])
		}
		if want := placement.Shape(a.GPUs, r); len(want) == a.Nodes {
			require.Equal(t, want, counts, "job %s shape %v %+v", d.Job, d.Action, *e)
		}
	}
}

func round(t *testing.T, snap sia.Snapshot, opts *sia.Options) sia.Plan {
	t.Helper()
	s, err := sia.New(opts)
	require.NoError(t, err)
	plan, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	checkShapes(t, snap, plan)
	return plan
}

// TestRoundAnyNodeShape: the cases of nodes whose GPU count is not a power
// of two, and of types that mix node sizes. Before configset's chains and
// pools, 6-GPU nodes were virtual 4 + 2: a rigid 18-GPU job on three of them
// was never offered, rigid 12 + 6 could not run together, a 12-GPU
// configuration evaluated on 2 nodes was placed on 3, and adaptive jobs
// could not use a whole node.
func TestRoundAnyNodeShape(t *testing.T) {
	rigid := func(id string, g int) sia.Job {
		return sia.Job{ID: id, Kind: sia.Rigid, GPUs: g, Submitted: shapesT0, Models: shapeModel{speed: map[string]float64{"x": 1, "y": 1}, gain: 1, cross: 1}}
	}
	adaptive := func(id string, gain float64) sia.Job {
		return sia.Job{ID: id, Submitted: shapesT0, Models: shapeModel{speed: map[string]float64{"x": 1}, gain: gain, cross: 0.95}}
	}
	type want struct {
		job         string
		nodes, gpus int
	}
	for _, tc := range []struct {
		name  string
		nodes []sia.Node
		jobs  []sia.Job
		want  []want
		total int // GPUs allocated in all, when > 0
	}{
		{"rigid 18 on 3x6", nodesOf("n", "x", 3, 6), []sia.Job{rigid("r18", 18)}, []want{{"r18", 3, 18}}, 0},
		{"rigid 12 + 6 on 3x6", nodesOf("n", "x", 3, 6), []sia.Job{rigid("r12", 12), rigid("r6", 6)}, []want{{"r12", 2, 12}, {"r6", 1, 6}}, 0},
		{"rigid 6 + 6 + 6 on 3x6", nodesOf("n", "x", 3, 6), []sia.Job{rigid("a", 6), rigid("b", 6), rigid("c", 6)}, []want{{"a", 1, 6}, {"b", 1, 6}, {"c", 1, 6}}, 0},
		{"rigid 9 on 2x6 is 6 + 3", nodesOf("n", "x", 2, 6), []sia.Job{rigid("r9", 9)}, []want{{"r9", 2, 9}}, 0},
		{"whole nodes of 3, 5, 10", append(append(nodesOf("p", "x", 1, 3), nodesOf("q", "y", 1, 5)...), nodesOf("r", "z", 1, 10)...),
			[]sia.Job{rigid("r3", 3), rigid("r5", 5), {ID: "r10", Kind: sia.Rigid, GPUs: 10, Submitted: shapesT0, Models: shapeModel{speed: map[string]float64{"z": 1}, gain: 1, cross: 1}}},
			[]want{{"r3", 1, 3}, {"r5", 1, 5}, {"r10", 1, 10}}, 0},
		{"rigid 12 on 1x12", nodesOf("n", "x", 1, 12), []sia.Job{rigid("r12", 12)}, []want{{"r12", 1, 12}}, 0},
		{"adaptive 12 is 2 whole 6-GPU nodes", nodesOf("n", "x", 3, 6), []sia.Job{{ID: "a", MaxGPUs: 12, Submitted: shapesT0, Models: shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 0.99}}},
			[]want{{"a", 2, 12}}, 0},
		{"three adaptive jobs fill 3x6", nodesOf("n", "x", 3, 6), []sia.Job{adaptive("a", 0.9), adaptive("b", 0.9), adaptive("c", 0.9)}, nil, 18},
		{"mixed sizes in one type", append(nodesOf("e", "x", 1, 8), nodesOf("s", "x", 2, 6)...), []sia.Job{rigid("r12", 12), rigid("r8", 8)},
			[]want{{"r12", 2, 12}, {"r8", 1, 8}}, 0},
		{"mixed sizes fill the type", append(nodesOf("e", "x", 1, 8), nodesOf("s", "x", 2, 6)...), []sia.Job{adaptive("a", 0.9), adaptive("b", 0.9), adaptive("c", 0.9)}, nil, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Nodes: tc.nodes, Jobs: tc.jobs}
			plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
			assert.Empty(t, unplacedOf(&plan))
			for _, w := range tc.want {
				d, ok := plan.Decision(w.job)
				require.True(t, ok)
				assert.Equal(t, sia.Start, d.Action, w.job)
				assert.Equal(t, w.nodes, d.Allocation.Nodes, w.job)
				assert.Equal(t, w.gpus, d.Allocation.GPUs, w.job)
			}
			if tc.total > 0 {
				got := 0
				for _, d := range plan.Decisions {
					got += d.Allocation.GPUs
				}
				assert.Equal(t, tc.total, got, "GPUs allocated")
			}
		})
	}
}

// TestRoundMixedPoolsReservedAndQuota: a reservation and a quota on a type
// with two node sizes hold over both pools together.
func TestRoundMixedPoolsReservedAndQuota(t *testing.T) {
	nodes := append(nodesOf("e", "x", 1, 8), nodesOf("s", "x", 2, 6)...) // 20 GPUs
	var jobs []sia.Job
	for k := 0; k < 6; k++ {
		jobs = append(jobs, sia.Job{ID: fmt.Sprintf("j%d", k), Submitted: shapesT0, Models: shapeModel{speed: map[string]float64{"x": 1}, gain: 0.95, cross: 0.95}})
	}
	snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Nodes: nodes, Jobs: jobs, Reserved: map[string]int{"x": 7}}
	plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
	total := 0
	for _, d := range plan.Decisions {
		total += d.Allocation.GPUs
	}
	assert.LessOrEqual(t, total, 13)
	assert.Positive(t, total)
	assert.Equal(t, map[string][]string{"x": {"x/8", "x/6"}}, sia.PlanMatrix(&plan).Pools)

	snap.Reserved = nil
	snap.Quotas = []sia.Quota{{Name: "q", Jobs: []string{"j0", "j1", "j2"}, Type: "x", Limit: 4}}
	plan = round(t, snap, &sia.Options{NoScaleUpCap: true})
	q := 0
	for _, d := range plan.Decisions[:3] {
		q += d.Allocation.GPUs
	}
	assert.LessOrEqual(t, q, 4)
}

// TestRoundShapesProperty plays random rounds on small clusters of every
// node size 1..16 (and types mixing two sizes), with adaptive and rigid jobs
// of any count, feeding each plan back as the next snapshot: every
// allocation is placed in the shape its goodput was predicted for, and
// without pinned jobs nothing the solver allocates is left unplaced.
func TestRoundShapesProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 12))
	s, err := sia.New(&sia.Options{NoScaleUpCap: true})
	require.NoError(t, err)
	rounds, allocated := 0, 0
	for iter := 0; iter < 120; iter++ {
		var nodes []sia.Node
		types := []string{"x", "y"}[:1+rng.IntN(2)]
		for ti, typ := range types {
			for p := 0; p < 1+rng.IntN(2); p++ {
				nodes = append(nodes, nodesOf(fmt.Sprintf("%s%d_", typ, p), typ, 1+rng.IntN(3), 1+(iter+7*ti+5*p)%16)...)
			}
		}
		capacity := 0
		for _, n := range nodes {
			capacity += n.GPUs
		}
		var jobs []sia.Job
		for k := 0; k < 1+rng.IntN(6); k++ {
			m := shapeModel{speed: map[string]float64{}, gain: 0.5 + 0.5*rng.Float64(), cross: 0.7 + 0.3*rng.Float64()}
			for _, typ := range types {
				m.speed[typ] = 0.5 + rng.Float64()
			}
			j := sia.Job{ID: fmt.Sprintf("j%d", k), Submitted: shapesT0, Models: m}
			if rng.IntN(3) == 0 {
				j.Kind, j.GPUs = sia.Rigid, 1+rng.IntN(capacity)
			}
			jobs = append(jobs, j)
		}
		snap := sia.Snapshot{Nodes: nodes, Jobs: jobs}
		for r := 0; r < 4; r++ {
			snap.Now = shapesT0.Add(time.Duration(r+1) * time.Hour)
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err)
			checkShapes(t, snap, plan)
			require.Empty(t, unplacedOf(&plan), "iter %d round %d: %v", iter, r, nodes)
			rounds++
			for i, d := range plan.Decisions {
				snap.Jobs[i].State.Current = d.Allocation
				allocated += d.Allocation.GPUs
			}
		}
	}
	t.Logf("%d rounds, %d GPUs allocated", rounds, allocated)
}

// TestRoundKeepsJobWhoseResizeCannotBePlaced: two restoring (pinned) jobs
// fragment two 4-GPU nodes; a running 2-GPU job that the solver grows to 4
// GPUs cannot be placed (3 free GPUs per node), but its own 2 GPUs are still
// free: it keeps them rather than lose all its GPUs.
func TestRoundKeepsJobWhoseResizeCannotBePlaced(t *testing.T) {
	lin := shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 1}
	pinned := func(id, node string) sia.Job {
		return sia.Job{ID: id, Kind: sia.Rigid, GPUs: 1, Submitted: shapesT0, Models: lin,
			State: sia.JobState{Restoring: true, Current: sia.Allocation{Type: "x", Nodes: 1, GPUs: 1, Placement: []sia.GPU{{Node: node, Index: 1}}}}}
	}
	grow := sia.Job{ID: "grow", Submitted: shapesT0, Models: lin, MaxGPUs: 4,
		State: sia.JobState{PeakReplicas: 2, Current: sia.Allocation{Type: "x", Nodes: 1, GPUs: 2, Placement: []sia.GPU{{Node: "n0", Index: 2}, {Node: "n0", Index: 3}}}}}
	snap := sia.Snapshot{Now: shapesT0.Add(time.Hour), Nodes: nodesOf("n", "x", 2, 4),
		Jobs: []sia.Job{pinned("p0", "n0"), pinned("p1", "n1"), grow}}
	plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
	d, ok := plan.Decision("grow")
	require.True(t, ok)
	e := sia.PlanMatrix(&plan).Rows[2].Entries
	require.NotEmpty(t, e)
	assert.Equal(t, sia.Keep, d.Action, "a job whose resize cannot be placed keeps its GPUs")
	assert.Equal(t, snap.Jobs[2].State.Current.Placement, d.Allocation.Placement)
	assert.Empty(t, unplacedOf(&plan))
	for _, id := range []string{"p0", "p1"} {
		d, _ := plan.Decision(id)
		assert.Equal(t, sia.Keep, d.Action, id)
	}
}

// TestRoundShapesPinnedBruteForce is TestRoundShapesProperty with jobs in a
// checkpoint-restore (pinned to their GPUs, which may fragment the nodes):
// whenever a job the solver allocated is left unplaced, an exhaustive search
// confirms that its pool's allocation (by the evaluated shapes, pinned jobs
// where they are) cannot be packed; and a running job left unplaced could
// not have kept its GPUs.
func TestRoundShapesPinnedBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 27))
	o := &sia.Options{NoScaleUpCap: true}
	s, err := sia.New(o)
	require.NoError(t, err)
	unplaced, kept, rounds := 0, 0, 0
	for iter := 0; iter < 150; iter++ {
		var nodes []sia.Node
		for p := 0; p < 1+rng.IntN(2); p++ {
			nodes = append(nodes, nodesOf(fmt.Sprintf("x%d_", p), "x", 1+rng.IntN(3), 1+(iter+5*p)%16)...)
		}
		capacity := 0
		for _, n := range nodes {
			capacity += n.GPUs
		}
		var jobs []sia.Job
		for k := 0; k < 2+rng.IntN(5); k++ {
			m := shapeModel{speed: map[string]float64{"x": 0.5 + rng.Float64()}, gain: 0.5 + 0.5*rng.Float64(), cross: 0.7 + 0.3*rng.Float64()}
			j := sia.Job{ID: fmt.Sprintf("j%d", k), Submitted: shapesT0, Models: m}
			if rng.IntN(3) == 0 {
				j.Kind, j.GPUs = sia.Rigid, 1+rng.IntN(capacity)
			}
			jobs = append(jobs, j)
		}
		// pinned jobs (restoring) on random free GPUs fragment the nodes
		taken := map[sia.GPU]bool{}
		for k := 0; k < 1+rng.IntN(3); k++ {
			nd := nodes[rng.IntN(len(nodes))]
			g := 1 + rng.IntN(min(2, nd.GPUs))
			var pl []sia.GPU
			for _, idx := range rng.Perm(nd.GPUs) {
				if gp := (sia.GPU{Node: nd.ID, Index: idx}); !taken[gp] && len(pl) < g {
					pl = append(pl, gp)
				}
			}
			if len(pl) < g {
				continue
			}
			for _, gp := range pl {
				taken[gp] = true
			}
			jobs = append(jobs, sia.Job{ID: fmt.Sprintf("p%d", k), Kind: sia.Rigid, GPUs: g, Submitted: shapesT0,
				Models: shapeModel{speed: map[string]float64{"x": 1}, gain: 1, cross: 1},
				State:  sia.JobState{Restoring: true, Current: sia.Allocation{Type: "x", Nodes: 1, GPUs: g, Placement: pl}}})
		}
		snap := sia.Snapshot{Nodes: nodes, Jobs: jobs}
		for r := 0; r < 3; r++ {
			snap.Now = shapesT0.Add(time.Duration(r+1) * time.Hour)
			for i := range snap.Jobs {
				if snap.Jobs[i].ID[0] == 'j' && rng.IntN(3) == 0 { // new demands: jobs change their bounds
					snap.Jobs[i].MaxGPUs = rng.IntN(capacity + 1)
				}
			}
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err)
			checkShapes(t, snap, plan)
			rounds++
			if len(unplacedOf(&plan)) > 0 {
				unplaced += len(unplacedOf(&plan))
				m, err := sia.BuildMatrix(&snap, o)
				require.NoError(t, err)
				sol, err := sia.Solve(context.Background(), m, o)
				require.NoError(t, err)
				lay, err := sia.Place(&snap, m, sol)
				require.NoError(t, err)
				require.Equal(t, unplacedOf(&plan), lay.Unplaced)
				require.False(t, packable(snap, m, sol), "iter %d round %d: placement left %v unplaced, but the allocation packs", iter, r, unplacedOf(&plan))
				for _, id := range unplacedOf(&plan) {
					for i := range snap.Jobs {
						if snap.Jobs[i].ID == id && snap.Jobs[i].State.Current.Running() {
							d := plan.Decisions[i]
							assert.Equal(t, sia.Preempt, d.Action)
						}
					}
				}
			}
			kept += countKept(t, snap, o)
			for i, d := range plan.Decisions {
				if snap.Jobs[i].ID[0] == 'j' {
					snap.Jobs[i].State.Current = d.Allocation
				}
			}
		}
	}
	t.Logf("%d rounds, %d unplaced (all confirmed unpackable), %d running jobs kept in place", rounds, unplaced, kept)
}

// packable reports whether the solution's allocation can be placed, each job
// by its entry's shape in its entry's pool, pinned jobs on their current
// GPUs, others anywhere (exhaustive search).
func packable(snap sia.Snapshot, m *sia.Matrix, sol sia.Solution) bool {
	size := map[string]int{}
	for _, n := range snap.Nodes {
		size[n.ID] = n.GPUs
	}
	free := map[string]int{}
	for _, n := range snap.Nodes {
		free[n.ID] = n.GPUs
	}
	type job struct {
		parts []int
		sizes []int // node size of each part
	}
	var movable []job
	for i, c := range sol.Choice {
		if c < 0 {
			continue
		}
		row := &m.Rows[i]
		e := row.Entries[c]
		if c == row.Pin {
			for _, g := range snap.Jobs[i].State.Current.Placement {
				free[g.Node]--
			}
			continue
		}
		if e.Config.Spanning() { // each part on nodes of its size
			var jb job
			for _, pt := range e.Config.Parts() {
				sh := placement.Shape(pt.GPUs, pt.NodeGPUs)
				if len(sh) != pt.Nodes { // an even split over the part's nodes
					sh = sh[:0]
					for k := 0; k < pt.Nodes; k++ {
						sh = append(sh, pt.GPUs/pt.Nodes+min(1, max(0, pt.GPUs%pt.Nodes-k)))
					}
				}
				for _, g := range sh {
					jb.parts, jb.sizes = append(jb.parts, g), append(jb.sizes, pt.NodeGPUs)
				}
			}
			movable = append(movable, jb)
			continue
		}
		r := e.Config.NodeGPUs
		if r == 0 {
			for _, n := range snap.Nodes {
				if n.Type == e.Config.Type {
					r = n.GPUs
				}
			}
		}
		parts := placement.Shape(e.Config.GPUs, r)
		if len(parts) != e.Config.Nodes { // an even split over the entry's nodes
			parts = parts[:0]
			for k := 0; k < e.Config.Nodes; k++ {
				parts = append(parts, e.Config.GPUs/e.Config.Nodes+min(1, max(0, e.Config.GPUs%e.Config.Nodes-k)))
			}
		}
		sizes := make([]int, len(parts))
		for k := range sizes {
			sizes[k] = r
		}
		movable = append(movable, job{parts, sizes})
	}
	ids := make([]string, 0, len(snap.Nodes))
	for _, n := range snap.Nodes {
		ids = append(ids, n.ID)
	}
	var rec func(j, p int, used map[string]bool) bool
	rec = func(j, p int, used map[string]bool) bool {
		if j == len(movable) {
			return true
		}
		if p == len(movable[j].parts) {
			return rec(j+1, 0, map[string]bool{})
		}
		sz := movable[j].parts[p]
		for _, id := range ids {
			if used[id] || size[id] != movable[j].sizes[p] || free[id] < sz {
				continue
			}
			free[id] -= sz
			used[id] = true
			ok := rec(j, p+1, used)
			delete(used, id)
			free[id] += sz
			if ok {
				return true
			}
		}
		return false
	}
	return rec(0, 0, map[string]bool{})
}

// countKept returns how many jobs the round keeps in place because their new
// allocation could not be placed (Layout.Kept), checking that each keeps its
// current GPUs.
func countKept(t *testing.T, snap sia.Snapshot, o *sia.Options) int {
	t.Helper()
	m, err := sia.BuildMatrix(&snap, o)
	require.NoError(t, err)
	sol, err := sia.Solve(context.Background(), m, o)
	require.NoError(t, err)
	lay, err := sia.Place(&snap, m, sol)
	require.NoError(t, err)
	for _, id := range lay.Kept {
		for i := range snap.Jobs {
			if snap.Jobs[i].ID == id {
				require.Equal(t, snap.Jobs[i].State.Current.Placement, lay.GPUs[i], id)
				require.Equal(t, m.Rows[i].Current, lay.Choice[i], id)
			}
		}
	}
	return len(lay.Kept)
}

func TestMatrixTypeCapacity(t *testing.T) {
	snap := sia.Snapshot{Now: shapesT0, Nodes: append(append(nodesOf("e", "x", 1, 8), nodesOf("s", "x", 2, 6)...), nodesOf("t", "y", 2, 4)...)}
	m, err := sia.BuildMatrix(&snap, nil)
	require.NoError(t, err)
	assert.Equal(t, 20, m.TypeCapacity("x"))
	assert.Equal(t, 8, m.TypeCapacity("y"))
	assert.Zero(t, m.TypeCapacity("z"))
	assert.Equal(t, map[string]int{"x/8": 8, "x/6": 12, "y": 8}, m.Capacity)
}

// unplacedOf lists the jobs placement could not place, in snapshot order.
func unplacedOf(p *sia.Plan) []string {
	var out []string
	for _, d := range p.Decisions {
		if d.Reason == sia.ReasonUnplaceable {
			out = append(out, d.Job)
		}
	}
	return out
}

// TestStepsOneByOne runs the round's steps one by one (matrix, allocation,
// placement) on a small snapshot and checks each step's outcome.
func TestStepsOneByOne(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	snap := &sia.Snapshot{
		Now:   t0,
		Nodes: []sia.Node{{ID: "n0", Type: "X", GPUs: 4}},
		Jobs: []sia.Job{
			{ID: "small", Submitted: t0, MaxGPUs: 2, Models: siatest.Table{"X": {1: 10, 2: 18}}},
			{ID: "rigid", Submitted: t0, Kind: sia.Rigid, GPUs: 2, Models: siatest.Table{"X": {2: 50}}},
		},
	}
	opts := &sia.Options{NoScaleUpCap: true}
	m, err := sia.BuildMatrix(snap, opts)
	require.NoError(t, err)
	var entries []string
	for _, r := range m.Rows {
		for _, e := range r.Entries {
			entries = append(entries, fmt.Sprintf("%s %v G=%.2f value=%.3f", r.Job, e.Config, e.Normalized, e.Value))
		}
	}
	assert.Equal(t, []string{
		"small (1,1,X) G=1.00 value=1.000",
		"small (1,2,X) G=1.80 value=0.745",
		"rigid (1,2,X) G=2.00 value=0.707",
	}, entries)
	sol, err := sia.Solve(context.Background(), m, opts)
	require.NoError(t, err)
	lay, err := sia.Place(snap, m, sol)
	require.NoError(t, err)
	assert.Equal(t, "[1 0] [[{n0 2} {n0 3}] [{n0 0} {n0 1}]]", fmt.Sprint(sol.Choice, lay.GPUs))
}
