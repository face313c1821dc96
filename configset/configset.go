package configset

import (
	"errors"
	"fmt"
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

// Unwrap returns ErrInvalidInput.
func (e *GroupError) Unwrap() []error { return []error{ErrInvalidInput} }

// FilterError reports a bad job filter passed to Filter, or bad Options.
type FilterError struct {
	Field  string // "MinGPUs", "MaxGPUs", "ReplicaSize[<type>]" or "Options.MaxGPUs" …
	Reason string
}

// Error implements error.
func (e *FilterError) Error() string {
	return fmt.Sprintf("configset: invalid input: %s: %s", e.Field, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *FilterError) Unwrap() []error { return []error{ErrInvalidInput} }

// MaxGPUsPerNode and MaxNodesPerGroup bound the node groups New accepts
// (they bound memory and time).
const (
	MaxGPUsPerNode   = 4096
	MaxNodesPerGroup = 1 << 20
)

// NodeGroup is a set of identical nodes: Nodes machines with GPUsPerNode GPUs
// of type Type each. Type is an opaque, host-chosen name. Several groups may
// share a type: groups of one type and size are merged, and a type with nodes
// of several sizes gets one pool per size (see Pool).
type NodeGroup struct {
	Type        string
	GPUsPerNode int
	Nodes       int
}

// Config is a configuration (n, r, t): GPUs GPUs of type Type on Nodes nodes.
// A configuration lies in one pool (the nodes of its type with one GPU count,
// see Pool): NodeGPUs is that pool's GPUs per node when the type has nodes of
// several sizes, and 0 when all nodes of the type have the same size (then
// the pool is the type). A configuration of one node has GPUs ≤ NodeGPUs; one
// of several nodes takes Nodes−1 whole nodes and the rest on one more node
// (all whole nodes for every configuration in Configs).
//
// A spanning configuration (Span non-empty, NodeGPUs 0) lies on nodes of
// several pools of its type: Span encodes its per-pool parts (see Parts,
// Set.Span), and Nodes and GPUs are their sums. Spanning configurations
// are not in Configs: they are offered only to jobs whose count no pool
// holds (Set.Span, Set.Spans) and for a current allocation on nodes of
// several sizes (Set.Spanned). Config stays comparable: two spanning
// configurations are equal when their parts are.
type Config struct {
	Type     string
	Nodes    int
	GPUs     int
	NodeGPUs int
	Span     string
}

// Pool returns the name of the configuration's pool: Type when NodeGPUs is 0,
// else Type + "/" + NodeGPUs (for example "a100/6"). A spanning
// configuration has no single pool: Pool returns its Type (which is no pool
// name of a type with several pools); use Parts.
func (c Config) Pool() string {
	if c.NodeGPUs == 0 {
		return c.Type
	}
	return PoolName(c.Type, c.NodeGPUs)
}

// PoolName returns the name of the pool of the nodes of type t with r GPUs
// each, for a type with nodes of several sizes: t + "/" + r.
func PoolName(t string, r int) string { return t + "/" + strconv.Itoa(r) }

// String formats c as in the paper: (nodes,GPUs,type), with the pool's node
// size after the type when the type has nodes of several sizes:
// (1,2,a100/6); a spanning configuration lists its parts (node size x
// nodes : GPUs): (3,20,a100{8x1:8+6x2:12}).
func (c Config) String() string {
	if c.Span != "" {
		return "(" + strconv.Itoa(c.Nodes) + "," + strconv.Itoa(c.GPUs) + "," + c.Type + "{" + c.Span + "})"
	}
	return "(" + strconv.Itoa(c.Nodes) + "," + strconv.Itoa(c.GPUs) + "," + c.Pool() + ")"
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

// Pool is a uniform set of nodes: the Nodes nodes of type Type with
// GPUsPerNode GPUs each. Every configuration lies in one pool, and an
// allocator keeps one capacity row per pool (named Name; Name is Type when
// the type has nodes of one size). Chain is the pool's single-node
// configuration sizes (see Chain).
type Pool struct {
	Name        string
	Type        string
	GPUsPerNode int
	Nodes       int
	Chain       []int
}

// Capacity returns the pool's GPUs (nodes × GPUs per node).
func (p Pool) Capacity() int { return p.Nodes * p.GPUsPerNode }

type typeInfo struct {
	name    string
	pools   []int // indices into Set.pools, in first-appearance order of the node size
	configs []Config
}

// Set is the immutable set of valid configurations of a cluster. It is safe
// for concurrent use.
type Set struct {
	types   []typeInfo
	index   map[string]int // type -> position in types
	pools   []Pool
	pindex  map[string]int // pool name -> position in pools
	configs []Config
	offset  []int // offset[i] = index in configs of the first config of types[i]
}

// Chain returns the single-node configuration sizes of a node with r GPUs, a
// divisible chain (each size divides the next) from 1 to r: the prime factors
// of r in ascending order, multiplied in one at a time. For r a power of two
// this is the paper's 1, 2, 4, …, r (§3.1); 6 → [1 2 6], 12 → [1 2 4 12],
// 10 → [1 2 10], 9 → [1 3 9], 5 → [1 5]. It returns nil for r ≤ 0 and for
// r > MaxGPUsPerNode.
//
// Why a chain: if item sizes form a divisible chain and every bin's capacity
// is a multiple of each item size, packing the items largest first into any
// bin with room never fails while the items' total fits the bins' total
// (every free space stays a multiple of the next item's size). So per-pool
// capacity alone makes an allocation of chain sizes placeable, exactly.
func Chain(r int) []int {
	if r <= 0 || r > MaxGPUsPerNode {
		return nil
	}
	out := []int{1}
	c, rest := 1, r
	for f := 2; rest > 1; {
		if f*f > rest {
			f = rest // rest is prime
		}
		if rest%f == 0 {
			c *= f
			rest /= f
			out = append(out, c)
			continue
		}
		f++
	}
	return out
}

// New builds the configuration set of a cluster made of the given node groups.
//
// The nodes of one type with one GPU count R form a pool (groups of the same
// type and size are merged). A pool of N nodes offers
//
//	{(1, c) : c in Chain(R)} ∪ {(n, n·R) : 2 ≤ n ≤ N}
//
// that is, a divisible chain of sizes inside one node and whole nodes beyond.
// When R is a power of two this is the paper's set (§3.1: powers of two
// within a node, whole nodes across nodes). For R = 6 the single-node sizes
// are 1, 2 and 6, for R = 12 they are 1, 2, 4 and 12; multi-node
// configurations are whole nodes in every case. Configurations above
// opts.MaxGPUs GPUs or opts.MaxNodes nodes are dropped.
//
// With these shapes every multiset of configurations of one pool whose GPUs
// fit the pool's capacity can be placed, each configuration in its shape
// (one node, or whole distinct nodes): place them largest first (see Chain).
// A type with nodes of several sizes has one pool per size, so an allocator
// needs one capacity row per pool (Pools) and no other placement row.
//
// Nodes of two sizes are not pooled even when their chains nest (8- and
// 4-GPU nodes: 1, 2, 4 ⊂ 1, 2, 4, 8). Single-node sizes alone would pack
// exactly into such a shared pool with two rows — all GPUs ≤ 4·N4 + 8·N8,
// and the GPUs of configurations of 8 or more ≤ 8·N8 (rows over MinGPUs) —
// because after the 8s every free space is a multiple of 4. But the
// multi-node configurations of whole 4-GPU nodes, (n, 4n), break it: their
// parts must lie on distinct nodes, and with GPU coefficients no row can
// tell two 4-GPU parts on the halves of one 8-GPU node from parts on two
// nodes. Separate pools are exact and lose no placement of the offered
// shapes (a placed single-node job sits on a node of one size, so every
// placement is a choice of pool per job); the cost is that a single-node
// configuration appears once per pool in the allocation problem.
//
// Types keep the order of their first appearance in groups, and the pools of
// a type the order of the first appearance of their size. Errors (wrapping
// ErrInvalidInput, as *GroupError) for an empty type name, GPUsPerNode
// outside [1, MaxGPUsPerNode], Nodes outside [1, MaxNodesPerGroup] (also
// after merging), and a pool name that is also a type name; and (as
// *FilterError) for negative options.
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
	s := &Set{index: make(map[string]int, len(groups)), pindex: map[string]int{}}
	type key struct {
		t string
		r int
	}
	where := map[key]int{} // (type, size) -> index in s.pools
	for i, g := range groups {
		switch {
		case g.Type == "":
			return nil, &GroupError{Index: i, Type: g.Type, Field: "Type", Reason: "empty type name"}
		case g.GPUsPerNode <= 0 || g.GPUsPerNode > MaxGPUsPerNode:
			return nil, &GroupError{Index: i, Type: g.Type, Field: "GPUsPerNode", Reason: fmt.Sprintf("must be in [1, %d], got %d", MaxGPUsPerNode, g.GPUsPerNode)}
		case g.Nodes <= 0 || g.Nodes > MaxNodesPerGroup:
			return nil, &GroupError{Index: i, Type: g.Type, Field: "Nodes", Reason: fmt.Sprintf("must be in [1, %d], got %d", MaxNodesPerGroup, g.Nodes)}
		}
		ti, ok := s.index[g.Type]
		if !ok {
			ti = len(s.types)
			s.index[g.Type] = ti
			s.types = append(s.types, typeInfo{name: g.Type})
		}
		k := key{g.Type, g.GPUsPerNode}
		if pi, ok := where[k]; ok {
			if s.pools[pi].Nodes+g.Nodes > MaxNodesPerGroup {
				return nil, &GroupError{Index: i, Type: g.Type, Field: "Nodes", Reason: fmt.Sprintf("the type's %d-GPU nodes total more than %d", g.GPUsPerNode, MaxNodesPerGroup)}
			}
			s.pools[pi].Nodes += g.Nodes
			continue
		}
		where[k] = len(s.pools)
		s.types[ti].pools = append(s.types[ti].pools, len(s.pools))
		s.pools = append(s.pools, Pool{Type: g.Type, GPUsPerNode: g.GPUsPerNode, Nodes: g.Nodes, Chain: Chain(g.GPUsPerNode)})
	}
	for ti := range s.types {
		t := &s.types[ti]
		for _, pi := range t.pools {
			p := &s.pools[pi]
			p.Name = p.Type
			if len(t.pools) > 1 {
				p.Name = PoolName(p.Type, p.GPUsPerNode)
				if _, clash := s.index[p.Name]; clash {
					return nil, &GroupError{Index: slices.IndexFunc(groups, func(g NodeGroup) bool { return g.Type == p.Name }), Type: p.Name, Field: "Type",
						Reason: fmt.Sprintf("is also the name of the pool of the %d-GPU nodes of type %q", p.GPUsPerNode, p.Type)}
				}
			}
			s.pindex[p.Name] = pi
			nodeGPUs := 0
			if len(t.pools) > 1 {
				nodeGPUs = p.GPUsPerNode
			}
			t.configs = append(t.configs, poolConfigs(*p, nodeGPUs, o)...)
		}
	}
	for _, t := range s.types {
		s.offset = append(s.offset, len(s.configs))
		s.configs = append(s.configs, t.configs...)
	}
	return s, nil
}

// poolConfigs lists the configurations of pool p by GPUs ascending.
func poolConfigs(p Pool, nodeGPUs int, o Options) []Config {
	fits := func(nodes, gpus int) bool {
		return (o.MaxGPUs == 0 || gpus <= o.MaxGPUs) && (o.MaxNodes == 0 || nodes <= o.MaxNodes)
	}
	var out []Config
	for _, c := range p.Chain {
		if fits(1, c) {
			out = append(out, Config{Type: p.Type, Nodes: 1, GPUs: c, NodeGPUs: nodeGPUs})
		}
	}
	for n := 2; n <= p.Nodes; n++ {
		if !fits(n, n*p.GPUsPerNode) {
			break
		}
		out = append(out, Config{Type: p.Type, Nodes: n, GPUs: n * p.GPUsPerNode, NodeGPUs: nodeGPUs})
	}
	return out
}

// Types returns the GPU types in first-appearance order of the node groups.
func (s *Set) Types() []string {
	out := make([]string, len(s.types))
	for i, t := range s.types {
		out[i] = t.name
	}
	return out
}

// Pools returns the pools: by type order, then by first appearance of their
// node size. The caller may modify the returned slice.
func (s *Set) Pools() []Pool {
	out := make([]Pool, 0, len(s.pools))
	for _, t := range s.types {
		for _, pi := range t.pools {
			p := s.pools[pi]
			p.Chain = slices.Clone(p.Chain)
			out = append(out, p)
		}
	}
	return out
}

// PoolsOf returns the pools of type t (see Pools), or nil for an unknown type.
func (s *Set) PoolsOf(t string) []Pool {
	i, ok := s.index[t]
	if !ok {
		return nil
	}
	out := make([]Pool, 0, len(s.types[i].pools))
	for _, pi := range s.types[i].pools {
		p := s.pools[pi]
		p.Chain = slices.Clone(p.Chain)
		out = append(out, p)
	}
	return out
}

// Pool returns the pool named name (see Config.Pool), and false if there is
// none.
func (s *Set) Pool(name string) (Pool, bool) {
	pi, ok := s.pindex[name]
	if !ok {
		return Pool{}, false
	}
	p := s.pools[pi]
	p.Chain = slices.Clone(p.Chain)
	return p, true
}

// Configs returns all configurations: by type order, then by pool order, then
// by GPUs ascending. The position of a configuration in this slice is its
// global index (see Index). The caller may modify the returned slice.
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

// ByType returns the configurations of type t by pool, then GPUs ascending,
// or nil for an unknown type.
func (s *Set) ByType(t string) []Config {
	i, ok := s.index[t]
	if !ok {
		return nil
	}
	return append([]Config(nil), s.types[i].configs...)
}

// Fixed returns the shapes of a job of a fixed GPU count g (a rigid job) on
// type t: one configuration per pool of t whose capacity holds g, in pool
// order. On nodes of R GPUs the shape is one node when g ≤ R, else ⌈g/R⌉
// nodes: ⌊g/R⌋ whole nodes and the remainder g mod R on one more node (12 on
// 8-GPU nodes is (2,12): 8 + 4). The result may contain configurations that
// are not in Configs (g not a chain size); such a configuration blocks more
// GPUs of its pool than it uses (see Charge). Options' caps do not apply.
func (s *Set) Fixed(t string, g int) []Config {
	i, ok := s.index[t]
	if !ok || g <= 0 {
		return nil
	}
	var out []Config
	for _, pi := range s.types[i].pools {
		p := &s.pools[pi]
		if g > p.Capacity() {
			continue
		}
		c := Config{Type: t, Nodes: (g + p.GPUsPerNode - 1) / p.GPUsPerNode, GPUs: g}
		if len(s.types[i].pools) > 1 {
			c.NodeGPUs = p.GPUsPerNode
		}
		out = append(out, c)
	}
	return out
}

// Charge returns the GPUs of its pool that configuration c blocks: its whole
// nodes plus, for the part on its last node, the smallest chain size that
// holds it (see Chain); on a pool of a single node, where any parts whose
// GPUs fit the node are placeable, just its GPUs. It equals c.GPUs for
// every configuration in Configs.
// An allocator that charges each configuration this many GPUs against its
// pool's capacity gets only placeable allocations: a part of p GPUs, with c
// the smallest chain size ≥ p, behaves like an item of size c in the
// largest-first packing (it is placed after the items of size c and before
// the smaller ones, and leaves at least the room an item of size c would).
// It returns c.GPUs for a configuration whose pool is unknown or whose shape
// does not fit the pool's nodes. For a spanning configuration it is the
// sum of its parts' charges (see PartCharge).
func (s *Set) Charge(c Config) int {
	if c.Span != "" {
		n := 0
		for _, p := range c.Parts() {
			n += s.PartCharge(c.Type, p)
		}
		return n
	}
	pi, ok := s.pindex[c.Pool()]
	if !ok || c.GPUs <= 0 {
		return c.GPUs
	}
	r := s.pools[pi].GPUsPerNode
	whole, rest := c.GPUs/r, c.GPUs%r
	if rest == 0 || s.pools[pi].Nodes == 1 {
		// on a pool of one node any parts whose GPUs fit are placeable
		return c.GPUs
	}
	for _, k := range s.pools[pi].Chain {
		if k >= rest {
			return whole*r + k
		}
	}
	return c.GPUs
}

// PartCharge returns the GPUs that part p of a spanning configuration of
// type t blocks in its pool (see Charge).
func (s *Set) PartCharge(t string, p Part) int {
	return s.Charge(Config{Type: t, Nodes: p.Nodes, GPUs: p.GPUs, NodeGPUs: p.NodeGPUs})
}

// Capacity returns the total GPUs of type t (over its pools), or 0 for an
// unknown type.
func (s *Set) Capacity(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	n := 0
	for _, pi := range s.types[i].pools {
		n += s.pools[pi].Capacity()
	}
	return n
}

// GPUsPerNode returns the GPUs per node of type t (the largest, for a type
// with nodes of several sizes), or 0 for an unknown type.
func (s *Set) GPUsPerNode(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	r := 0
	for _, pi := range s.types[i].pools {
		r = max(r, s.pools[pi].GPUsPerNode)
	}
	return r
}

// Nodes returns the number of nodes of type t (over its pools), or 0 for an
// unknown type.
func (s *Set) Nodes(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	n := 0
	for _, pi := range s.types[i].pools {
		n += s.pools[pi].Nodes
	}
	return n
}

// JobFilter restricts the configurations a job may use. Zero values mean
// unbounded (MinGPUs, MaxGPUs) and a replica size of 1.
type JobFilter struct {
	// MinGPUs and MaxGPUs bound the configuration's GPUs (inclusive).
	MinGPUs, MaxGPUs int
	// ReplicaSize maps a type to the GPUs of one replica of a hybrid-parallel
	// job on that type; only configurations whose GPUs are a multiple of
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
