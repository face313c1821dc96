package configset

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
)

func TestRunningExample(t *testing.T) {
	s, err := New([]NodeGroup{{Type: "A", GPUsPerNode: 2, Nodes: 1}, {Type: "B", GPUsPerNode: 4, Nodes: 1}}, nil)
	require.NoError(t, err)
	want := []Config{{"A", 1, 1, 0, ""}, {"A", 1, 2, 0, ""}, {"B", 1, 1, 0, ""}, {"B", 1, 2, 0, ""}, {"B", 1, 4, 0, ""}}
	assert.Equal(t, want, s.Configs())
	assert.Equal(t, []string{"A", "B"}, s.Types())
	assert.Equal(t, 2, s.Capacity("A"))
	assert.Equal(t, 4, s.Capacity("B"))
	assert.Equal(t, 0, s.Capacity("C"))
}

func TestChain(t *testing.T) {
	for _, tc := range []struct {
		r    int
		want []int
	}{
		{0, nil}, {-3, nil}, {1, []int{1}}, {2, []int{1, 2}}, {3, []int{1, 3}}, {4, []int{1, 2, 4}},
		{5, []int{1, 5}}, {6, []int{1, 2, 6}}, {7, []int{1, 7}}, {8, []int{1, 2, 4, 8}}, {9, []int{1, 3, 9}},
		{10, []int{1, 2, 10}}, {12, []int{1, 2, 4, 12}}, {15, []int{1, 3, 15}}, {16, []int{1, 2, 4, 8, 16}},
		{18, []int{1, 2, 6, 18}}, {20, []int{1, 2, 4, 20}},
	} {
		t.Run(fmt.Sprint(tc.r), func(t *testing.T) {
			assert.Equal(t, tc.want, Chain(tc.r))
		})
	}
	// property: starts at 1, ends at r, each element divides the next, and
	// for r a power of two it is every power of two up to r (paper §3.1)
	for r := 1; r <= MaxGPUsPerNode; r++ {
		c := Chain(r)
		require.Equal(t, 1, c[0], "r=%d", r)
		require.Equal(t, r, c[len(c)-1], "r=%d", r)
		for i := 1; i < len(c); i++ {
			require.Zero(t, c[i]%c[i-1], "r=%d", r)
			require.Greater(t, c[i], c[i-1], "r=%d", r)
		}
		if bits.OnesCount(uint(r)) == 1 {
			require.Len(t, c, bits.Len(uint(r)), "r=%d", r)
		}
	}
}

