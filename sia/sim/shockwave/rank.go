package shockwave

import (
	"context"
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
	// Optimal reports that Cost is the minimum (false: the node limit was
	// reached and Schedule is the best found).
	Optimal bool
	// Nodes counts the branch-and-bound nodes.
	Nodes int
}

// rankNodeLimit bounds the re-ranking search.
const rankNodeLimit = 200000

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
// in descending priority per GPU, ignoring one-round-per-job). The
// incumbent starts from the priority-order greedy of the plan's packer.
// n must be feasible (a Plan's N); prio must be finite and ≥ 0.
func Rank(ctx context.Context, p *Problem, n []int, prio []float64) (*Ranking, error) {
	R := p.Rounds
	pk := newPacker(p, R)
	init := pk.schedule(n, prio, 0)
	best, _ := RankCost(p, n, prio, init)
	rk := &rankSearch{p: p, n: n, prio: prio, ctx: ctx, best: best, bestS: init}
	rk.prepare()
	if err := rk.dfs(0, 0); err != nil {
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
	dens  []int
	pos   []int
	load  []int
	cur   []uint
	nodes int

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

func (s *rankSearch) dfs(d int, cost float64) error {
	s.nodes++
	if s.nodes%1024 == 0 {
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if s.nodes > rankNodeLimit {
		s.stopped = true
		return nil
	}
	if d == len(s.order) {
		if cost < s.best-1e-12*math.Max(1, math.Abs(s.best)) {
			s.best = cost
			s.bestS = s.schedule()
		}
		return nil
	}
	if cost+s.bound(d) >= s.best-1e-12*math.Max(1, math.Abs(s.best)) {
		return nil
	}
	j := s.order[d]
	g := s.p.Jobs[j].GPUs
	for _, m := range s.sets[s.n[j]] {
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
		err := s.dfs(d+1, cost+s.c[j]*float64(idxSum(m)))
		for r := 0; r < s.p.Rounds; r++ {
			if m&(1<<r) != 0 {
				s.load[r] -= g
			}
		}
		if err != nil || s.stopped {
			return err
		}
	}
	s.cur[j] = 0
	return nil
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
