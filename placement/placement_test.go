package placement

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/configset"
)

func gpus(node string, idx ...int) []GPU {
	out := make([]GPU, len(idx))
	for i, x := range idx {
		out[i] = GPU{node, x}
	}
	return out
}

func cat(gs ...[]GPU) []GPU {
	var out []GPU
	for _, g := range gs {
		out = append(out, g...)
	}
	return out
}

func mkNodes(typ string, n, r int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{ID: fmt.Sprintf("%s-%d", typ, i), Type: typ, GPUs: r}
	}
	return out
}

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		g, r int
		want []int
	}{
		{0, 8, nil}, {3, 0, nil}, {-1, 4, nil},
		{1, 8, []int{1}}, {8, 8, []int{8}}, {5, 8, []int{5}},
		{16, 8, []int{8, 8}}, {24, 8, []int{8, 8, 8}},
		{12, 8, []int{8, 4}}, {6, 4, []int{4, 2}}, {7, 4, []int{4, 3}},
		{8, 6, []int{6, 2}}, {12, 6, []int{6, 6}}, {6, 6, []int{6}},
		{10, 6, []int{6, 4}}, {18, 6, []int{6, 6, 6}}, {16, 12, []int{12, 4}},
		{24, 12, []int{12, 12}}, {5, 5, []int{5}}, {11, 5, []int{5, 5, 1}},
	} {
		t.Run(fmt.Sprintf("%d/%d", tc.g, tc.r), func(t *testing.T) {
			assert.Equal(t, tc.want, Shape(tc.g, tc.r))
		})
	}
}

func TestPlaceBasics(t *testing.T) {
	a := mkNodes("a", 2, 2)
	b := mkNodes("b", 1, 4)
	nodes := append(a, b...)
	for _, tc := range []struct {
		name string
		reqs []Request
		want map[string][]GPU
		mig  []string
	}{
		{
			name: "running example",
			reqs: []Request{{Job: "J1", Type: "b", GPUs: 4}, {Job: "J2", Type: "a", GPUs: 2}},
			want: map[string][]GPU{"J1": gpus("b-0", 0, 1, 2, 3), "J2": gpus("a-0", 0, 1)},
		},
		{
			name: "best fit prefers the fuller node",
			reqs: []Request{{Job: "x", Type: "a", GPUs: 1, Current: gpus("a-1", 1)}, {Job: "y", Type: "a", GPUs: 1}},
			want: map[string][]GPU{"x": gpus("a-1", 1), "y": gpus("a-1", 0)},
		},
		{
			name: "whole nodes for multi-node jobs",
			reqs: []Request{{Job: "m", Type: "a", GPUs: 4}},
			want: map[string][]GPU{"m": cat(gpus("a-0", 0, 1), gpus("a-1", 0, 1))},
		},
		{
			name: "kept job keeps odd GPUs; type change is a migration",
			reqs: []Request{
				{Job: "k", Type: "b", GPUs: 2, Current: gpus("b-0", 1, 3)},
				{Job: "t", Type: "b", GPUs: 1, Current: gpus("a-0", 0)},
			},
			want: map[string][]GPU{"k": gpus("b-0", 1, 3), "t": gpus("b-0", 0)},
			mig:  []string{"t"},
		},
		{
			name: "resize is not a migration",
			reqs: []Request{{Job: "r", Type: "b", GPUs: 4, Current: gpus("b-0", 2, 3)}},
			want: map[string][]GPU{"r": gpus("b-0", 0, 1, 2, 3)},
		},
		{
			name: "zero GPUs releases",
			reqs: []Request{{Job: "z", Type: "", GPUs: 0, Current: gpus("b-0", 0, 1, 2, 3)}, {Job: "n", Type: "b", GPUs: 4}},
			want: map[string][]GPU{"n": gpus("b-0", 0, 1, 2, 3)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Place(nodes, tc.reqs)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Placements)
			assert.Equal(t, tc.mig, res.Migrated)
			assert.Empty(t, res.Evicted)
			assert.Empty(t, res.Unplaced)
			checkResult(t, nodes, tc.reqs, res, true)
		})
	}
}

// TestSixGPUNodes: on 6-GPU nodes multi-node jobs take whole nodes and
// single-node jobs aligned blocks (configset offers 1, 2 and 6 per node).
func TestSixGPUNodes(t *testing.T) {
	nodes := mkNodes("v", 3, 6)
	reqs := []Request{{Job: "big", Type: "v", GPUs: 12}, {Job: "s1", Type: "v", GPUs: 2}, {Job: "s2", Type: "v", GPUs: 2}, {Job: "s3", Type: "v", GPUs: 2}}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, cat(gpus("v-0", 0, 1, 2, 3, 4, 5), gpus("v-1", 0, 1, 2, 3, 4, 5)), res.Placements["big"])
	assert.Equal(t, gpus("v-2", 0, 1), res.Placements["s1"])
	assert.Equal(t, gpus("v-2", 2, 3), res.Placements["s2"])
	assert.Equal(t, gpus("v-2", 4, 5), res.Placements["s3"])
	checkResult(t, nodes, reqs, res, true)

	// the whole cluster for one rigid job, and rigid 12 + rigid 6 together
	res, err = Place(nodes, []Request{{Job: "all", Type: "v", GPUs: 18}})
	require.NoError(t, err)
	assert.Len(t, res.Placements["all"], 18)
	reqs = []Request{{Job: "r6", Type: "v", GPUs: 6}, {Job: "r12", Type: "v", GPUs: 12}}
	res, err = Place(nodes, reqs)
	require.NoError(t, err)
	assert.Empty(t, res.Unplaced)
	checkResult(t, nodes, reqs, res, true)
}

func TestRigidCounts(t *testing.T) {
	nodes := append(mkNodes("e", 2, 8), mkNodes("q", 2, 4)...)
	reqs := []Request{{Job: "r12", Type: "e", GPUs: 12}, {Job: "r6", Type: "q", GPUs: 6}, {Job: "x", Type: "e", GPUs: 2}}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, cat(gpus("e-0", 0, 1, 2, 3, 4, 5, 6, 7), gpus("e-1", 0, 1, 2, 3)), res.Placements["r12"])
	assert.Equal(t, cat(gpus("q-0", 0, 1, 2, 3), gpus("q-1", 0, 1)), res.Placements["r6"])
	assert.Equal(t, gpus("e-1", 4, 5), res.Placements["x"])
	checkResult(t, nodes, reqs, res, true)
}