// TestNonPowerOfTwoNodes: nodes of 6 and 12 GPUs offer the divisible chain of
// their size in one node and whole nodes beyond. (Before pools, they were
// split into power-of-two virtual nodes, 6 → 4 + 2 and 12 → 8 + 4, which
// stranded the 2 and 4 GPUs for multi-node jobs and needed size-limit rows.)
func TestNonPowerOfTwoNodes(t *testing.T) {
	s, err := New([]NodeGroup{{Type: "six", GPUsPerNode: 6, Nodes: 3}, {Type: "twelve", GPUsPerNode: 12, Nodes: 2}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Config{{"six", 1, 1, 0, ""}, {"six", 1, 2, 0, ""}, {"six", 1, 6, 0, ""}, {"six", 2, 12, 0, ""}, {"six", 3, 18, 0, ""}}, s.ByType("six"))
	assert.Equal(t, []Config{{"twelve", 1, 1, 0, ""}, {"twelve", 1, 2, 0, ""}, {"twelve", 1, 4, 0, ""}, {"twelve", 1, 12, 0, ""}, {"twelve", 2, 24, 0, ""}}, s.ByType("twelve"))
	assert.Equal(t, []Pool{{Name: "six", Type: "six", GPUsPerNode: 6, Nodes: 3, Chain: []int{1, 2, 6}}}, s.PoolsOf("six"))
	assert.Equal(t, 18, s.Capacity("six"))
	assert.Equal(t, 24, s.Capacity("twelve"))
	assert.Equal(t, 6, s.GPUsPerNode("six"))
	assert.Equal(t, 3, s.Nodes("six"))
	// rigid counts: whole nodes plus a remainder on one more node, charged
	// the remainder's chain size
	assert.Equal(t, []Config{{"six", 3, 18, 0, ""}}, s.Fixed("six", 18))
	assert.Equal(t, []Config{{"six", 2, 9, 0, ""}}, s.Fixed("six", 9))
	assert.Empty(t, s.Fixed("six", 19))
	assert.Equal(t, 12, s.Charge(Config{"six", 2, 9, 0, ""}))
	assert.Equal(t, 6, s.Charge(Config{"six", 1, 5, 0, ""}))
	assert.Equal(t, 2, s.Charge(Config{"six", 1, 2, 0, ""}))
	assert.Equal(t, 16, s.Charge(Config{"twelve", 2, 15, 0, ""}))
}

// TestMixedNodeSizes: a type with nodes of several sizes has one pool per
// size; configurations carry the pool's node size; groups of one type and
// size merge.
func TestMixedNodeSizes(t *testing.T) {
	s, err := New([]NodeGroup{
		{Type: "a100", GPUsPerNode: 8, Nodes: 1}, {Type: "t4", GPUsPerNode: 4, Nodes: 2},
		{Type: "a100", GPUsPerNode: 6, Nodes: 2}, {Type: "a100", GPUsPerNode: 8, Nodes: 1},
	}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a100", "t4"}, s.Types())
	assert.Equal(t, []Pool{
		{Name: "a100/8", Type: "a100", GPUsPerNode: 8, Nodes: 2, Chain: []int{1, 2, 4, 8}},
		{Name: "a100/6", Type: "a100", GPUsPerNode: 6, Nodes: 2, Chain: []int{1, 2, 6}},
		{Name: "t4", Type: "t4", GPUsPerNode: 4, Nodes: 2, Chain: []int{1, 2, 4}},
	}, s.Pools())
	assert.Equal(t, []Config{
		{"a100", 1, 1, 8, ""}, {"a100", 1, 2, 8, ""}, {"a100", 1, 4, 8, ""}, {"a100", 1, 8, 8, ""}, {"a100", 2, 16, 8, ""},
		{"a100", 1, 1, 6, ""}, {"a100", 1, 2, 6, ""}, {"a100", 1, 6, 6, ""}, {"a100", 2, 12, 6, ""},
	}, s.ByType("a100"))
	assert.Equal(t, 28, s.Capacity("a100"))
	assert.Equal(t, 4, s.Nodes("a100"))
	assert.Equal(t, 8, s.GPUsPerNode("a100"))
	assert.Equal(t, "(1,6,a100/6)", Config{"a100", 1, 6, 6, ""}.String())
	assert.Equal(t, "a100/6", Config{"a100", 1, 6, 6, ""}.Pool())
	assert.Equal(t, "t4", Config{"t4", 1, 4, 0, ""}.Pool())
	p, ok := s.Pool("a100/6")
	require.True(t, ok)
	assert.Equal(t, 12, p.Capacity())
	_, ok = s.Pool("a100")
	assert.False(t, ok)
	assert.Equal(t, []Config{{"a100", 2, 12, 8, ""}, {"a100", 2, 12, 6, ""}}, s.Fixed("a100", 12))
	assert.Equal(t, []Config{{"a100", 2, 14, 8, ""}}, s.Fixed("a100", 14))
	i, ok := s.Index(Config{"a100", 1, 6, 6, ""})
	require.True(t, ok)
	assert.Equal(t, 7, i)
	_, ok = s.Index(Config{"a100", 1, 6, 0, ""})
	assert.False(t, ok)
	// a pool name that is also a type name is an error
	_, err = New([]NodeGroup{{Type: "x", GPUsPerNode: 8, Nodes: 1}, {Type: "x", GPUsPerNode: 4, Nodes: 1}, {Type: "x/4", GPUsPerNode: 4, Nodes: 1}}, nil)
	var ge *GroupError
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, 2, ge.Index)
	assert.Contains(t, err.Error(), "pool")
}

func TestDefaultHeterogeneousCluster(t *testing.T) {
	s, err := New([]NodeGroup{
		{Type: "t4", GPUsPerNode: 4, Nodes: 6},
		{Type: "a100", GPUsPerNode: 8, Nodes: 2},
		{Type: "rtx", GPUsPerNode: 8, Nodes: 3},
	}, &Options{MaxGPUs: 64})
	require.NoError(t, err)
	cs := s.Configs()
	require.Len(t, cs, 19)
	assert.Len(t, s.ByType("t4"), 8)
	assert.Len(t, s.ByType("a100"), 5)
	assert.Len(t, s.ByType("rtx"), 6)
	// the published artifact's indices 0-7, 8-12, 13-18
	assert.Equal(t, Config{"t4", 6, 24, 0, ""}, cs[7])
	assert.Equal(t, Config{"a100", 1, 1, 0, ""}, cs[8])
	assert.Equal(t, Config{"a100", 2, 16, 0, ""}, cs[12])
	assert.Equal(t, Config{"rtx", 3, 24, 0, ""}, cs[18])
	for i, c := range cs {
		j, ok := s.Index(c)
		require.True(t, ok)
		assert.Equal(t, i, j)
	}
	_, ok := s.Index(Config{"t4", 1, 3, 0, ""})
	assert.False(t, ok)
	_, ok = s.Index(Config{"nope", 1, 1, 0, ""})
	assert.False(t, ok)
	assert.Equal(t, 64, s.Capacity("t4")+s.Capacity("a100")+s.Capacity("rtx"))
}

func TestCaps(t *testing.T) {
	g := []NodeGroup{{Type: "t4", GPUsPerNode: 4, Nodes: 64}}
	s, err := New(g, &Options{MaxGPUs: 64})
	require.NoError(t, err)
	// 4-GPU table of the artifact: (1,1),(1,2),(1,4),(2,8)…(16,64) — 18 entries
	require.Len(t, s.Configs(), 18)
	assert.Equal(t, Config{"t4", 16, 64, 0, ""}, s.Configs()[17])

	s, err = New(g, &Options{MaxGPUs: 64, MaxNodes: 6})
	require.NoError(t, err)
	assert.Len(t, s.Configs(), 8)

	s, err = New([]NodeGroup{{Type: "a100", GPUsPerNode: 8, Nodes: 4}}, &Options{MaxGPUs: 3})
	require.NoError(t, err)
	assert.Equal(t, []Config{{"a100", 1, 1, 0, ""}, {"a100", 1, 2, 0, ""}}, s.Configs())

	s, err = New(g, nil)
	require.NoError(t, err)
	assert.Len(t, s.Configs(), 3+63)
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []NodeGroup
		opts   *Options
		field  string
		substr string
	}{
		{"empty type", []NodeGroup{{Type: "", GPUsPerNode: 4, Nodes: 1}}, nil, "Type", "empty"},
		{"zero gpus", []NodeGroup{{Type: "a", GPUsPerNode: 0, Nodes: 1}}, nil, "GPUsPerNode", "got 0"},
		{"negative gpus", []NodeGroup{{Type: "a", GPUsPerNode: -4, Nodes: 1}}, nil, "GPUsPerNode", "got -4"},
		{"zero nodes", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: 0}}, nil, "Nodes", "got 0"},
		{"negative nodes", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: -1}}, nil, "Nodes", "got -1"},
		{"huge node", []NodeGroup{{Type: "a", GPUsPerNode: MaxGPUsPerNode + 1, Nodes: 1}}, nil, "GPUsPerNode", "got 4097"},
		{"too many nodes", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: MaxNodesPerGroup + 1}}, nil, "Nodes", "got 1048577"},
		{"merged nodes overflow", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: MaxNodesPerGroup}, {Type: "a", GPUsPerNode: 4, Nodes: 1}}, nil, "Nodes", "more than"},
		{"negative cap", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: 1}}, &Options{MaxGPUs: -1}, "Options.MaxGPUs", "≥ 0"},
		{"negative node cap", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: 1}}, &Options{MaxNodes: -2}, "Options.MaxNodes", "≥ 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.groups, tc.opts)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, ErrInvalidInput)
			assert.Contains(t, err.Error(), tc.substr)
			var ge *GroupError
			var fe *FilterError
			switch {
			case errors.As(err, &ge):
				assert.Equal(t, tc.field, ge.Field)
				assert.Contains(t, err.Error(), fmt.Sprintf("%q", ge.Type))
			case errors.As(err, &fe):
				assert.Equal(t, tc.field, fe.Field)
			default:
				t.Fatalf("untyped error %v", err)
			}
		})
	}
	var ge *GroupError
	_, err := New([]NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: 1}, {Type: "a", GPUsPerNode: 0, Nodes: 2}}, nil)
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, 1, ge.Index)
}

