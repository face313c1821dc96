package shockwave

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// Ranking is a solution of the fallback's re-ranking MILP.
type Ranking struct {
	// Schedule[r] lists the jobs in round r (ascending).
	Schedule [][]int
	// Cost is Σ_j prio_j · (Σ_{r ∈ rounds of j} r) / n_j over jobs with
	// n_j > 0 (rounds numbered from 0).
	Cost float64
	// Optimal reports that Cost is within the gap of the minimum (false:
	// the node limit was reached and Schedule is the best found).
	Optimal bool
	// Nodes counts the branch-and-bound nodes.
	Nodes int
}

// RankCost evaluates a schedule of the re-ranking MILP: its cost and
// whether it realises the counts n within the capacity.
func RankCost(p *Problem, n []int, prio []float64, sched [][]int) (float64, bool) {
	if len(sched) != p.Rounds || len(n) != len(p.Jobs) || len(prio) != len(p.Jobs) {
		return math.Inf(1), false
	}
	got := make([]int, len(n))
	sum := make([]float64, len(n))
	for r, jobs := range sched {
		load := 0
		seen := map[int]bool{}
		for _, j := range jobs {
			if j < 0 || j >= len(n) || seen[j] {
				return math.Inf(1), false
			}
			seen[j] = true
			got[j]++
			sum[j] += float64(r)
			load += p.Jobs[j].GPUs
		}
		if load > p.GPUs {
			return math.Inf(1), false
		}
	}
	cost := 0.0
	for j := range n {
		if got[j] != n[j] {
			return math.Inf(1), false
		}
		if n[j] > 0 {
			cost += prio[j] * sum[j] / float64(n[j])
		}
	}
	return cost, true
}

// Rank solves the fallback's second MILP: given the planned round counts
// n_j of a feasible plan and the jobs' priorities, choose binary s[j,r]
// with Σ_r s[j,r] = n_j and Σ_j GPUs_j·s[j,r] ≤ GPUs for every round, to
//
//	minimise Σ_{j: n_j > 0} prio_j · (Σ_r r·s[j,r]) / n_j,
//
// so that higher-priority jobs run in earlier rounds. The search is an
// exact branch and bound: jobs in descending prio_j/n_j each choose a set
// of n_j rounds (cheapest sets first); a node is bounded by the larger of
// two relaxations of the jobs still to place (each in its earliest n_j
// rounds ignoring capacity; their GPU-rounds poured into the free capacity
// in descending priority per GPU, ignoring one-round-per-job), and jobs
// that are interchangeable (same GPUs, n_j and priority) take their sets in
// the enumeration's order. The
// incumbent starts from the priority-order greedy of the plan's packer.
// n must be feasible (a Plan's N); prio must be finite and ≥ 0. opt sets
// the relative gap and node limit as for Solve (nil: gap 1e-3, 200,000
// nodes; a negative Gap solves exactly).
func Rank(ctx context.Context, p *Problem, n []int, prio []float64, opt *PlanOptions) (*Ranking, error) {
	gap, limit := opt.limits()
	R := p.Rounds
	pk := newPacker(p, R)
	init := pk.schedule(n, prio, 0)
	best, ok := RankCost(p, n, prio, init)
	if !ok {
		// The greedy's packing searches ran out of budget: start from the
		// plan's own packing.
		if init = pk.pack(n); init == nil {
			return nil, fmt.Errorf("%w: counts %v do not fit the rounds", ErrInvalidPlan, n)
		}
		best, _ = RankCost(p, n, prio, init)
	}
	rk := &rankSearch{p: p, n: n, prio: prio, ctx: ctx, best: best, bestS: init, gap: gap, limit: limit}
	rk.prepare()
	if _, err := rk.dfs(0, 0); err != nil {
		return nil, err
	}
	out := &Ranking{Cost: rk.best, Optimal: !rk.stopped, Nodes: rk.nodes, Schedule: rk.bestS}
	return out, nil
}