func TestEviction(t *testing.T) {
	nodes := mkNodes("a", 2, 4)
	// Each node holds one kept 1-GPU job at GPU 0: no node has 4 free. The
	// 4-GPU job evicts one of them (the earlier-named on the earliest node),
	// which is re-placed on the other node.
	reqs := []Request{
		{Job: "k1", Type: "a", GPUs: 1, Current: gpus("a-0", 0)},
		{Job: "k2", Type: "a", GPUs: 1, Current: gpus("a-1", 0)},
		{Job: "n", Type: "a", GPUs: 4},
	}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, []string{"k1"}, res.Evicted)
	assert.Equal(t, []string{"k1"}, res.Migrated)
	assert.Empty(t, res.Unplaced)
	assert.Equal(t, gpus("a-0", 0, 1, 2, 3), res.Placements["n"])
	assert.Equal(t, gpus("a-1", 1), res.Placements["k1"])
	assert.Equal(t, gpus("a-1", 0), res.Placements["k2"])
	checkResult(t, nodes, reqs, res, true)

	// Fewest victims: node 0 has two 1-GPU jobs, node 1 one 2-GPU job; a
	// 4-GPU job needs 2 freed GPUs on a node: evicting the single 2-GPU
	// job wins over two 1-GPU jobs.
	reqs = []Request{
		{Job: "a", Type: "a", GPUs: 1, Current: gpus("a-0", 0)},
		{Job: "b", Type: "a", GPUs: 1, Current: gpus("a-0", 1)},
		{Job: "c", Type: "a", GPUs: 2, Current: gpus("a-1", 0, 1)},
		{Job: "n", Type: "a", GPUs: 4},
	}
	res, err = Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, res.Evicted)
	assert.Equal(t, gpus("a-1", 0, 1, 2, 3), res.Placements["n"])
	assert.Equal(t, gpus("a-0", 2, 3), res.Placements["c"])
	checkResult(t, nodes, reqs, res, true)
}

func TestPinnedNeverEvicted(t *testing.T) {
	nodes := mkNodes("a", 2, 4)
	reqs := []Request{
		{Job: "k1", Type: "a", GPUs: 1, Current: gpus("a-0", 0), Pinned: true},
		{Job: "k2", Type: "a", GPUs: 1, Current: gpus("a-1", 0)},
		{Job: "n", Type: "a", GPUs: 4},
	}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, []string{"k2"}, res.Evicted)
	assert.Equal(t, gpus("a-0", 0), res.Placements["k1"])
	assert.Equal(t, gpus("a-1", 0, 1, 2, 3), res.Placements["n"])
	checkResult(t, nodes, reqs, res, true)

	// both pinned: the 4-GPU job cannot be placed
	reqs[1].Pinned = true
	res, err = Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, []string{"n"}, res.Unplaced)
	assert.Empty(t, res.Evicted)
	checkResult(t, nodes, reqs, res, false)

	// the re-pack also keeps pinned jobs in place
	reqs[1].Pinned = false
	p, err := newProblem(nodes, reqs)
	require.NoError(t, err)
	res = p.run(false)
	assert.Equal(t, []string{"k2"}, res.Evicted)
	assert.Equal(t, gpus("a-0", 0), res.Placements["k1"])
	checkResult(t, nodes, reqs, res, true)
}

func TestWholeNodeFallback(t *testing.T) {
	// 12 GPUs on two 6-GPU nodes take both nodes whole.
	nodes := mkNodes("v", 2, 6)
	reqs := []Request{{Job: "r", Type: "v", GPUs: 12}}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, cat(gpus("v-0", 0, 1, 2, 3, 4, 5), gpus("v-1", 0, 1, 2, 3, 4, 5)), res.Placements["r"])
	checkResult(t, nodes, reqs, res, true)
	// with three nodes too: (2,12) is whole nodes
	nodes = mkNodes("v", 3, 6)
	res, err = Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, cat(gpus("v-0", 0, 1, 2, 3, 4, 5), gpus("v-1", 0, 1, 2, 3, 4, 5)), res.Placements["r"])
}

func TestUnplaceableOffChainSizes(t *testing.T) {
	// Three 4-GPU jobs do not fit two 6-GPU nodes without splitting one:
	// 4 is no configuration of a 6-GPU node, and configset charges a rigid
	// 4-GPU job the whole node (6), so an allocator never asks for this.
	// Place reports the job it cannot place.
	nodes := mkNodes("v", 2, 6)
	reqs := []Request{{Job: "a", Type: "v", GPUs: 4}, {Job: "b", Type: "v", GPUs: 4}, {Job: "c", Type: "v", GPUs: 4}}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, res.Unplaced)
	assert.Len(t, res.Placements, 2)
	checkResult(t, nodes, reqs, res, false)
}