func TestEmptyCluster(t *testing.T) {
	s, err := New(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, s.Configs())
	assert.Empty(t, s.Types())
	assert.Nil(t, s.ByType("x"))
	assert.Nil(t, s.PoolsOf("x"))
	assert.Zero(t, s.GPUsPerNode("x"))
	assert.Zero(t, s.Nodes("x"))
}

func TestFilter(t *testing.T) {
	s, err := New([]NodeGroup{
		{Type: "t4", GPUsPerNode: 4, Nodes: 6},
		{Type: "a100", GPUsPerNode: 8, Nodes: 2},
		{Type: "rtx", GPUsPerNode: 8, Nodes: 3},
	}, &Options{MaxGPUs: 64})
	require.NoError(t, err)
	gpus := func(cs []Config, typ string) []int {
		var out []int
		for _, c := range cs {
			if c.Type == typ {
				out = append(out, c.GPUs)
			}
		}
		return out
	}
	cs, err := s.Filter(JobFilter{MinGPUs: 2, MaxGPUs: 16})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 4, 8, 12, 16}, gpus(cs, "t4"))
	assert.Equal(t, []int{2, 4, 8, 16}, gpus(cs, "a100"))

	cs, err = s.Filter(JobFilter{ReplicaSize: map[string]int{"t4": 3, "a100": 4, "rtx": 0, "gone": 5}})
	require.NoError(t, err)
	assert.Equal(t, []int{12, 24}, gpus(cs, "t4"))
	assert.Equal(t, []int{4, 8, 16}, gpus(cs, "a100"))
	assert.Equal(t, []int{1, 2, 4, 8, 16, 24}, gpus(cs, "rtx"))

	all, err := s.Filter(JobFilter{})
	require.NoError(t, err)
	assert.Equal(t, s.Configs(), all)
	assert.Equal(t, all, s.ForJob(JobFilter{}))

	none, err := s.Filter(JobFilter{MinGPUs: 65})
	require.NoError(t, err)
	assert.Empty(t, none)

	for _, f := range []JobFilter{{MinGPUs: -1}, {MaxGPUs: -1}, {MinGPUs: 8, MaxGPUs: 4}, {ReplicaSize: map[string]int{"t4": -2}}} {
		_, err := s.Filter(f)
		require.ErrorIs(t, err, ErrInvalidInput, "%+v", f)
		var fe *FilterError
		require.ErrorAs(t, err, &fe)
		assert.Nil(t, s.ForJob(f))
	}
	_, err = s.Filter(JobFilter{ReplicaSize: map[string]int{"t4": -2}})
	assert.Contains(t, err.Error(), `ReplicaSize["t4"]`)
}