type rankSearch struct {
	p     *Problem
	n     []int
	prio  []float64
	ctx   context.Context
	order []int     // jobs with n > 0, descending prio/n
	c     []float64 // prio/n per job
	sets  [][]uint  // round sets with k members, ascending index sum
	// trivial[d] is Σ over order[d:] of c_j·(0+…+n_j−1).
	trivial []float64
	// dens is order sorted by descending c_j/GPUs_j; pos the depth of a job.
	dens []int
	pos  []int
	load []int
	cur  []uint
	// twin[d]: order[d] is interchangeable with order[d−1] (same GPUs, n
	// and prio), so its set index is at least its twin's (symmetry break).
	twin []bool
	at   []int
	// sizes are the distinct GPU counts of the jobs; dead the states
	// proven to have no completion.
	sizes []int
	dead  map[rankKey]bool
	nodes int

	gap     float64
	limit   int
	stopped bool
	best    float64
	bestS   [][]int
}

func (s *rankSearch) prepare() {
	p, R := s.p, s.p.Rounds
	s.c = make([]float64, len(s.n))
	for j, k := range s.n {
		if k > 0 {
			s.c[j] = s.prio[j] / float64(k)
			s.order = append(s.order, j)
		}
	}
	sort.SliceStable(s.order, func(a, b int) bool {
		ja, jb := s.order[a], s.order[b]
		if s.c[ja] != s.c[jb] {
			return s.c[ja] > s.c[jb]
		}
		return p.Jobs[ja].GPUs > p.Jobs[jb].GPUs
	})
	s.pos = make([]int, len(s.n))
	for d, j := range s.order {
		s.pos[j] = d
	}
	s.dens = slices.Clone(s.order)
	sort.SliceStable(s.dens, func(a, b int) bool {
		ja, jb := s.dens[a], s.dens[b]
		return s.c[ja]/float64(p.Jobs[ja].GPUs) > s.c[jb]/float64(p.Jobs[jb].GPUs)
	})
	s.sets = make([][]uint, R+1)
	for m := uint(0); m < 1<<R; m++ {
		k := bits.OnesCount(m)
		s.sets[k] = append(s.sets[k], m)
	}
	for k := range s.sets {
		sort.SliceStable(s.sets[k], func(a, b int) bool { return idxSum(s.sets[k][a]) < idxSum(s.sets[k][b]) })
	}
	s.trivial = make([]float64, len(s.order)+1)
	for d := len(s.order) - 1; d >= 0; d-- {
		j := s.order[d]
		k := float64(s.n[j])
		s.trivial[d] = s.trivial[d+1] + s.c[j]*k*(k-1)/2
	}
	s.load = make([]int, R)
	s.cur = make([]uint, len(s.n))
	s.dead = map[rankKey]bool{}
	for _, j := range s.order {
		if !slices.Contains(s.sizes, p.Jobs[j].GPUs) {
			s.sizes = append(s.sizes, p.Jobs[j].GPUs)
		}
	}
	s.twin = make([]bool, len(s.order))
	s.at = make([]int, len(s.order))
	for d := 1; d < len(s.order); d++ {
		a, b := s.order[d-1], s.order[d]
		s.twin[d] = p.Jobs[a].GPUs == p.Jobs[b].GPUs && s.n[a] == s.n[b] && s.prio[a] == s.prio[b]
	}
}

func idxSum(m uint) int {
	t := 0
	for r := 0; m != 0; r, m = r+1, m>>1 {
		if m&1 != 0 {
			t += r
		}
	}
	return t
}

// bound is a lower bound on the cost of order[d:] given the loads.
func (s *rankSearch) bound(d int) float64 {
	p := s.p
	b := s.trivial[d]
	// Pour the remaining GPU-rounds into the free capacity, densest first.
	r, free := 0, float64(p.GPUs-s.load[0])
	pour := 0.0
	for _, j := range s.dens {
		if s.pos[j] < d {
			continue
		}
		mass := float64(p.Jobs[j].GPUs * s.n[j])
		per := s.c[j] / float64(p.Jobs[j].GPUs)
		for mass > 0 {
			if r >= p.Rounds {
				return math.Inf(1) // does not fit at all
			}
			t := math.Min(mass, free)
			pour += per * t * float64(r)
			mass -= t
			free -= t
			if free <= 0 {
				r++
				if r < p.Rounds {
					free = float64(p.GPUs - s.load[r])
				}
			}
		}
	}
	return math.Max(b, pour)
}