func TestPlaceErrors(t *testing.T) {
	nodes := append(mkNodes("a", 2, 4), mkNodes("b", 1, 8)...)
	for _, tc := range []struct {
		name  string
		nodes []Node
		reqs  []Request
		field string
		sub   []string
	}{
		{"empty node ID", []Node{{ID: "", Type: "a", GPUs: 4}}, nil, "ID", []string{"empty ID"}},
		{"duplicate node", []Node{{ID: "x", Type: "a", GPUs: 4}, {ID: "x", Type: "a", GPUs: 4}}, nil, "ID", []string{`node "x"`, "duplicate"}},
		{"empty type", []Node{{ID: "x", GPUs: 4}}, nil, "Type", []string{`node "x"`}},
		{"zero GPUs node", []Node{{ID: "x", Type: "a", GPUs: 0}}, nil, "GPUs", []string{`node "x"`, "got 0"}},
		{"huge node", []Node{{ID: "x", Type: "a", GPUs: MaxNodeGPUs + 1}}, nil, "GPUs", []string{`node "x"`, "got 4097"}},
		{"empty job", nodes, []Request{{Type: "a", GPUs: 1}}, "Job", []string{"empty job ID"}},
		{"duplicate job", nodes, []Request{{Job: "j", Type: "a", GPUs: 1}, {Job: "j", Type: "a", GPUs: 1}}, "Job", []string{`job "j"`, "duplicate"}},
		{"negative GPUs", nodes, []Request{{Job: "j", Type: "a", GPUs: -2}}, "GPUs", []string{`job "j"`, "got -2"}},
		{"unknown type", nodes, []Request{{Job: "j", Type: "zz", GPUs: 1}}, "Type", []string{`job "j"`, `type "zz"`}},
		{"too many GPUs", nodes, []Request{{Job: "j", Type: "a", GPUs: 9}}, "GPUs", []string{`job "j"`, "requests 9 GPUs, the type has 8"}},
		{"over capacity", nodes, []Request{{Job: "j", Type: "a", GPUs: 8}, {Job: "k", Type: "a", GPUs: 1}}, "GPUs", []string{`type "a"`, "total 9"}},
		{"unknown node", nodes, []Request{{Job: "j", Type: "a", GPUs: 1, Current: gpus("nope", 0)}}, "Current", []string{`job "j"`, `node "nope"`, "unknown node"}},
		{"index out of range", nodes, []Request{{Job: "j", Type: "a", GPUs: 1, Current: gpus("a-0", 4)}}, "Current", []string{`node "a-0"`, "index 4"}},
		{"negative index", nodes, []Request{{Job: "j", Type: "a", GPUs: 1, Current: gpus("a-0", -1)}}, "Current", []string{"index -1"}},
		{"claimed twice", nodes, []Request{{Job: "j", Type: "a", GPUs: 1, Current: gpus("a-0", 1)}, {Job: "k", Type: "a", GPUs: 1, Current: gpus("a-0", 1)}}, "Current", []string{`job "k"`, `also by job "j"`}},
		{"claimed twice by one job", nodes, []Request{{Job: "j", Type: "a", GPUs: 2, Current: gpus("a-0", 1, 1)}}, "Current", []string{"twice by this job"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Place(tc.nodes, tc.reqs)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.field, ie.Field)
			for _, s := range tc.sub {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

func TestDeterministicAcrossRequestOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for iter := 0; iter < 50; iter++ {
		sc := randomScenario(rng, false, true)
		r1, err := Place(sc.nodes, sc.reqs)
		require.NoError(t, err)
		shuffled := slices.Clone(sc.reqs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		r2, err := Place(sc.nodes, shuffled)
		require.NoError(t, err)
		require.Equal(t, r1, r2)
	}
}

// TestErrorsAcrossRequestOrder: with several bad requests, the error is the
// same whatever the order of the requests (the first bad request in job ID
// order), although placement reads the requests in their given order.
func TestErrorsAcrossRequestOrder(t *testing.T) {
	nodes := append(mkNodes("a", 2, 4), mkNodes("b", 1, 8)...)
	reqs := []Request{
		{Job: "d", Type: "a", GPUs: 1, Current: gpus("a-0", 1)},
		{Job: "b", Type: "zz", GPUs: 1},
		{Job: "e", Type: "a", GPUs: 1, Current: gpus("a-0", 1)},
		{Job: "c", Type: "a", GPUs: -1},
		{Job: "f", Type: "b", GPUs: 1, Current: gpus("nope", 0)},
		{Job: "c", Type: "a", GPUs: 1},
		{Job: "g", Type: "a", GPUs: 2, Current: gpus("b-0", 9)},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	_, want := Place(nodes, reqs)
	require.ErrorIs(t, want, ErrInvalidInput)
	assert.Contains(t, want.Error(), `job "b"`, "b is the first bad job by ID")
	for iter := 0; iter < 40; iter++ {
		shuffled := slices.Clone(reqs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		_, err := Place(nodes, shuffled)
		require.Equal(t, want.Error(), err.Error(), "order %v", shuffled)
		// without the job with the unknown type: the duplicate or the
		// negative count of c, then the GPU claimed by d and e
		rest := slices.DeleteFunc(slices.Clone(shuffled), func(r Request) bool { return r.Job == "b" })
		_, err = Place(nodes, rest)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `job "c"`)
		rest = slices.DeleteFunc(rest, func(r Request) bool { return r.Job == "c" })
		_, err = Place(nodes, rest)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `job "e"`)
		assert.Contains(t, err.Error(), `also by job "d"`)
	}
}

// checkResult verifies the invariants of a result: GPUs exist and are not
// shared, counts and shapes match requests, kept jobs keep their GPUs unless
// evicted, Migrated and Evicted are consistent. With all, every request must
// be placed.
func checkResult(t *testing.T, nodes []Node, reqs []Request, res Result, all bool) {
	t.Helper()
	size := map[string]int{}
	typ := map[string]string{}
	maxNode := map[string]int{}
	for _, n := range nodes {
		size[n.ID] = n.GPUs
		typ[n.ID] = n.Type
		maxNode[n.Type] = max(maxNode[n.Type], n.GPUs)
	}
	owner := map[GPU]string{}
	evicted := map[string]bool{}
	for _, e := range res.Evicted {
		evicted[e] = true
	}
	unplaced := map[string]bool{}
	for _, u := range res.Unplaced {
		unplaced[u] = true
	}
	require.True(t, sort.StringsAreSorted(res.Evicted))
	require.True(t, sort.StringsAreSorted(res.Migrated))
	require.True(t, sort.StringsAreSorted(res.Unplaced))
	var wantMig []string
	for _, r := range reqs {
		got, ok := res.Placements[r.Job]
		if r.GPUs == 0 {
			require.False(t, ok, r.Job)
			continue
		}
		if !ok {
			require.True(t, unplaced[r.Job], "job %s neither placed nor unplaced", r.Job)
			require.False(t, all, "job %s unplaced", r.Job)
			continue
		}
		require.False(t, unplaced[r.Job])
		require.Len(t, got, r.GPUs, r.Job)
		perNode := map[string]int{}
		for _, g := range got {
			require.Contains(t, size, g.Node, "job %s on unknown node", r.Job)
			require.GreaterOrEqual(t, g.Index, 0)
			require.Less(t, g.Index, size[g.Node], "job %s GPU %v", r.Job, g)
			require.Equal(t, r.Type, typ[g.Node], "job %s on wrong type", r.Job)
			if o, dup := owner[g]; dup {
				t.Fatalf("GPU %v given to %s and %s", g, o, r.Job)
			}
			owner[g] = r.Job
			perNode[g.Node]++
		}
		sameType := len(r.Current) > 0
		for _, g := range r.Current {
			sameType = sameType && typ[g.Node] == r.Type
		}
		cur := slices.Clone(r.Current)
		sortGPUs(cur, nodes)
		curNodes := map[string]bool{}
		inPool := sameType
		for _, g := range r.Current {
			curNodes[g.Node] = true
			inPool = inPool && (r.NodeGPUs == 0 || size[g.Node] == r.NodeGPUs)
		}
		kept := inPool && len(cur) == r.GPUs && (r.Nodes == 0 || len(curNodes) == r.Nodes)
		if kept && !evicted[r.Job] {
			require.Equal(t, cur, got, "kept job %s moved without eviction", r.Job)
		}
		if evicted[r.Job] {
			require.True(t, kept, "evicted job %s was not kept", r.Job)
			require.False(t, r.Pinned, "pinned job %s evicted", r.Job)
			require.NotEqual(t, cur, got)
		}
		if !kept || evicted[r.Job] {
			// rules (a), (b) and the rigid shapes
			var counts []int
			for _, c := range perNode {
				counts = append(counts, c)
			}
			sort.Sort(sort.Reverse(sort.IntSlice(counts)))
			nodeGPUs := maxNode[r.Type]
			if r.NodeGPUs > 0 {
				nodeGPUs = r.NodeGPUs
				for n := range perNode {
					require.Equal(t, r.NodeGPUs, size[n], "job %s off its pool", r.Job)
				}
			}
			require.Equal(t, shapeOn(r.GPUs, r.Nodes, nodeGPUs), counts, "job %s shape", r.Job)
		}
		if len(r.Current) > 0 && (!sameType || (len(cur) == r.GPUs && !slices.Equal(cur, got))) {
			wantMig = append(wantMig, r.Job)
		}
	}
	sort.Strings(wantMig)
	require.Equal(t, wantMig, res.Migrated)
	for _, u := range res.Unplaced {
		_, ok := res.Placements[u]
		require.False(t, ok)
	}
}

func sortGPUs(gs []GPU, nodes []Node) {
	pos := map[string]int{}
	for i, n := range nodes {
		pos[n.ID] = i
	}
	slices.SortFunc(gs, func(a, b GPU) int {
		if pos[a.Node] != pos[b.Node] {
			return pos[a.Node] - pos[b.Node]
		}
		return a.Index - b.Index
	})
}

type scenario struct {
	nodes []Node
	reqs  []Request
}

// shapesOf lists the configuration shapes of a type with n nodes of r GPUs:
// the chain of r (configset.Chain) in one node, and k·r for 2 ≤ k ≤ n.
func shapesOf(r, n int) []int {
	out := configset.Chain(r)
	for k := 2; k <= n; k++ {
		out = append(out, k*r)
	}
	return out
}

// fits reports whether a multiset of configuration shapes fits n nodes of r
// GPUs: with chain sizes in one node and whole nodes beyond, capacity is
// exact (configset.Chain).
func fits(items []int, r, n int) bool {
	sum := 0
	for _, it := range items {
		sum += it
	}
	return sum <= r*n
}

// randomDemand draws shapes for a type until a random fill level.
func randomDemand(rng *rand.Rand, r, n int) []int {
	shapes := shapesOf(r, n)
	var items []int
	target := rng.Float64() * 1.2
	capa := r * n
	used := 0
	for tries := 0; tries < 200 && float64(used) < target*float64(capa); tries++ {
		// small shapes are more common
		s := shapes[min(len(shapes)-1, int(float64(len(shapes))*rng.Float64()*rng.Float64()))]
		if fits(append(slices.Clone(items), s), r, n) {
			items = append(items, s)
			used += s
		}
	}
	return items
}

// randomScenario builds a random cluster, a previous round placed by Place,
// and a next round that keeps, resizes, moves, drops and adds jobs.
func randomScenario(rng *rand.Rand, nonPow2, pins bool) scenario {
	sizes := []int{1, 2, 4, 8, 16}
	if nonPow2 {
		sizes = append(sizes, 6, 12, 3)
	}
	var nodes []Node
	type tinfo struct {
		name string
		r, n int
	}
	var types []tinfo
	for i := 0; i < 1+rng.IntN(3); i++ {
		ti := tinfo{fmt.Sprintf("t%d", i), sizes[rng.IntN(len(sizes))], 1 + rng.IntN(8)}
		types = append(types, ti)
		nodes = append(nodes, mkNodes(ti.name, ti.n, ti.r)...)
	}
	// previous round
	var prev []Request
	jobID := 0
	for _, ti := range types {
		for _, s := range randomDemand(rng, ti.r, ti.n) {
			prev = append(prev, Request{Job: fmt.Sprintf("j%03d", jobID), Type: ti.name, GPUs: s})
			jobID++
		}
	}
	res, err := Place(nodes, prev)
	if err != nil {
		panic(err)
	}
	// next round: per type, first the jobs that stay the same (if they
	// still fit), then changed and new ones
	items := map[string][]int{}
	var reqs []Request
	for _, p := range prev {
		cur, ok := res.Placements[p.Job]
		if !ok || rng.IntN(4) == 0 { // finished (or unplaced before)
			continue
		}
		p.Current = cur
		p.Pinned = pins && rng.IntN(6) == 0
		ti := types[0]
		for _, x := range types {
			if x.name == p.Type {
				ti = x
			}
		}
		switch rng.IntN(4) {
		case 0: // resize or change type
			nt := types[rng.IntN(len(types))]
			sh := shapesOf(nt.r, nt.n)
			p.Type, p.GPUs = nt.name, sh[rng.IntN(len(sh))]
			ti = nt
		case 1:
			p.GPUs = 0
		}
		if p.GPUs > 0 {
			if !fits(append(slices.Clone(items[p.Type]), p.GPUs), ti.r, ti.n) {
				p.GPUs = 0
			} else {
				items[p.Type] = append(items[p.Type], p.GPUs)
			}
		}
		reqs = append(reqs, p)
	}
	for _, ti := range types {
		for _, s := range randomDemand(rng, ti.r, ti.n) {
			if fits(append(slices.Clone(items[ti.name]), s), ti.r, ti.n) {
				items[ti.name] = append(items[ti.name], s)
				reqs = append(reqs, Request{Job: fmt.Sprintf("j%03d", jobID), Type: ti.name, GPUs: s})
				jobID++
			}
		}
	}
	rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return scenario{nodes, reqs}
}

func TestPropertyRandomRounds(t *testing.T) {
	for _, nonPow2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("nonPow2=%v", nonPow2), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(42, uint64(len(fmt.Sprint(nonPow2)))))
			jobs, evictions, pinnedUnplaced := 0, 0, 0
			for iter := 0; iter < 400; iter++ {
				sc := randomScenario(rng, nonPow2, false)
				res, err := Place(sc.nodes, sc.reqs)
				require.NoError(t, err)
				checkResult(t, sc.nodes, sc.reqs, res, true)
				jobs += len(sc.reqs)
				evictions += len(res.Evicted)

				// with pinned jobs a packable set may become unplaceable;
				// the invariants must hold regardless
				sc = randomScenario(rng, nonPow2, true)
				res, err = Place(sc.nodes, sc.reqs)
				require.NoError(t, err)
				checkResult(t, sc.nodes, sc.reqs, res, false)
				pinnedUnplaced += len(res.Unplaced)
			}
			t.Logf("%d requests, %d evictions; with pins: %d unplaced", jobs, evictions, pinnedUnplaced)
			assert.Less(t, float64(evictions), 0.05*float64(jobs), "evictions should be rare")
		})
	}
}

