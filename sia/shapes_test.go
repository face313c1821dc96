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
// over the entry's nodes).
func checkShapes(t *testing.T, snap sia.Snapshot, plan sia.Plan) {
	t.Helper()
	size := map[string]int{}
	for _, n := range snap.Cluster.Nodes {
		size[n.ID] = n.GPUs
	}
	used := map[sia.GPU]string{}
	for i, d := range plan.Decisions {
		a := d.Allocation
		if !a.Running() {
			continue
		}
		require.GreaterOrEqual(t, d.Entry, 0, d.Job)
		e := plan.Matrix.Rows[i].Entries[d.Entry]
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
			require.Equal(t, want, counts, "job %s shape", d.Job)
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
			snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Cluster: sia.Cluster{Nodes: tc.nodes}, Jobs: tc.jobs}
			plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
			assert.Empty(t, plan.Unplaced)
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
	snap := sia.Snapshot{Now: shapesT0.Add(time.Minute), Cluster: sia.Cluster{Nodes: nodes}, Jobs: jobs, Reserved: map[string]int{"x": 7}}
	plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
	total := 0
	for _, d := range plan.Decisions {
		total += d.Allocation.GPUs
	}
	assert.LessOrEqual(t, total, 13)
	assert.Positive(t, total)
	assert.Equal(t, map[string][]string{"x": {"x/8", "x/6"}}, plan.Matrix.Pools)

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
		snap := sia.Snapshot{Cluster: sia.Cluster{Nodes: nodes}, Jobs: jobs}
		for r := 0; r < 4; r++ {
			snap.Now = shapesT0.Add(time.Duration(r+1) * time.Hour)
			plan, err := s.Round(context.Background(), snap)
			require.NoError(t, err)
			checkShapes(t, snap, plan)
			require.Empty(t, plan.Unplaced, "iter %d round %d: %v", iter, r, nodes)
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
	snap := sia.Snapshot{Now: shapesT0.Add(time.Hour), Cluster: sia.Cluster{Nodes: nodesOf("n", "x", 2, 4)},
		Jobs: []sia.Job{pinned("p0", "n0"), pinned("p1", "n1"), grow}}
	plan := round(t, snap, &sia.Options{NoScaleUpCap: true})
	d, ok := plan.Decision("grow")
	require.True(t, ok)
	e := plan.Matrix.Rows[2].Entries
	require.NotEmpty(t, e)
	assert.Equal(t, sia.Keep, d.Action, "a job whose resize cannot be placed keeps its GPUs")
	assert.Equal(t, snap.Jobs[2].State.Current.Placement, d.Allocation.Placement)
	assert.Empty(t, plan.Unplaced)
	for _, id := range []string{"p0", "p1"} {
		d, _ := plan.Decision(id)
		assert.Equal(t, sia.Keep, d.Action, id)
	}
}
