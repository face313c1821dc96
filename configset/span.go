package configset

import (
	"slices"
	"strconv"
	"strings"
)

// Part is the share of a spanning configuration (see Span) on the nodes of
// one pool: GPUs GPUs on Nodes nodes with NodeGPUs GPUs each, as whole nodes
// and at most one remainder on one more node.
type Part struct {
	NodeGPUs, Nodes, GPUs int
}

// MaxSpanSearch bounds the shapes Span compares for one GPU count; beyond
// it Span keeps the best shape found so far (the first one tried is the
// largest-nodes-first shape, which always holds the count).
const MaxSpanSearch = 4096

// Spanning reports whether c spans several pools of its type (Span is
// set).
func (c Config) Spanning() bool { return c.Span != "" }

// Parts returns the per-pool shares of a spanning configuration in the
// type's pool order, or nil when c lies in one pool (or Span is malformed).
func (c Config) Parts() []Part {
	if c.Span == "" {
		return nil
	}
	var out []Part
	for _, f := range strings.Split(c.Span, "+") {
		var p Part
		a, rest, ok1 := strings.Cut(f, "x")
		b, g, ok2 := strings.Cut(rest, ":")
		var e1, e2, e3 error
		p.NodeGPUs, e1 = strconv.Atoi(a)
		p.Nodes, e2 = strconv.Atoi(b)
		p.GPUs, e3 = strconv.Atoi(g)
		if !ok1 || !ok2 || e1 != nil || e2 != nil || e3 != nil {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// encodeSpan is the canonical Span of parts (already in pool order):
// R×n:g per part joined by "+", for example "8x1:8+6x2:12".
func encodeSpan(parts []Part) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(p.NodeGPUs))
		b.WriteByte('x')
		b.WriteString(strconv.Itoa(p.Nodes))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p.GPUs))
	}
	return b.String()
}

// Spanned returns the configuration of type t made of parts (one per pool,
// any order): Nodes and GPUs are the parts' sums, Span their canonical
// encoding in the type's pool order. It returns false when the type has
// one pool, a part names no pool of t or one pool twice, a part's shape
// does not fit its pool (1 ≤ Nodes ≤ the pool's nodes, Nodes ≤ GPUs ≤
// Nodes × NodeGPUs), or fewer than two parts are given. A host's current
// allocation on nodes of several sizes is such a configuration.
func (s *Set) Spanned(t string, parts []Part) (Config, bool) {
	i, ok := s.index[t]
	if !ok || len(s.types[i].pools) < 2 || len(parts) < 2 {
		return Config{}, false
	}
	order := make([]Part, 0, len(parts))
	c := Config{Type: t}
	for _, pi := range s.types[i].pools {
		pool := &s.pools[pi]
		k := slices.IndexFunc(parts, func(p Part) bool { return p.NodeGPUs == pool.GPUsPerNode })
		if k < 0 {
			continue
		}
		p := parts[k]
		if slices.IndexFunc(parts[k+1:], func(q Part) bool { return q.NodeGPUs == p.NodeGPUs }) >= 0 ||
			p.Nodes < 1 || p.Nodes > pool.Nodes || p.GPUs < p.Nodes || p.GPUs > p.Nodes*pool.GPUsPerNode {
			return Config{}, false
		}
		order = append(order, p)
		c.Nodes += p.Nodes
		c.GPUs += p.GPUs
	}
	if len(order) != len(parts) {
		return Config{}, false
	}
	c.Span = encodeSpan(order)
	return c, true
}

// largestPool returns the capacity of the largest pool of type index i.
func (s *Set) largestPool(i int) int {
	most := 0
	for _, pi := range s.types[i].pools {
		most = max(most, s.pools[pi].Capacity())
	}
	return most
}

// LargestPool returns the GPUs of the largest pool of type t (0 for an
// unknown type): the largest count a configuration within one pool holds.
func (s *Set) LargestPool(t string) int {
	i, ok := s.index[t]
	if !ok {
		return 0
	}
	return s.largestPool(i)
}