// TestEvictionsMinimalBruteForce compares the number of evicted jobs with the
// least number of kept jobs that must move for all requests to be placed
// (exhaustive search) on tiny clusters.
func TestEvictionsMinimalBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	worse, total, withEvictions, infeasible := 0, 0, 0, 0
	for iter := 0; iter < 400; iter++ {
		r := []int{2, 4, 8}[rng.IntN(3)]
		n := 2 + rng.IntN(2)
		nodes := mkNodes("a", n, r)
		// random kept single-node jobs at random free positions
		free := allFree(nodes, r)
		var reqs []Request
		var items []int
		for k := 0; k < 1+rng.IntN(4); k++ {
			s := 1 << rng.IntN(bits.Len(uint(r)))
			nd := nodes[rng.IntN(n)]
			cur := occupy(rng, free, nd.ID, r, s)
			if cur == nil {
				continue
			}
			items = append(items, s)
			reqs = append(reqs, Request{Job: fmt.Sprintf("k%d", k), Type: "a", GPUs: s, Current: cur, Pinned: rng.IntN(4) == 0})
		}
		for k := 0; k < 3; k++ {
			sh := shapesOf(r, n)
			s := sh[rng.IntN(len(sh))]
			if fits(append(slices.Clone(items), s), r, n) {
				items = append(items, s)
				reqs = append(reqs, Request{Job: fmt.Sprintf("n%d", k), Type: "a", GPUs: s})
			}
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err)
		best := minEvictions(nodes, reqs)
		if best < 0 {
			// pins make the set unplaceable
			require.NotEmpty(t, res.Unplaced)
			checkResult(t, nodes, reqs, res, false)
			infeasible++
			continue
		}
		checkResult(t, nodes, reqs, res, true)
		require.GreaterOrEqual(t, len(res.Evicted), best, "fewer evictions than the brute-force minimum?")
		total++
		if best > 0 {
			withEvictions++
		}
		if len(res.Evicted) > best {
			worse++
		}
	}
	t.Logf("%d cases, %d need evictions, %d with more evictions than the minimum; %d unplaceable because of pins", total, withEvictions, worse, infeasible)
	assert.Zero(t, worse)
}

