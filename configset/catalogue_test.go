package configset

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Catalogue of bad inputs to New, JobFilter.Validate, Filter and ForJob: each
// gives an error wrapping ErrInvalidInput (a *GroupError naming the group
// index, type and field, or a *FilterError naming the field) and never a
// panic.

func TestCatalogueNew(t *testing.T) {
	ok := NodeGroup{Type: "a100", GPUsPerNode: 8, Nodes: 2}
	cases := []struct {
		name   string
		groups []NodeGroup
		index  int
		field  string
		names  []string
	}{
		{"empty type", []NodeGroup{ok, {Type: "", GPUsPerNode: 4, Nodes: 1}}, 1, "Type", []string{"node group 1", "empty type name"}},
		{"pool name is a type", []NodeGroup{ok, {Type: "a100/4", GPUsPerNode: 4, Nodes: 1}, {Type: "a100", GPUsPerNode: 4, Nodes: 1}}, 1, "Type", []string{"node group 1", `"a100/4"`, "pool of the 4-GPU nodes"}},
		{"zero GPUsPerNode", []NodeGroup{{Type: "t4", GPUsPerNode: 0, Nodes: 1}}, 0, "GPUsPerNode", []string{`"t4"`, "GPUsPerNode", "got 0"}},
		{"negative GPUsPerNode", []NodeGroup{{Type: "t4", GPUsPerNode: -4, Nodes: 1}}, 0, "GPUsPerNode", []string{`"t4"`, "got -4"}},
		{"MinInt GPUsPerNode", []NodeGroup{{Type: "t4", GPUsPerNode: math.MinInt, Nodes: 1}}, 0, "GPUsPerNode", []string{`"t4"`}},
		{"GPUsPerNode too large", []NodeGroup{{Type: "t4", GPUsPerNode: MaxGPUsPerNode + 1, Nodes: 1}}, 0, "GPUsPerNode", []string{`"t4"`, "4097"}},
		{"GPUsPerNode MaxInt", []NodeGroup{{Type: "t4", GPUsPerNode: math.MaxInt, Nodes: 1}}, 0, "GPUsPerNode", []string{`"t4"`}},
		{"zero Nodes", []NodeGroup{ok, {Type: "t4", GPUsPerNode: 4, Nodes: 0}}, 1, "Nodes", []string{"node group 1", `"t4"`, "Nodes"}},
		{"negative Nodes", []NodeGroup{{Type: "t4", GPUsPerNode: 4, Nodes: -1}}, 0, "Nodes", []string{`"t4"`, "got -1"}},
		{"Nodes too large", []NodeGroup{{Type: "t4", GPUsPerNode: 4, Nodes: MaxNodesPerGroup + 1}}, 0, "Nodes", []string{`"t4"`}},
		{"Nodes MaxInt", []NodeGroup{{Type: "t4", GPUsPerNode: 4, Nodes: math.MaxInt}}, 0, "Nodes", []string{`"t4"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.groups, nil)
			assert.Nil(t, s)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ge *GroupError
			require.True(t, errors.As(err, &ge))
			assert.Equal(t, c.index, ge.Index)
			assert.Equal(t, c.field, ge.Field)
			for _, n := range c.names {
				assert.Contains(t, err.Error(), n)
			}
		})
	}
	for _, o := range []Options{{MaxGPUs: -1}, {MaxGPUs: math.MinInt}, {MaxNodes: -1}, {MaxGPUs: 4, MaxNodes: math.MinInt}} {
		_, err := New([]NodeGroup{ok}, &o)
		require.ErrorIs(t, err, ErrInvalidInput)
		var fe *FilterError
		require.True(t, errors.As(err, &fe))
		assert.Contains(t, err.Error(), "Options.Max")
	}
	// Valid edge cases: no groups, the largest accepted group, huge caps.
	s, err := New(nil, nil)
	require.NoError(t, err)
	assert.Zero(t, s.Len())
	assert.Empty(t, s.Types())
	s, err = New([]NodeGroup{{Type: "big", GPUsPerNode: MaxGPUsPerNode, Nodes: 3}}, &Options{MaxGPUs: math.MaxInt, MaxNodes: math.MaxInt})
	require.NoError(t, err)
	assert.Equal(t, 3*MaxGPUsPerNode, s.Capacity("big"))
	assert.Equal(t, Config{Type: "big", Nodes: 3, GPUs: 3 * MaxGPUsPerNode}, s.Configs()[s.Len()-1])
}

func TestCatalogueFilter(t *testing.T) {
	s, err := New([]NodeGroup{{Type: "a", GPUsPerNode: 8, Nodes: 2}, {Type: "b", GPUsPerNode: 6, Nodes: 2}}, nil)
	require.NoError(t, err)
	cases := []struct {
		name  string
		f     JobFilter
		field string
	}{
		{"negative MinGPUs", JobFilter{MinGPUs: -1}, "MinGPUs"},
		{"MinInt MinGPUs", JobFilter{MinGPUs: math.MinInt}, "MinGPUs"},
		{"negative MaxGPUs", JobFilter{MaxGPUs: -2}, "MaxGPUs"},
		{"Min above Max", JobFilter{MinGPUs: 8, MaxGPUs: 4}, "MinGPUs"},
		{"Min MaxInt above Max", JobFilter{MinGPUs: math.MaxInt, MaxGPUs: 1}, "MinGPUs"},
		{"negative replica size", JobFilter{ReplicaSize: map[string]int{"a": 2, "b": -1}}, `ReplicaSize["b"]`},
		{"negative replica size, unknown type", JobFilter{ReplicaSize: map[string]int{"zz": -3}}, `ReplicaSize["zz"]`},
		{"negative replica size, empty type", JobFilter{ReplicaSize: map[string]int{"": -3}}, `ReplicaSize[""]`},
		// Several bad entries: the first in sorted order, every time.
		{"several negative replica sizes", JobFilter{ReplicaSize: map[string]int{"q": -1, "c": -2, "x": -3, "m": -4}}, `ReplicaSize["c"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k := 0; k < 5; k++ {
				for _, err := range []error{c.f.Validate(), func() error { _, err := s.Filter(c.f); return err }()} {
					require.ErrorIs(t, err, ErrInvalidInput)
					var fe *FilterError
					require.True(t, errors.As(err, &fe))
					assert.Equal(t, c.field, fe.Field)
					assert.Contains(t, err.Error(), c.field)
				}
				assert.Nil(t, s.ForJob(c.f))
			}
		})
	}
	// Valid edge cases: unknown types in ReplicaSize are ignored; a replica
	// larger than any configuration leaves nothing; huge bounds keep all.
	got, err := s.Filter(JobFilter{ReplicaSize: map[string]int{"zz": 3}})
	require.NoError(t, err)
	assert.Equal(t, s.Configs(), got)
	got, err = s.Filter(JobFilter{ReplicaSize: map[string]int{"a": math.MaxInt, "b": math.MaxInt}})
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = s.Filter(JobFilter{MinGPUs: math.MaxInt})
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = s.Filter(JobFilter{MaxGPUs: math.MaxInt})
	require.NoError(t, err)
	assert.Equal(t, s.Configs(), got)
}

// TestCatalogueQueries: queries with unknown or empty type names and invalid
// configurations answer "nothing", never panic.
func TestCatalogueQueries(t *testing.T) {
	s, err := New([]NodeGroup{{Type: "a", GPUsPerNode: 6, Nodes: 2}}, nil)
	require.NoError(t, err)
	for _, typ := range []string{"", "zz", "A", "a "} {
		assert.Nil(t, s.ByType(typ))
		assert.Zero(t, s.Capacity(typ))
		assert.Zero(t, s.GPUsPerNode(typ))
		assert.Zero(t, s.Nodes(typ))
		assert.Nil(t, s.PoolsOf(typ))
		assert.Nil(t, s.Fixed(typ, 1))
	}
	for _, c := range []Config{{}, {Type: "a"}, {Type: "a", Nodes: 1, GPUs: 3}, {Type: "a", Nodes: -1, GPUs: -4}, {Type: "a", Nodes: 2, GPUs: 8}, {Type: "a", Nodes: 1, GPUs: 4}, {Type: "zz", Nodes: 1, GPUs: 1}} {
		_, ok := s.Index(c)
		assert.False(t, ok, "%v", c)
	}
	for _, g := range []int{0, -1, math.MinInt} {
		assert.Nil(t, Chain(g))
		assert.Nil(t, s.Fixed("a", g))
	}
	assert.Nil(t, Chain(MaxGPUsPerNode+1))
	assert.Nil(t, Chain(math.MaxInt))

}
