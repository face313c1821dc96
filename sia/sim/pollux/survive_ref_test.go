package pollux

import (
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSurviveMatchesReference checks the survival step against its first
// version on random populations with many ties and duplicate objectives:
// the same survivors in the same order, the same ranks and crowding
// distances (bit for bit) and the same generator state afterwards.
func TestSurviveMatchesReference(t *testing.T) {
	r := &wyrand{s: 7}
	for trial := 0; trial < 1000; trial++ {
		N := 1 + r.intN(220)
		n := 1 + r.intN(N)
		grid := 1 + r.intN(12)
		a, b := make([]*indiv, N), make([]*indiv, N)
		for i := range a {
			f := [2]float64{-float64(r.intN(grid)) / 3, -float64(r.intN(grid)) / 7}
			if r.intN(4) == 0 {
				f[0] = -r.float64()
			}
			a[i], b[i] = &indiv{f: f, rank: -1}, &indiv{f: f, rank: -1}
		}
		seed := r.next()
		ga, gb := &gaState{rng: &wyrand{s: seed}}, &gaState{rng: &wyrand{s: seed}}
		outA := ga.survive(a, n)
		outB := refSurvive(gb, b, n)
		require.Len(t, outA, len(outB), "trial %d", trial)
		pos := map[*indiv]int{}
		for i, in := range a {
			pos[in] = i
		}
		for k := range outA {
			i := pos[outA[k]]
			require.Same(t, b[i], outB[k], "trial %d: survivor %d", trial, k)
		}
		for i := range a {
			require.Equal(t, b[i].rank, a[i].rank, "trial %d: rank of %d", trial, i)
			require.Equal(t, math.Float64bits(b[i].crowd), math.Float64bits(a[i].crowd), "trial %d: crowding of %d", trial, i)
		}
		assert.Equal(t, gb.rng.s, ga.rng.s, "trial %d: generator state", trial)
	}
}

// TestNonDominatedMatchesBruteForce compares the two-objective sort with the
// definition on random populations with many ties.
func TestNonDominatedMatchesBruteForce(t *testing.T) {
	r := &wyrand{s: 42}
	var s survival
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.intN(60)
		pop := make([]*indiv, n)
		for i := range pop {
			pop[i] = &indiv{f: [2]float64{float64(r.intN(6)), float64(r.intN(6))}}
		}
		s.assignFronts(pop)
		// Brute force: rank = length of the longest dominating chain above.
		brute := make([]int, n)
		for changed := true; changed; {
			changed = false
			for i := range pop {
				for k := range pop {
					if dominates(pop[k].f, pop[i].f) == 1 && brute[i] < brute[k]+1 {
						brute[i] = brute[k] + 1
						changed = true
					}
				}
			}
		}
		assert.Equal(t, brute, s.frontOf, "trial %d", trial)
		for f := 0; f+1 < len(s.start); f++ {
			assert.True(t, slices.IsSorted(s.byIndex[s.start[f]:s.start[f+1]]), "trial %d: front %d in index order", trial, f)
		}
	}
}

func TestMergeSort(t *testing.T) {
	r := &wyrand{s: 3}
	for trial := 0; trial < 300; trial++ {
		n := r.intN(300)
		keys := make([]sortKey, n)
		for i := range keys {
			keys[i] = sortKey{float64(r.intN(5)), float64(r.intN(5)), i}
		}
		want := slices.Clone(keys)
		sort.Slice(want, func(a, b int) bool { return want[a].less(want[b]) })
		mergeSort(keys, make([]sortKey, n))
		require.Equal(t, want, keys, "trial %d", trial)
	}
}

// refSurvive is the survival step as first written (sorts by comparison,
// fronts as lists, crowding by sorting each front twice): the twin that
// survive must match exactly.
func refSurvive(g *gaState, pop []*indiv, n int) []*indiv {
	fronts := refNonDominated(pop)
	var out []*indiv
	for r, front := range fronts {
		refCrowding(pop, front)
		for _, i := range front {
			pop[i].rank = r
		}
		if len(out)+len(front) > n {
			sorted := append([]int(nil), front...)
			// descending crowding; random order among equals
			for i := len(sorted) - 1; i > 0; i-- {
				k := g.rng.intN(i + 1)
				sorted[i], sorted[k] = sorted[k], sorted[i]
			}
			slices.SortStableFunc(sorted, func(a, b int) int {
				ca, cb := pop[a].crowd, pop[b].crowd
				switch {
				case ca > cb:
					return -1
				case ca < cb:
					return 1
				}
				return 0
			})
			for _, i := range sorted[:n-len(out)] {
				out = append(out, pop[i])
			}
			break
		}
		for _, i := range front {
			out = append(out, pop[i])
		}
	}
	return out
}

func refNonDominated(pop []*indiv) [][]int {
	// Two objectives: sort lexicographically; a point can only be dominated
	// by points before it, and the members of a front have non-increasing f1,
	// so the last member of a front decides unless it ties on f1.
	idx := make([]int, len(pop))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		fa, fb := pop[a].f, pop[b].f
		switch {
		case fa[0] < fb[0]:
			return -1
		case fa[0] > fb[0]:
			return 1
		case fa[1] < fb[1]:
			return -1
		case fa[1] > fb[1]:
			return 1
		}
		return a - b // ties in index order (a stable sort)
	})
	// Per front: the smallest f1 so far and the f0 of its first member with
	// that f1 (members are added in ascending f0). A front dominates p iff
	// minF1 < p.f1, or minF1 == p.f1 with a strictly smaller f0. Domination is
	// monotone over fronts, so a binary search finds p's front (ENS-BS).
	var fronts [][]int
	var minF1, f0At []float64
	for _, i := range idx {
		f := pop[i].f
		k := sort.Search(len(fronts), func(k int) bool {
			return !(minF1[k] < f[1] || (minF1[k] == f[1] && f0At[k] < f[0]))
		})
		if k == len(fronts) {
			fronts = append(fronts, nil)
			minF1 = append(minF1, math.Inf(1))
			f0At = append(f0At, 0)
		}
		fronts[k] = append(fronts[k], i)
		if f[1] < minF1[k] {
			minF1[k], f0At[k] = f[1], f[0]
		}
	}
	for _, fr := range fronts {
		sort.Ints(fr)
	}
	return fronts
}

func refCrowding(pop []*indiv, front []int) {
	for _, i := range front {
		pop[i].crowd = 0
	}
	if len(front) <= 2 {
		for _, i := range front {
			pop[i].crowd = math.Inf(1)
		}
		return
	}
	idx := append([]int(nil), front...)
	for k := 0; k < 2; k++ {
		// Equivalent to stable sorts by f0, then by f1, of the front (which
		// is in index order): ties broken by the other objective, then index.
		slices.SortFunc(idx, func(a, b int) int {
			fa, fb := pop[a].f, pop[b].f
			if fa[k] != fb[k] {
				if fa[k] < fb[k] {
					return -1
				}
				return 1
			}
			if k == 1 && fa[0] != fb[0] {
				if fa[0] < fb[0] {
					return -1
				}
				return 1
			}
			return a - b
		})
		lo, hi := pop[idx[0]].f[k], pop[idx[len(idx)-1]].f[k]
		pop[idx[0]].crowd = math.Inf(1)
		pop[idx[len(idx)-1]].crowd = math.Inf(1)
		if hi == lo {
			continue
		}
		for m := 1; m < len(idx)-1; m++ {
			pop[idx[m]].crowd += (pop[idx[m+1]].f[k] - pop[idx[m-1]].f[k]) / (hi - lo)
		}
	}
}