// minEvictions returns the least number of kept jobs that must move so that
// every request can be placed by its shape (exhaustive), or -1 if pinned
// jobs make that impossible.
func minEvictions(nodes []Node, reqs []Request) int {
	var kept []int
	for i, r := range reqs {
		if len(r.Current) == r.GPUs && r.GPUs > 0 && !r.Pinned {
			kept = append(kept, i)
		}
	}
	r := nodes[0].GPUs
	for k := 0; k <= len(kept); k++ {
		found := false
		forSubsets(len(kept), k, func(sub []int) {
			if found {
				return
			}
			moved := map[int]bool{}
			for _, s := range sub {
				moved[kept[s]] = true
			}
			freeN := map[string]int{}
			for _, nd := range nodes {
				freeN[nd.ID] = nd.GPUs
			}
			var parts [][]int
			for i, q := range reqs {
				if len(q.Current) == q.GPUs && !moved[i] {
					for _, g := range q.Current {
						freeN[g.Node]--
					}
					continue
				}
				parts = append(parts, Shape(q.GPUs, r))
			}
			free := make([]int, len(nodes))
			for i, nd := range nodes {
				free[i] = freeN[nd.ID]
			}
			if packParts(parts, free) {
				found = true
			}
		})
		if found {
			return k
		}
	}
	return -1
}

func forSubsets(n, k int, f func([]int)) {
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			f(cur)
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
}

// packParts reports whether every job's parts fit the free counts, each part
// of a job on a distinct node.
func packParts(jobs [][]int, free []int) bool {
	var rec func(j, p int, used []bool) bool
	rec = func(j, p int, used []bool) bool {
		if j == len(jobs) {
			return true
		}
		if p == len(jobs[j]) {
			return rec(j+1, 0, make([]bool, len(free)))
		}
		s := jobs[j][p]
		for n := range free {
			if !used[n] && free[n] >= s {
				free[n] -= s
				used[n] = true
				ok := rec(j, p+1, used)
				used[n] = false
				free[n] += s
				if ok {
					return true
				}
			}
		}
		return false
	}
	return rec(0, 0, make([]bool, len(free)))
}