// TestFilterMatchesBruteForce checks Filter against a direct predicate on
// random clusters and filters.
func TestFilterMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		var groups []NodeGroup
		for i := 0; i < 1+rng.IntN(4); i++ {
			groups = append(groups, NodeGroup{Type: fmt.Sprintf("g%d", i), GPUsPerNode: 1 + rng.IntN(16), Nodes: 1 + rng.IntN(20)})
		}
		s, err := New(groups, &Options{MaxGPUs: rng.IntN(80)})
		require.NoError(t, err)
		f := JobFilter{MinGPUs: rng.IntN(10), ReplicaSize: map[string]int{}}
		if rng.IntN(2) == 0 {
			f.MaxGPUs = f.MinGPUs + rng.IntN(40)
		}
		for _, g := range groups {
			f.ReplicaSize[g.Type] = rng.IntN(5)
		}
		got, err := s.Filter(f)
		require.NoError(t, err)
		var want []Config
		for _, c := range s.Configs() {
			p := max(f.ReplicaSize[c.Type], 1)
			if c.GPUs >= f.MinGPUs && (f.MaxGPUs == 0 || c.GPUs <= f.MaxGPUs) && c.GPUs%p == 0 {
				want = append(want, c)
			}
		}
		require.Equal(t, want, got)
	}
}

