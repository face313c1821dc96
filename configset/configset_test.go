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
	want := []Config{{"A", 1, 1}, {"A", 1, 2}, {"B", 1, 1}, {"B", 1, 2}, {"B", 1, 4}}
	assert.Equal(t, want, s.Configs())
	assert.Equal(t, []string{"A", "B"}, s.Types())
	assert.Equal(t, 2, s.Capacity("A"))
	assert.Equal(t, 4, s.Capacity("B"))
	assert.Equal(t, 0, s.Capacity("C"))
	assert.Empty(t, s.SizeLimits("A"))
	assert.Empty(t, s.SizeLimits("B"))
}

func TestVirtualNodes(t *testing.T) {
	for _, tc := range []struct {
		r    int
		want []int
	}{
		{0, nil}, {-3, nil}, {1, []int{1}}, {2, []int{2}}, {3, []int{2, 1}}, {4, []int{4}},
		{6, []int{4, 2}}, {7, []int{4, 2, 1}}, {8, []int{8}}, {10, []int{8, 2}},
		{12, []int{8, 4}}, {16, []int{16}}, {20, []int{16, 4}},
	} {
		t.Run(fmt.Sprint(tc.r), func(t *testing.T) {
			assert.Equal(t, tc.want, VirtualNodes(tc.r))
		})
	}
	// property: distinct powers of two, strictly decreasing, summing to r
	for r := 1; r <= 1000; r++ {
		v := VirtualNodes(r)
		sum := 0
		for i, x := range v {
			require.Equal(t, 1, bits.OnesCount(uint(x)), "r=%d", r)
			if i > 0 {
				require.Less(t, x, v[i-1], "r=%d", r)
			}
			sum += x
		}
		require.Equal(t, r, sum)
	}
}

func TestNonPowerOfTwoNodes(t *testing.T) {
	s, err := New([]NodeGroup{{Type: "six", GPUsPerNode: 6, Nodes: 3}, {Type: "twelve", GPUsPerNode: 12, Nodes: 2}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []Config{{"six", 1, 1}, {"six", 1, 2}, {"six", 1, 4}, {"six", 2, 8}, {"six", 3, 12}}, s.ByType("six"))
	assert.Equal(t, []Config{{"twelve", 1, 1}, {"twelve", 1, 2}, {"twelve", 1, 4}, {"twelve", 1, 8}, {"twelve", 2, 16}}, s.ByType("twelve"))
	assert.Equal(t, []int{4, 2}, s.VirtualNodes("six"))
	assert.Equal(t, []int{8, 4}, s.VirtualNodes("twelve"))
	assert.Equal(t, 18, s.Capacity("six"))
	assert.Equal(t, 24, s.Capacity("twelve"))
	assert.Equal(t, 6, s.GPUsPerNode("six"))
	assert.Equal(t, 3, s.Nodes("six"))
	assert.Equal(t, []SizeLimit{{"six", 4, 12}}, s.SizeLimits("six"))
	assert.Equal(t, []SizeLimit{{"twelve", 8, 16}}, s.SizeLimits("twelve"))

	s7, err := New([]NodeGroup{{Type: "seven", GPUsPerNode: 7, Nodes: 2}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []SizeLimit{{"seven", 2, 12}, {"seven", 4, 8}}, s7.SizeLimits("seven"))
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
	// artifact-sia §3.1 indices 0-7, 8-12, 13-18
	assert.Equal(t, Config{"t4", 6, 24}, cs[7])
	assert.Equal(t, Config{"a100", 1, 1}, cs[8])
	assert.Equal(t, Config{"a100", 2, 16}, cs[12])
	assert.Equal(t, Config{"rtx", 3, 24}, cs[18])
	for i, c := range cs {
		j, ok := s.Index(c)
		require.True(t, ok)
		assert.Equal(t, i, j)
	}
	_, ok := s.Index(Config{"t4", 1, 3})
	assert.False(t, ok)
	_, ok = s.Index(Config{"nope", 1, 1})
	assert.False(t, ok)
	assert.Equal(t, 64, s.Capacity("t4")+s.Capacity("a100")+s.Capacity("rtx"))
}

func TestCaps(t *testing.T) {
	g := []NodeGroup{{Type: "t4", GPUsPerNode: 4, Nodes: 64}}
	s, err := New(g, &Options{MaxGPUs: 64})
	require.NoError(t, err)
	// 4-GPU table of the artifact: (1,1),(1,2),(1,4),(2,8)…(16,64) — 18 entries
	require.Len(t, s.Configs(), 18)
	assert.Equal(t, Config{"t4", 16, 64}, s.Configs()[17])

	s, err = New(g, &Options{MaxGPUs: 64, MaxNodes: 6})
	require.NoError(t, err)
	assert.Len(t, s.Configs(), 8)

	s, err = New([]NodeGroup{{Type: "a100", GPUsPerNode: 8, Nodes: 4}}, &Options{MaxGPUs: 3})
	require.NoError(t, err)
	assert.Equal(t, []Config{{"a100", 1, 1}, {"a100", 1, 2}}, s.Configs())

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
		{"duplicate", []NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: 1}, {Type: "b", GPUsPerNode: 8, Nodes: 1}, {Type: "a", GPUsPerNode: 8, Nodes: 1}}, nil, "Type", "duplicate"},
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
	_, err := New([]NodeGroup{{Type: "a", GPUsPerNode: 4, Nodes: 1}, {Type: "a", GPUsPerNode: 4, Nodes: 2}}, nil)
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, 1, ge.Index)
}