func TestMinVictims(t *testing.T) {
	c := []victim{{job: 1, freed: 1, cost: 1, id: "a"}, {job: 2, freed: 1, cost: 1, id: "b"}, {job: 3, freed: 2, cost: 2, id: "c"}, {job: 4, freed: 4, cost: 4, id: "d"}}
	set, count, cost, ok := minVictims(slices.Clone(c), 2)
	require.True(t, ok)
	assert.Equal(t, []int{3}, set)
	assert.Equal(t, 1, count)
	assert.Equal(t, 2, cost)
	set, count, _, ok = minVictims(slices.Clone(c), 5)
	require.True(t, ok)
	assert.Equal(t, []int{1, 4}, set)
	assert.Equal(t, 2, count)
	_, _, _, ok = minVictims(slices.Clone(c), 9)
	assert.False(t, ok)
	set, count, _, ok = minVictims(nil, 0)
	assert.True(t, ok)
	assert.Empty(t, set)
	assert.Zero(t, count)
	// a multi-node victim frees 2 here but costs 8
	m := []victim{{job: 1, freed: 2, cost: 8, id: "m"}, {job: 2, freed: 2, cost: 2, id: "z"}}
	set, _, cost, ok = minVictims(m, 2)
	require.True(t, ok)
	assert.Equal(t, []int{2}, set)
	assert.Equal(t, 2, cost)
}

func TestInputErrorMessage(t *testing.T) {
	err := error(&InputError{Job: "j", Node: "n", Type: "t", Field: "Current", Reason: "bad"})
	assert.Equal(t, `placement: invalid input: job "j" node "n" type "t" Current: bad`, err.Error())
	assert.True(t, errors.Is(err, ErrInvalidInput))
	assert.Equal(t, "n1/3", GPU{"n1", 3}.String())
}

// TestRepack disables incremental evictions so that fragmentation is resolved
// by re-packing the type; the invariants must still hold and every request
// of a packable set must be placed.
func TestRepack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	repacked := 0
	for iter := 0; iter < 300; iter++ {
		sc := randomScenario(rng, iter%2 == 0, false)
		p, err := newProblem(sc.nodes, sc.reqs)
		require.NoError(t, err)
		res := p.run(false)
		checkResult(t, sc.nodes, sc.reqs, res, true)
		repacked += len(res.Evicted)
	}
	require.Positive(t, repacked, "the scenarios never needed a re-pack")

	// the smallest case: one kept 1-GPU job in the middle of each node
	nodes := mkNodes("a", 2, 4)
	reqs := []Request{
		{Job: "k1", Type: "a", GPUs: 1, Current: gpus("a-0", 2)},
		{Job: "k2", Type: "a", GPUs: 1, Current: gpus("a-1", 2)},
		{Job: "n", Type: "a", GPUs: 4},
	}
	p, err := newProblem(nodes, reqs)
	require.NoError(t, err)
	res := p.run(false)
	checkResult(t, nodes, reqs, res, true)
	// n goes first (largest) to the earliest free node; k1's GPU is gone
	assert.Equal(t, []string{"k1"}, res.Evicted)
	assert.Equal(t, gpus("a-0", 0, 1, 2, 3), res.Placements["n"])
	assert.Equal(t, gpus("a-1", 2), res.Placements["k2"])
	assert.Equal(t, gpus("a-1", 0), res.Placements["k1"])
}

// TestLargeRounds checks the invariants on the benchmark scenarios (the
// default heterogeneous cluster scaled 8× and 32×, 300 and 1500 jobs, the
// cluster full): every request placed, at most a handful of evictions.
func TestLargeRounds(t *testing.T) {
	for _, c := range []struct{ scale, jobs int }{{8, 300}, {32, 1500}} {
		nodes, reqs := benchScenario(t, c.scale, c.jobs)
		res, err := Place(nodes, reqs)
		require.NoError(t, err)
		checkResult(t, nodes, reqs, res, true)
		assert.LessOrEqual(t, len(res.Evicted), 3, "scale %d", c.scale)
	}
}

// TestMultiRound feeds each round's placement back as the next round's
// current GPUs while jobs finish, arrive, resize and change type; every
// round must place every request and evict rarely.
func TestMultiRound(t *testing.T) {
	type tinfo struct {
		name string
		r, n int
	}
	types := []tinfo{{"t4", 4, 24}, {"a100", 8, 8}, {"rtx", 8, 12}, {"v6", 6, 6}}
	var nodes []Node
	for _, ti := range types {
		nodes = append(nodes, mkNodes(ti.name, ti.n, ti.r)...)
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	cur := map[string][]GPU{}
	alloc := map[string]Request{}
	next := 0
	requests, evictions := 0, 0
	for round := 0; round < 60; round++ {
		items := map[string][]int{}
		var reqs []Request
		var ids []string
		for id := range alloc {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			r := alloc[id]
			switch x := rng.IntN(10); {
			case x == 0: // finished
				delete(alloc, id)
				delete(cur, id)
				continue
			case x <= 2: // resize or move
				ti := types[rng.IntN(len(types))]
				sh := shapesOf(ti.r, min(ti.n, 64/ti.r))
				r.Type, r.GPUs = ti.name, sh[min(len(sh)-1, int(float64(len(sh))*rng.Float64()*rng.Float64()))]
			}
			var ti tinfo
			for _, x := range types {
				if x.name == r.Type {
					ti = x
				}
			}
			if !fits(append(slices.Clone(items[r.Type]), r.GPUs), ti.r, ti.n) {
				r.GPUs = 0 // preempted this round
			} else {
				items[r.Type] = append(items[r.Type], r.GPUs)
			}
			r.Current = cur[id]
			reqs = append(reqs, r)
		}
		for k := 0; k < 8; k++ {
			ti := types[rng.IntN(len(types))]
			sh := shapesOf(ti.r, min(ti.n, 64/ti.r))
			s := sh[min(len(sh)-1, int(float64(len(sh))*rng.Float64()*rng.Float64()))]
			if fits(append(slices.Clone(items[ti.name]), s), ti.r, ti.n) {
				items[ti.name] = append(items[ti.name], s)
				reqs = append(reqs, Request{Job: fmt.Sprintf("j%04d", next), Type: ti.name, GPUs: s})
				next++
			}
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err, "round %d", round)
		checkResult(t, nodes, reqs, res, true)
		requests += len(reqs)
		evictions += len(res.Evicted)
		for _, r := range reqs {
			if r.GPUs == 0 {
				delete(cur, r.Job)
				r.Type = alloc[r.Job].Type
			} else {
				cur[r.Job] = res.Placements[r.Job]
			}
			r.Current = nil
			if r.GPUs == 0 {
				r.GPUs = 1 // asks again next round
			}
			alloc[r.Job] = r
		}
	}
	t.Logf("%d requests over 60 rounds, %d evictions", requests, evictions)
	assert.Less(t, float64(evictions), 0.02*float64(requests))
}

// TestRigidBruteForce compares, on tiny clusters with arbitrary (rigid) GPU
// counts, whether Place places every request with whether any placement by
// the same shapes exists (exhaustive search).
func TestRigidBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	feasible, missed := 0, 0
	for iter := 0; iter < 3000; iter++ {
		r := []int{2, 3, 4, 5, 6, 7, 8, 12}[rng.IntN(8)]
		n := 2 + rng.IntN(2)
		nodes := mkNodes("a", n, r)
		var reqs []Request
		total := 0
		for k := 0; k < 1+rng.IntN(5); k++ {
			g := 1 + rng.IntN(r+2)
			if total+g > r*n {
				break
			}
			total += g
			reqs = append(reqs, Request{Job: fmt.Sprintf("j%d", k), Type: "a", GPUs: g})
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err)
		checkResult(t, nodes, reqs, res, false)
		// exhaustive: each job by its shape or its fallback shape
		var options [][][]int
		for _, q := range reqs {
			options = append(options, [][]int{Shape(q.GPUs, r)})
		}
		free := make([]int, n)
		for i := range free {
			free[i] = r
		}
		ok := false
		var rec func(i int, chosen [][]int)
		rec = func(i int, chosen [][]int) {
			if ok {
				return
			}
			if i == len(options) {
				ok = packParts(chosen, slices.Clone(free))
				return
			}
			for _, o := range options[i] {
				rec(i+1, append(chosen, o))
			}
		}
		rec(0, nil)
		if ok {
			feasible++
			if len(res.Unplaced) > 0 {
				missed++
				if missed <= 5 {
					var gs []int
					for _, q := range reqs {
						gs = append(gs, q.GPUs)
					}
					t.Logf("r=%d n=%d requests %v unplaced %v", r, n, gs, res.Unplaced)
				}
			}
		} else {
			require.NotEmpty(t, res.Unplaced, "placed a set the exhaustive search cannot")
		}
	}
	t.Logf("%d feasible rigid sets, %d not fully placed", feasible, missed)
	assert.Zero(t, missed)
}