// TestConfigsProperties checks the shape rules on random clusters: order,
// chain sizes within one node, whole nodes beyond, caps, no duplicates.
func TestConfigsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 300; iter++ {
		var groups []NodeGroup
		for i := 0; i < 1+rng.IntN(4); i++ {
			groups = append(groups, NodeGroup{Type: fmt.Sprintf("g%d", i), GPUsPerNode: 1 + rng.IntN(16), Nodes: 1 + rng.IntN(20)})
		}
		capG := rng.IntN(80)
		s, err := New(groups, &Options{MaxGPUs: capG})
		require.NoError(t, err)
		var flat []Config
		for _, g := range groups {
			cs := s.ByType(g.Type)
			require.True(t, sort.SliceIsSorted(cs, func(i, j int) bool { return cs[i].GPUs < cs[j].GPUs }))
			// brute force: every (n, r) pair that satisfies the rule
			var want []Config
			for n := 1; n <= g.Nodes; n++ {
				for r := 1; r <= n*g.GPUsPerNode; r++ {
					ok := (n == 1 && slices.Contains(Chain(g.GPUsPerNode), r)) || (n >= 2 && r == n*g.GPUsPerNode)
					if ok && (capG == 0 || r <= capG) {
						want = append(want, Config{Type: g.Type, Nodes: n, GPUs: r})
					}
				}
			}
			slices.SortFunc(want, func(a, b Config) int { return a.GPUs - b.GPUs })
			require.Equal(t, want, cs, "%+v cap %d", g, capG)
			for _, c := range cs {
				require.Equal(t, c.GPUs, s.Charge(c))
			}
			flat = append(flat, cs...)
		}
		require.Equal(t, flat, s.Configs())
	}
}

// TestPoolCapacityIsExact checks, by brute force on small pools of every
// node size 1..16, that a multiset of configurations of a pool (offered
// ones, and rigid shapes charged by Charge) can be placed, each on one node
// or on whole distinct nodes plus its remainder on one more node, whenever
// the charges fit the pool's capacity; and that for offered configurations
// the converse holds too (capacity is the only row needed).
func TestPoolCapacityIsExact(t *testing.T) {
	for r := 1; r <= 16; r++ {
		for n := 1; n <= 3; n++ {
			s, err := New([]NodeGroup{{Type: "x", GPUsPerNode: r, Nodes: n}}, nil)
			require.NoError(t, err)
			items := s.ByType("x")
			offered := len(items)
			for g := 1; g <= r*n; g++ {
				for _, c := range s.Fixed("x", g) {
					if _, ok := s.Index(c); !ok {
						items = append(items, c)
					}
				}
			}
			var rec func(start, charge int, chosen []Config)
			rec = func(start, charge int, chosen []Config) {
				fits := charge <= s.Capacity("x")
				allOffered := true
				for _, c := range chosen {
					if _, ok := s.Index(c); !ok {
						allOffered = false
					}
				}
				if fits || allOffered {
					require.Equal(t, fits, packsShapes(chosen, r, n), "r=%d n=%d items=%v", r, n, chosen)
				}
				if len(chosen) == 4 {
					return
				}
				for i := start; i < len(items); i++ {
					if c := s.Charge(items[i]); charge+c <= s.Capacity("x")+r {
						rec(i, charge+c, append(chosen, items[i]))
					}
				}
			}
			rec(0, 0, nil)
			_ = offered
		}
	}
}

