package configset

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
)

// ErrInvalidInput is wrapped by every error New and Filter return for bad
// caller data (use errors.Is). The concrete error is a *GroupError or a
// *FilterError (use errors.As).
var ErrInvalidInput = errors.New("configset: invalid input")

// GroupError reports a bad node group passed to New.
type GroupError struct {
	Index  int    // position of the group in the slice passed to New
	Type   string // the group's type name (may be empty)
	Field  string // "Type", "GPUsPerNode" or "Nodes"
	Reason string
}

// Error implements error.
func (e *GroupError) Error() string {
	return fmt.Sprintf("configset: invalid input: node group %d (type %q): %s: %s", e.Index, e.Type, e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidInput) hold.
func (e *GroupError) Unwrap() error { return ErrInvalidInput }

// FilterError reports a bad job filter passed to Filter, or bad Options.
type FilterError struct {
	Field  string // "MinGPUs", "MaxGPUs", "ReplicaSize[<type>]" or "Options.MaxGPUs" …
	Reason string
}

// Error implements error.
func (e *FilterError) Error() string {
	return fmt.Sprintf("configset: invalid input: %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalidInput) hold.
func (e *FilterError) Unwrap() error { return ErrInvalidInput }

// MaxGPUsPerNode and MaxNodesPerGroup bound the node groups New accepts
// (they bound memory and time).
const (
	MaxGPUsPerNode   = 4096
	MaxNodesPerGroup = 1 << 20
)

// NodeGroup is a set of identical nodes: Nodes machines with GPUsPerNode GPUs
// of type Type each. Type is an opaque, host-chosen name.
type NodeGroup struct {
	Type        string
	GPUsPerNode int
	Nodes       int
}

// Config is a configuration (n, r, t): GPUs GPUs of type Type spread over
// Nodes nodes. For a type whose GPUs per node is not a power of two, Nodes
// counts physical nodes, each contributing its largest virtual node (see
// VirtualNodes and New).
type Config struct {
	Type  string
	Nodes int
	GPUs  int
}

// String formats c as in the paper: (nodes,GPUs,type).
func (c Config) String() string {
	return "(" + strconv.Itoa(c.Nodes) + "," + strconv.Itoa(c.GPUs) + "," + c.Type + ")"
}

// Options tunes New. A nil *Options means the defaults (no caps).
type Options struct {
	// MaxGPUs caps the GPUs of a configuration; 0 means no cap. The paper
	// and the published artifact use 64.
	MaxGPUs int
	// MaxNodes caps the nodes of a configuration; 0 means no cap. The
	// artifact caps multi-node configurations at the largest profiled node
	// count of each type; a host that wants that passes it here.
	MaxNodes int
}

// SizeLimit is a placement constraint beyond per-type capacity that exists
// only for types whose GPUs per node is not a power of two: the configurations
// of type Type with at least MinGPUs GPUs together may use at most Limit GPUs.
// See Set.SizeLimits.
type SizeLimit struct {
	Type    string
	MinGPUs int
	Limit   int
}

type typeInfo struct {
	name        string
	gpusPerNode int
	nodes       int
	vnodes      []int
	configs     []Config
	limits      []SizeLimit
}

// Set is the immutable set of valid configurations of a cluster. It is safe
// for concurrent use.
type Set struct {
	types   []typeInfo
	index   map[string]int // type -> position in types
	configs []Config
	offset  []int // offset[i] = index in configs of the first config of types[i]
}

// VirtualNodes splits a node of gpusPerNode GPUs into virtual nodes whose
// sizes are distinct powers of two summing to gpusPerNode, largest first (the
// binary decomposition): 8 → [8], 6 → [4 2], 12 → [8 4], 7 → [4 2 1]. It
// returns nil for gpusPerNode ≤ 0.
func VirtualNodes(gpusPerNode int) []int {
	if gpusPerNode <= 0 {
		return nil
	}
	out := make([]int, 0, bits.OnesCount(uint(gpusPerNode)))
	for b := bits.Len(uint(gpusPerNode)) - 1; b >= 0; b-- {
		if gpusPerNode&(1<<b) != 0 {
			out = append(out, 1<<b)
		}
	}
	return out
}

// New builds the configuration set of a cluster made of the given node groups.
//
// For a type with R GPUs per node and N nodes, let V be its largest virtual
// node, the largest power of two ≤ R (V = R when R is a power of two). The
// type offers
//
//	{(1,1), (1,2), (1,4), …, (1,V)} ∪ {(n, n·V) : 2 ≤ n ≤ N}
//
// that is, powers of two inside one (virtual) node and, beyond, whole largest
// virtual nodes, one per physical node. When R is a power of two this is the
// paper's set. For R = 6 the node is virtual 4 + 2: single-node 1, 2, 4 and
// multi-node (n, 4n); for R = 12 (8 + 4): single-node 1 … 8 and (n, 8n).
// Configurations above opts.MaxGPUs GPUs or opts.MaxNodes nodes are dropped.
//
// With these shapes every multiset of configurations of one type whose GPUs
// fit the type's capacity can be placed so that no configuration is split
// across nodes beyond its shape and no two multi-node configurations share a
// (virtual) node — when R is a power of two. When R is not a power of two,
// per-type capacity is not enough (three (1,4) jobs do not fit two 6-GPU
// nodes); SizeLimits gives the extra constraints that make it so.
//
// Types keep the order of their first appearance in groups. Errors (wrapping
// ErrInvalidInput, as *GroupError) for an empty type name, GPUsPerNode
// outside [1, MaxGPUsPerNode], Nodes outside [1, MaxNodesPerGroup], and a
// type that appears in two groups (use distinct type names for nodes of one
// GPU model with different GPUs per node); and (as *FilterError) for
// negative options.
func New(groups []NodeGroup, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxGPUs < 0 {
		return nil, &FilterError{Field: "Options.MaxGPUs", Reason: fmt.Sprintf("must be ≥ 0 (0 = no cap), got %d", o.MaxGPUs)}
	}
	if o.MaxNodes < 0 {
		return nil, &FilterError{Field: "Options.MaxNodes", Reason: fmt.Sprintf("must be ≥ 0 (0 = no cap), got %d", o.MaxNodes)}
	}
	s := &Set{index: make(map[string]int, len(groups))}
	for i, g := range groups {
		switch {
		case g.Type == "":
			return nil, &GroupError{Index: i, Type: g.Type, Field: "Type", Reason: "empty type name"}
		case g.GPUsPerNode <= 0 || g.GPUsPerNode > MaxGPUsPerNode:
			return nil, &GroupError{Index: i, Type: g.Type, Field: "GPUsPerNode", Reason: fmt.Sprintf("must be in [1, %d], got %d", MaxGPUsPerNode, g.GPUsPerNode)}
		case g.Nodes <= 0 || g.Nodes > MaxNodesPerGroup:
			return nil, &GroupError{Index: i, Type: g.Type, Field: "Nodes", Reason: fmt.Sprintf("must be in [1, %d], got %d", MaxNodesPerGroup, g.Nodes)}
		}
		if j, dup := s.index[g.Type]; dup {
			return nil, &GroupError{Index: i, Type: g.Type, Field: "Type",
				Reason: fmt.Sprintf("duplicate type (also node group %d); give node groups of different sizes distinct type names", j)}
		}
		s.index[g.Type] = len(s.types)
		s.types = append(s.types, buildType(g, o))
	}
	for _, t := range s.types {
		s.offset = append(s.offset, len(s.configs))
		s.configs = append(s.configs, t.configs...)
	}
	return s, nil
}

func buildType(g NodeGroup, o Options) typeInfo {
	vn := VirtualNodes(g.GPUsPerNode)
	t := typeInfo{name: g.Type, gpusPerNode: g.GPUsPerNode, nodes: g.Nodes, vnodes: vn}
	v := vn[0]
	fits := func(nodes, gpus int) bool {
		return (o.MaxGPUs == 0 || gpus <= o.MaxGPUs) && (o.MaxNodes == 0 || nodes <= o.MaxNodes)
	}
	for r := 1; r <= v; r *= 2 {
		if fits(1, r) {
			t.configs = append(t.configs, Config{Type: g.Type, Nodes: 1, GPUs: r})
		}
	}
	for n := 2; n <= g.Nodes; n++ {
		if !fits(n, n*v) {
			break
		}
		t.configs = append(t.configs, Config{Type: g.Type, Nodes: n, GPUs: n * v})
	}
	// Divisible bin packing: items and bins are powers of two, so a multiset
	// of items fits iff for every size s the items of size ≥ s total at most
	// the bins of size ≥ s. Only sizes above the smallest virtual node give
	// constraints tighter than capacity.
	for i := len(vn) - 1; i >= 1; i-- {
		// sizes in (vn[i], vn[i-1]] share one bound: bins ≥ 2·vn[i]
		sum := 0
		for _, b := range vn[:i] {
			sum += b
		}
		t.limits = append(t.limits, SizeLimit{Type: g.Type, MinGPUs: 2 * vn[i], Limit: sum * g.Nodes})
	}
	return t
}

// Types returns the GPU types in first-appearance order of the node groups.
func (s *Set) Types() []string {
	out := make([]string, len(s.types))
	for i, t := range s.types {
		out[i] = t.name
	}
	return out
}

// Configs returns all configurations: by type order, then by GPUs ascending.
// The position of a configuration in this slice is its global index (see
// Index). The caller may modify the returned slice.
func (s *Set) Configs() []Config {
	return append([]Config(nil), s.configs...)
}

// Len returns the number of configurations.
func (s *Set) Len() int { return len(s.configs) }

// Index returns the position of c in Configs, or false if c is not valid.
func (s *Set) Index(c Config) (int, bool) {
	i, ok := s.index[c.Type]
	if !ok {
		return 0, false
	}
	for j, d := range s.types[i].configs {
		if d == c {
			return s.offset[i] + j, true
		}
	}
	return 0, false
}

// ByType returns the configurations of type t by GPUs ascending, or nil for an
// unknown type.
func (s *Set) ByType(t string) []Config {
	i, ok := s.index[t]
	if !ok {
		return nil
	}
	return append([]Config(nil), s.types[i].configs...)
}

// Capacity returns the total GPUs of type t (nodes × GPUs per node), or 0 for
// an unknown type.
func (s *Set) Capacity(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	return s.types[i].nodes * s.types[i].gpusPerNode
}

// GPUsPerNode returns the GPUs per physical node of type t, or 0 for an unknown
// type.
func (s *Set) GPUsPerNode(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	return s.types[i].gpusPerNode
}

// Nodes returns the number of physical nodes of type t, or 0 for an unknown
// type.
func (s *Set) Nodes(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	return s.types[i].nodes
}

// VirtualNodes returns the virtual node sizes of one physical node of type t,
// largest first (see the package function VirtualNodes), or nil for an
// unknown type.
func (s *Set) VirtualNodes(t string) []int {
	i, ok := s.index[t]
	if !ok {
		return nil
	}
	return append([]int(nil), s.types[i].vnodes...)
}

// SizeLimits returns the constraints, beyond per-type capacity, that a
// multiset of configurations of type t must meet to be placeable (each
// configuration on one virtual node or on whole largest virtual nodes of
// distinct physical nodes). It is empty when GPUs per node is a power of two.
// For 6-GPU nodes (virtual 4 + 2) and N nodes it is {MinGPUs 4, Limit 4N}:
// configurations of 4 GPUs or more fit only the 4-GPU virtual nodes. For
// 7-GPU nodes (4 + 2 + 1) it is {MinGPUs 2, Limit 6N}, {MinGPUs 4, Limit 4N}.
// Capacity plus these limits is necessary and sufficient (divisible bin
// packing: items and bins are powers of two). An allocator with only per-type
// capacity rows may still produce an unplaceable allocation for such types;
// the placement step then reports the jobs it cannot place.
func (s *Set) SizeLimits(t string) []SizeLimit {
	i, ok := s.index[t]
	if !ok {
		return nil
	}
	return append([]SizeLimit(nil), s.types[i].limits...)
}

// JobFilter restricts the configurations a job may use. Zero values mean
// unbounded (MinGPUs, MaxGPUs) and a replica size of 1.
type JobFilter struct {
	// MinGPUs and MaxGPUs bound the configuration's GPUs (inclusive).
	MinGPUs, MaxGPUs int
	// ReplicaSize maps a type to the GPUs of one replica of a hybrid-parallel
	// job on that type (P); only configurations whose GPUs are a multiple of
	// P are kept. Types absent from the map, or mapped to 0, use 1. Entries
	// for types the set does not have are ignored.
	ReplicaSize map[string]int
}

// Validate checks f: no negative field, MinGPUs ≤ MaxGPUs when both are set.
// Errors wrap ErrInvalidInput and are *FilterError; with several negative
// ReplicaSize entries the first type in sorted order is reported.
func (f JobFilter) Validate() error {
	if f.MinGPUs < 0 {
		return &FilterError{Field: "MinGPUs", Reason: fmt.Sprintf("must be ≥ 0, got %d", f.MinGPUs)}
	}
	if f.MaxGPUs < 0 {
		return &FilterError{Field: "MaxGPUs", Reason: fmt.Sprintf("must be ≥ 0 (0 = unbounded), got %d", f.MaxGPUs)}
	}
	if f.MaxGPUs > 0 && f.MinGPUs > f.MaxGPUs {
		return &FilterError{Field: "MinGPUs", Reason: fmt.Sprintf("%d exceeds MaxGPUs %d", f.MinGPUs, f.MaxGPUs)}
	}
	// Report the first bad entry in sorted type order, so that the error does
	// not depend on map iteration order.
	var bad []string
	for t, p := range f.ReplicaSize {
		if p < 0 {
			bad = append(bad, t)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return &FilterError{Field: "ReplicaSize[" + strconv.Quote(bad[0]) + "]", Reason: fmt.Sprintf("must be ≥ 0, got %d", f.ReplicaSize[bad[0]])}
	}
	return nil
}

// Filter returns the configurations a job may use, in Configs order, or an
// error if f is invalid (see JobFilter.Validate). The result may be empty.
func (s *Set) Filter(f JobFilter) ([]Config, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	var out []Config
	for _, c := range s.configs {
		if f.MinGPUs > 0 && c.GPUs < f.MinGPUs {
			continue
		}
		if f.MaxGPUs > 0 && c.GPUs > f.MaxGPUs {
			continue
		}
		if p := f.ReplicaSize[c.Type]; p > 1 && c.GPUs%p != 0 {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// ForJob is Filter without the error: it returns nil when f is invalid.
func (s *Set) ForJob(f JobFilter) []Config {
	out, err := s.Filter(f)
	if err != nil {
		return nil
	}
	return out
}