// TestRigidEvictionsBruteForce is TestEvictionsMinimalBruteForce with
// arbitrary (rigid) GPU counts for kept and new jobs.
func TestRigidEvictionsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 13))
	cases, feasible, missed, worse := 0, 0, 0, 0
	for iter := 0; iter < 1500; iter++ {
		r := []int{4, 8}[rng.IntN(2)]
		n := 2 + rng.IntN(2)
		nodes := mkNodes("a", n, r)
		free := allFree(nodes, r)
		var reqs []Request
		total := 0
		for k := 0; k < 1+rng.IntN(4); k++ {
			s := 1 + rng.IntN(r)
			nd := nodes[rng.IntN(n)]
			cur := occupy(rng, free, nd.ID, r, s)
			if cur == nil {
				continue
			}
			total += s
			reqs = append(reqs, Request{Job: fmt.Sprintf("k%d", k), Type: "a", GPUs: s, Current: cur})
		}
		for k := 0; k < 3; k++ {
			g := 1 + rng.IntN(r+r/2)
			if total+g <= r*n {
				total += g
				reqs = append(reqs, Request{Job: fmt.Sprintf("n%d", k), Type: "a", GPUs: g})
			}
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err)
		checkResult(t, nodes, reqs, res, false)
		cases++
		best := minEvictions(nodes, reqs)
		if best < 0 {
			require.NotEmpty(t, res.Unplaced, "placed a set the exhaustive search cannot")
			continue
		}
		feasible++
		if len(res.Unplaced) > 0 {
			missed++
			continue
		}
		require.GreaterOrEqual(t, len(res.Evicted), best)
		if len(res.Evicted) > best {
			worse++
			if worse <= 4 {
				t.Logf("r=%d n=%d best %d got %v: %+v", r, n, best, res.Evicted, reqs)
			}
		}
	}
	t.Logf("%d cases, %d feasible, %d not fully placed, %d with more evictions than the minimum", cases, feasible, missed, worse)
	assert.Zero(t, missed)
	assert.LessOrEqual(t, worse, feasible/100)
}

// allFree marks every GPU of nodes (r GPUs each) free.
func allFree(nodes []Node, r int) map[GPU]bool {
	free := map[GPU]bool{}
	for _, nd := range nodes {
		for i := 0; i < r; i++ {
			free[GPU{nd.ID, i}] = true
		}
	}
	return free
}

// occupy picks s of the free GPUs of node (r GPUs), each free one taken
// with probability 2/3 in index order, and marks them used; nil (nothing
// marked) when fewer than s were picked.
func occupy(rng *rand.Rand, free map[GPU]bool, node string, r, s int) []GPU {
	var cur []GPU
	for i := 0; i < r && len(cur) < s; i++ {
		if free[GPU{node, i}] && rng.IntN(3) > 0 {
			cur = append(cur, GPU{node, i})
		}
	}
	if len(cur) < s {
		return nil
	}
	for _, g := range cur {
		free[g] = false
	}
	return cur
}