// packsShapes reports whether the configurations fit n nodes of r GPUs each,
// every configuration as ⌊GPUs/r⌋ whole nodes (all of it when it is one
// node) plus the remainder on one more, distinct node (exhaustive search).
func packsShapes(cs []Config, r, n int) bool {
	var parts [][]int
	for _, c := range cs {
		if c.Nodes == 1 {
			parts = append(parts, []int{c.GPUs})
			continue
		}
		var p []int
		for k := 0; k < c.GPUs/r; k++ {
			p = append(p, r)
		}
		if c.GPUs%r > 0 {
			p = append(p, c.GPUs%r)
		}
		parts = append(parts, p)
	}
	free := make([]int, n)
	for i := range free {
		free[i] = r
	}
	var rec func(job, part int, used uint) bool
	rec = func(job, part int, used uint) bool {
		if job == len(parts) {
			return true
		}
		if part == len(parts[job]) {
			return rec(job+1, 0, 0)
		}
		size := parts[job][part]
		for b := range free {
			if used&(1<<b) != 0 || free[b] < size {
				continue
			}
			free[b] -= size
			ok := rec(job, part+1, used|1<<b)
			free[b] += size
			if ok {
				return true
			}
		}
		return false
	}
	return rec(0, 0, 0)
}

func TestConfigString(t *testing.T) {
	assert.Equal(t, "(2,16,a100)", Config{Type: "a100", Nodes: 2, GPUs: 16}.String())
}

func BenchmarkNew(b *testing.B) {
	groups := []NodeGroup{{Type: "t4", GPUsPerNode: 4, Nodes: 192}, {Type: "a100", GPUsPerNode: 8, Nodes: 64}, {Type: "rtx", GPUsPerNode: 8, Nodes: 96}}
	for b.Loop() {
		if _, err := New(groups, &Options{MaxGPUs: 64}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzNew checks that New never panics and that a successful set obeys the
// shape rules.
func FuzzNew(f *testing.F) {
	f.Add([]byte{4, 6, 8, 2, 8, 3}, 64)
	f.Add([]byte{6, 3, 12, 2}, 0)
	f.Add([]byte{0, 1}, -1)
	f.Fuzz(func(t *testing.T, data []byte, capG int) {
		var groups []NodeGroup
		for i := 0; i+1 < len(data) && i < 16; i += 2 {
			groups = append(groups, NodeGroup{Type: fmt.Sprintf("g%d", data[i]%5), GPUsPerNode: int(int8(data[i])), Nodes: int(int8(data[i+1]))})
		}
		s, err := New(groups, &Options{MaxGPUs: capG})
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			return
		}
		for _, c := range s.Configs() {
			p, ok := s.Pool(c.Pool())
			require.True(t, ok, "%v", c)
			require.True(t, capG == 0 || c.GPUs <= capG)
			if c.Nodes == 1 {
				require.Contains(t, p.Chain, c.GPUs)
			} else {
				require.Equal(t, c.Nodes*p.GPUsPerNode, c.GPUs)
				require.LessOrEqual(t, c.Nodes, p.Nodes)
			}
			require.Equal(t, c.GPUs, s.Charge(c))
		}
	})
}