// Span returns the spanning configuration of g GPUs of type t, for a count
// that no pool of t holds (g above its largest pool, at most the type's
// capacity); false otherwise. The shape is on the fewest nodes (the k
// largest nodes of the type hold g, k−1 do not) and, among the shapes on k
// nodes, charges the fewest GPUs (see Charge; ties: more GPUs on larger
// nodes): whole nodes of each pool, the deficit taken off one node, whose
// remainder part is the only part that is not a whole node. At most
// MaxSpanSearch shapes are compared.
//
// Such a configuration is placeable whenever each pool's charges fit the
// pool: its parts are items of the pool's chain sizes (whole nodes, and the
// remainder charged as the smallest chain size holding it), so the
// largest-first packing argument of Chain holds pool by pool, and whole
// nodes are distinct nodes by construction.
func (s *Set) Span(t string, g int) (Config, bool) {
	i, ok := s.index[t]
	if !ok || len(s.types[i].pools) < 2 || g <= s.largestPool(i) || g > s.Capacity(t) {
		return Config{}, false
	}
	// pools by node size, largest first
	ps := make([]*Pool, 0, len(s.types[i].pools))
	for _, pi := range s.types[i].pools {
		ps = append(ps, &s.pools[pi])
	}
	slices.SortStableFunc(ps, func(a, b *Pool) int { return b.GPUsPerNode - a.GPUsPerNode })
	k, sum := 0, 0
	for _, p := range ps {
		take := min(p.Nodes, ceilDiv(g-sum, p.GPUsPerNode))
		k, sum = k+take, sum+take*p.GPUsPerNode
		if sum >= g {
			break
		}
	}
	w := make([]int, len(ps))
	best := struct {
		w      []int
		q      int // remainder pool (index in ps), -1 for none
		charge int
	}{q: -1, charge: -1}
	steps := 0
	var dfs func(at, left, total int)
	dfs = func(at, left, total int) {
		if steps >= MaxSpanSearch {
			return
		}
		if at == len(ps) {
			steps++
			if left != 0 || total < g {
				return
			}
			s.spanCandidate(ps, w, total-g, &best.w, &best.q, &best.charge)
			return
		}
		// the most capacity the remaining pools can add with left nodes
		for n := min(ps[at].Nodes, left); n >= 0; n-- {
			w[at] = n
			dfs(at+1, left-n, total+n*ps[at].GPUsPerNode)
		}
		w[at] = 0
	}
	dfs(0, k, 0)
	if best.w == nil {
		return Config{}, false
	}
	parts := make([]Part, 0, len(ps))
	d := 0
	for x, n := range best.w {
		if n == 0 {
			continue
		}
		p := Part{NodeGPUs: ps[x].GPUsPerNode, Nodes: n, GPUs: n * ps[x].GPUsPerNode}
		if x == best.q {
			d = sumParts(ps, best.w) - g
			p.GPUs -= d
		}
		parts = append(parts, p)
	}
	c, ok := s.Spanned(t, parts)
	return c, ok && c.GPUs == g
}

func sumParts(ps []*Pool, w []int) int {
	n := 0
	for x, k := range w {
		n += k * ps[x].GPUsPerNode
	}
	return n
}

// spanCandidate keeps the shape w (deficit d) in best when it charges
// fewer GPUs: the deficit comes off one node of a pool q with more than d
// GPUs per node (none when d = 0).
func (s *Set) spanCandidate(ps []*Pool, w []int, d int, bw *[]int, bq, bc *int) {
	used := 0
	for _, n := range w {
		if n > 0 {
			used++
		}
	}
	if used < 2 {
		return // in one pool: not a spanning shape
	}
	try := func(q, charge int) {
		if *bc < 0 || charge < *bc {
			*bw, *bq, *bc = slices.Clone(w), q, charge
		}
	}
	total := sumParts(ps, w)
	if d == 0 {
		try(-1, total)
		return
	}
	for q := len(w) - 1; q >= 0; q-- { // ties: the remainder on the smaller nodes
		r := ps[q].GPUsPerNode
		if w[q] == 0 || r <= d {
			continue
		}
		rest := chainCeil(ps[q].Chain, r-d)
		if ps[q].Nodes == 1 {
			rest = r - d // a pool of one node: charged its GPUs (see Charge)
		}
		try(q, total-r+rest)
	}
}

// chainCeil returns the smallest chain size ≥ x.
func chainCeil(chain []int, x int) int {
	for _, c := range chain {
		if c >= x {
			return c
		}
	}
	return x
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Spans returns the spanning configurations of type t offered to a job
// whose GPU count lies in [minG, maxG] (maxG ≤ 0: no bound) in multiples of
// step (≤ 1: any), when no pool of t holds minG (otherwise nil): the whole
// nodes of the k largest nodes for each k whose GPUs lie in the range, and
// the smallest multiple of step ≥ minG (see Span), at most limit of them
// (≤ 0: no limit), by GPUs ascending.
func (s *Set) Spans(t string, minG, maxG, step, limit int) []Config {
	i, ok := s.index[t]
	if !ok || len(s.types[i].pools) < 2 || minG <= s.largestPool(i) {
		return nil
	}
	step = max(step, 1)
	capT := s.Capacity(t)
	if maxG <= 0 || maxG > capT {
		maxG = capT
	}
	var sizes []int
	if g := ceilDiv(minG, step) * step; g <= maxG {
		sizes = append(sizes, g)
	}
	var nodes []int
	for _, pi := range s.types[i].pools {
		for n := 0; n < s.pools[pi].Nodes && len(nodes) < 1<<16; n++ {
			nodes = append(nodes, s.pools[pi].GPUsPerNode)
		}
	}
	slices.SortFunc(nodes, func(a, b int) int { return b - a })
	sum := 0
	for _, r := range nodes {
		sum += r
		if sum > maxG {
			break
		}
		if sum > minG && sum%step == 0 {
			sizes = append(sizes, sum)
		}
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	var out []Config
	for _, g := range sizes {
		if limit > 0 && len(out) == limit {
			break
		}
		if c, ok := s.Span(t, g); ok {
			out = append(out, c)
		}
	}
	return out
}