// TestExactBruteForce: on pools of every node size 1..16 with pinned jobs on
// random GPUs and new jobs of any count (chain sizes, whole nodes, rigid
// remainders), Place places every request whenever an exhaustive search
// finds a placement by the same shapes with the pinned jobs where they are;
// and never claims a placement that does not exist.
func TestExactBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	feasible, missed := 0, 0
	for iter := 0; iter < 3000; iter++ {
		r := 1 + iter%16
		n := 2 + rng.IntN(2)
		nodes := mkNodes("a", n, r)
		free := allFree(nodes, r)
		var reqs []Request
		total := 0
		for k := 0; k < rng.IntN(6); k++ {
			s := 1 + rng.IntN(r)
			cur := occupy(rng, free, nodes[rng.IntN(n)].ID, r, s)
			if cur == nil {
				continue
			}
			total += s
			reqs = append(reqs, Request{Job: fmt.Sprintf("p%d", k), Type: "a", GPUs: s, Current: cur, Pinned: true})
		}
		for k := 0; k < 2+rng.IntN(4); k++ {
			var g int
			switch rng.IntN(3) {
			case 0: // a chain size
				ch := configset.Chain(r)
				g = ch[rng.IntN(len(ch))]
			case 1: // whole nodes
				g = r * (1 + rng.IntN(n))
			default: // any count
				g = 1 + rng.IntN(r*n)
			}
			if total+g <= r*n {
				total += g
				reqs = append(reqs, Request{Job: fmt.Sprintf("n%d", k), Type: "a", GPUs: g})
			}
		}
		res, err := Place(nodes, reqs)
		require.NoError(t, err)
		checkResult(t, nodes, reqs, res, false)
		freeN := make([]int, n)
		var parts [][]int
		for i := range freeN {
			freeN[i] = r
		}
		for _, q := range reqs {
			if q.Pinned {
				for _, g := range q.Current {
					freeN[g.Node[len("a-"):][0]-'0']--
				}
				continue
			}
			parts = append(parts, Shape(q.GPUs, r))
		}
		if !packParts(parts, freeN) {
			require.NotEmpty(t, res.Unplaced, "placed a set the exhaustive search cannot")
			continue
		}
		feasible++
		if len(res.Unplaced) > 0 {
			missed++
			t.Logf("r=%d n=%d %+v: unplaced %v", r, n, reqs, res.Unplaced)
		}
	}
	t.Logf("%d feasible sets, %d not fully placed", feasible, missed)
	assert.Zero(t, missed)
}

// TestExactPacking: best fit, largest first, fails on 5 4 3 3 3 2 into two
// 10-GPU nodes (5+4, then 3+3+3, and 2 is left); the exact search finds
// 5+3+2 and 4+3+3, and a job re-takes its own GPUs on the node it gets.
func TestExactPacking(t *testing.T) {
	nodes := mkNodes("a", 2, 10)
	reqs := []Request{
		{Job: "a5", Type: "a", GPUs: 5}, {Job: "b4", Type: "a", GPUs: 4, Current: gpus("a-1", 6, 7, 8)},
		{Job: "c3", Type: "a", GPUs: 3}, {Job: "d3", Type: "a", GPUs: 3}, {Job: "e3", Type: "a", GPUs: 3}, {Job: "f2", Type: "a", GPUs: 2},
	}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	assert.Empty(t, res.Unplaced)
	assert.Subset(t, res.Placements["b4"], gpus("a-1", 6, 7, 8))
	checkResult(t, nodes, reqs, res, true)
}

// TestPools: on a type with 8- and 6-GPU nodes, NodeGPUs keeps a job on its
// pool, Nodes fixes its node count, and a kept job must match both.
func TestPools(t *testing.T) {
	nodes := append(mkNodes("e", 2, 8), mkNodes("s", 3, 6)...)
	for i := range nodes {
		nodes[i].Type = "a100"
	}
	reqs := []Request{
		{Job: "w12", Type: "a100", GPUs: 12, NodeGPUs: 6, Nodes: 2},
		{Job: "w8", Type: "a100", GPUs: 8, NodeGPUs: 8, Nodes: 1},
		{Job: "s6", Type: "a100", GPUs: 6, NodeGPUs: 6, Nodes: 1},
		// kept: 4 GPUs on one 8-GPU node
		{Job: "k4", Type: "a100", GPUs: 4, NodeGPUs: 8, Nodes: 1, Current: gpus("e-1", 0, 1, 2, 3)},
		// same count but asked on 2 nodes: not kept, split 2 + 2
		{Job: "m4", Type: "a100", GPUs: 4, NodeGPUs: 8, Nodes: 2, Current: gpus("e-1", 4, 5, 6, 7)},
	}
	res, err := Place(nodes, reqs)
	require.NoError(t, err)
	checkResult(t, nodes, reqs, res, false)
	assert.Equal(t, gpus("e-1", 0, 1, 2, 3), res.Placements["k4"])
	assert.Equal(t, []string{"m4"}, res.Unplaced, "w8 takes e-0 whole, k4 half of e-1: no second 8-GPU node for m4")
	for _, g := range res.Placements["w12"] {
		assert.Equal(t, "s", g.Node[:1])
	}
	for _, g := range res.Placements["w8"] {
		assert.Equal(t, "e", g.Node[:1])
	}
	// the pool's capacity is checked on its own, and sizes must exist
	_, err = Place(nodes, []Request{{Job: "x", Type: "a100", GPUs: 18, NodeGPUs: 8}})
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "8-GPU nodes have 16")
	for _, r := range []Request{
		{Job: "x", Type: "a100", GPUs: 2, NodeGPUs: 4},
		{Job: "x", Type: "a100", GPUs: 2, NodeGPUs: -1},
		{Job: "x", Type: "a100", GPUs: 2, Nodes: -1},
		{Job: "x", Type: "a100", GPUs: 2, NodeGPUs: 6, Nodes: 3},
		{Job: "x", Type: "a100", GPUs: 13, NodeGPUs: 6, Nodes: 2},
	} {
		_, err := Place(nodes, []Request{r})
		var ie *InputError
		require.ErrorAs(t, err, &ie, "%+v", r)
		assert.Equal(t, "x", ie.Job)
	}
	// without NodeGPUs a job may use any node of the type
	res, err = Place(nodes, []Request{{Job: "any", Type: "a100", GPUs: 18}}) // 8 + 8 + 2
	require.NoError(t, err)
	assert.Len(t, res.Placements["any"], 18)
}

func TestShapeOn(t *testing.T) {
	assert.Equal(t, []int{8}, shapeOn(8, 0, 8))
	assert.Equal(t, []int{8}, shapeOn(8, 1, 8))
	assert.Equal(t, []int{4, 4}, shapeOn(8, 2, 8))
	assert.Equal(t, []int{3, 3, 2}, shapeOn(8, 3, 8))
	assert.Equal(t, []int{6, 6}, shapeOn(12, 2, 6))
	assert.Nil(t, shapeOn(12, 3, 3)) // 3 nodes of 3 GPUs hold 9
	assert.Nil(t, shapeOn(2, 3, 8))
	assert.Nil(t, shapeOn(13, 2, 6))
}