// dfs places order[d:]; it reports false only when it proved that no
// completion of the current rounds exists (such states are remembered).
func (s *rankSearch) dfs(d int, cost float64) (bool, error) {
	s.nodes++
	if s.nodes%1024 == 0 {
		if err := s.ctx.Err(); err != nil {
			return true, err
		}
	}
	if s.nodes > s.limit {
		s.stopped = true
		return true, nil
	}
	if d == len(s.order) {
		if cost < s.best-1e-12*math.Max(1, math.Abs(s.best)) {
			s.best = cost
			s.bestS = s.schedule()
		}
		return true, nil
	}
	if !s.fits(d) {
		return false, nil
	}
	if cost+s.bound(d) >= s.best-s.gap*math.Abs(s.best)-1e-12*math.Max(1, math.Abs(s.best)) {
		return true, nil
	}
	j := s.order[d]
	g := s.p.Jobs[j].GPUs
	start := 0
	if s.twin[d] {
		start = s.at[d-1]
	}
	key := s.key(d, start)
	if s.dead[key] {
		return false, nil
	}
	any := false
	for i := start; i < len(s.sets[s.n[j]]); i++ {
		m := s.sets[s.n[j]][i]
		s.at[d] = i
		ok := true
		for r := 0; r < s.p.Rounds; r++ {
			if m&(1<<r) != 0 && s.load[r]+g > s.p.GPUs {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for r := 0; r < s.p.Rounds; r++ {
			if m&(1<<r) != 0 {
				s.load[r] += g
			}
		}
		s.cur[j] = m
		f, err := s.dfs(d+1, cost+s.c[j]*float64(idxSum(m)))
		any = any || f
		for r := 0; r < s.p.Rounds; r++ {
			if m&(1<<r) != 0 {
				s.load[r] -= g
			}
		}
		if err != nil || s.stopped {
			return true, err
		}
	}
	s.cur[j] = 0
	if !any {
		s.dead[key] = true
	}
	return any, nil
}

// rankKey names a search state for the infeasibility memo: the depth, the
// first set index allowed, and the loads (which rounds are which matters
// to the twin rule, so they are not sorted).
type rankKey struct {
	d, start int32
	load     [maxRankRounds]int32
}

// maxRankRounds is the largest horizon Validate accepts.
const maxRankRounds = 16

func (s *rankSearch) key(d, start int) rankKey {
	k := rankKey{d: int32(d), start: int32(start)}
	for r, l := range s.load {
		k.load[r] = int32(l)
	}
	return k
}

// fits checks necessary conditions for placing order[d:] in the free
// capacity: every job has n_j rounds with room for it, and for every size
// h, the jobs of at least h GPUs fit in the rounds with at least h free.
func (s *rankSearch) fits(d int) bool {
	p := s.p
	for _, h := range s.sizes {
		mass, room, rounds := 0, 0, 0
		for r := range s.load {
			if f := p.GPUs - s.load[r]; f >= h {
				room += f
				rounds++
			}
		}
		for _, j := range s.order[d:] {
			if g := p.Jobs[j].GPUs; g >= h {
				mass += g * s.n[j]
				if g == h && s.n[j] > rounds {
					return false
				}
			}
		}
		if mass > room {
			return false
		}
	}
	return true
}

func (s *rankSearch) schedule() [][]int {
	out := make([][]int, s.p.Rounds)
	for j, m := range s.cur {
		if s.n[j] == 0 {
			continue
		}
		for r := 0; r < s.p.Rounds; r++ {
			if m&(1<<r) != 0 {
				out[r] = append(out[r], j)
			}
		}
	}
	return out
}