func TestEmptyCluster(t *testing.T) {
	s, err := New(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, s.Configs())
	assert.Empty(t, s.Types())
	assert.Nil(t, s.ByType("x"))
	assert.Nil(t, s.VirtualNodes("x"))
	assert.Nil(t, s.SizeLimits("x"))
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
// powers of two within the largest virtual node, whole largest virtual nodes
// beyond, caps, no duplicates.
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
			v := VirtualNodes(g.GPUsPerNode)[0]
			require.True(t, sort.SliceIsSorted(cs, func(i, j int) bool { return cs[i].GPUs < cs[j].GPUs }))
			// brute force: every (n, r) pair that satisfies the rule
			var want []Config
			for n := 1; n <= g.Nodes; n++ {
				for r := 1; r <= n*g.GPUsPerNode; r++ {
					ok := (n == 1 && r <= v && bits.OnesCount(uint(r)) == 1) || (n >= 2 && r == n*v)
					if ok && (capG == 0 || r <= capG) {
						want = append(want, Config{g.Type, n, r})
					}
				}
			}
			slices.SortFunc(want, func(a, b Config) int { return a.GPUs - b.GPUs })
			require.Equal(t, want, cs, "%+v cap %d", g, capG)
			flat = append(flat, cs...)
		}
		require.Equal(t, flat, s.Configs())
	}
}

// TestSizeLimitsAreExact checks, by brute force on small clusters, that a
// multiset of single-node configurations of a type fits its virtual nodes iff
// capacity and SizeLimits hold.
func TestSizeLimitsAreExact(t *testing.T) {
	for r := 1; r <= 12; r++ {
		for n := 1; n <= 2; n++ {
			s, err := New([]NodeGroup{{Type: "x", GPUsPerNode: r, Nodes: n}}, nil)
			require.NoError(t, err)
			var sizes []int
			for _, c := range s.ByType("x") {
				if c.Nodes == 1 {
					sizes = append(sizes, c.GPUs)
				}
			}
			// all multisets with up to 5 items
			var rec func(start int, items []int)
			rec = func(start int, items []int) {
				total := 0
				for _, it := range items {
					total += it
				}
				ok := total <= s.Capacity("x")
				for _, l := range s.SizeLimits("x") {
					sum := 0
					for _, it := range items {
						if it >= l.MinGPUs {
							sum += it
						}
					}
					ok = ok && sum <= l.Limit
				}
				require.Equal(t, packs(items, r, n), ok, "r=%d n=%d items=%v", r, n, items)
				if len(items) == 5 {
					return
				}
				for i := start; i < len(sizes); i++ {
					rec(i, append(items, sizes[i]))
				}
			}
			rec(0, nil)
		}
	}
}

// packs reports whether items fit n nodes of r GPUs each, every item on one
// virtual node (exhaustive search).
func packs(items []int, r, n int) bool {
	var bins []int
	for i := 0; i < n; i++ {
		bins = append(bins, VirtualNodes(r)...)
	}
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == len(items) {
			return true
		}
		for b := range bins {
			if bins[b] >= items[i] {
				bins[b] -= items[i]
				if rec(i + 1) {
					bins[b] += items[i]
					return true
				}
				bins[b] += items[i]
			}
		}
		return false
	}
	return rec(0)
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
			r, v := s.GPUsPerNode(c.Type), s.VirtualNodes(c.Type)[0]
			require.True(t, capG == 0 || c.GPUs <= capG)
			if c.Nodes == 1 {
				require.Equal(t, 1, bits.OnesCount(uint(c.GPUs)))
				require.LessOrEqual(t, c.GPUs, v)
			} else {
				require.Equal(t, c.Nodes*v, c.GPUs)
				require.LessOrEqual(t, c.Nodes, s.Nodes(c.Type))
			}
			require.LessOrEqual(t, v, r)
		}
	})
}
