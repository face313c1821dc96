package pollux

import (
	"math"
	"slices"
)

// survival is the scratch of NSGA-II's survival step, reused across
// generations.
type survival struct {
	keys, tmp   []sortKey
	frontOf     []int // front of each individual
	minF1, f0At []float64
	start       []int // start of each front in byIndex and bySorted
	byIndex     []int // individuals grouped by front, by index within one
	bySorted    []int // the same, in (f0, f1, index) order within one
	rev         []int // one front in (f1, f0, index) order
	split       []int
	out         []*indiv
}

// sortKey is an individual's objectives and index, ordered lexicographically.
type sortKey struct {
	f0, f1 float64
	i      int
}

func (a sortKey) less(b sortKey) bool {
	switch {
	case a.f0 < b.f0:
		return true
	case a.f0 > b.f0:
		return false
	case a.f1 < b.f1:
		return true
	case a.f1 > b.f1:
		return false
	}
	return a.i < b.i
}

// survive keeps n individuals by non-dominated rank and crowding distance:
// whole fronts in rank order, then the members of the first front that does
// not fit by descending crowding distance (random order among equals). Each
// front is in index order. The objectives must not be NaN.
func (g *gaState) survive(pop []*indiv, n int) []*indiv {
	s := &g.sv
	s.assignFronts(pop)
	out := s.out[:0]
	for r := 0; r+1 < len(s.start); r++ {
		front := s.byIndex[s.start[r]:s.start[r+1]]
		s.crowding(pop, s.bySorted[s.start[r]:s.start[r+1]])
		for _, i := range front {
			pop[i].rank = r
		}
		if len(out)+len(front) > n {
			sorted := append(s.split[:0], front...)
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
			s.split = sorted
			break
		}
		for _, i := range front {
			out = append(out, pop[i])
		}
	}
	// The next call overwrites out: run copies it into the next combined
	// population first, which is all survive reads.
	s.out = out
	return out
}

// assignFronts sorts the population into non-dominated fronts (ENS-BS for
// two objectives): in (f0, f1, index) order, a point can only be dominated
// by points before it, and each front keeps its smallest f1 so far and the f0
// of its first member with that f1. A front dominates a point iff that f1 is
// smaller, or equal with a strictly smaller f0; domination is monotone over
// the fronts, so a binary search finds the point's front.
func (s *survival) assignFronts(pop []*indiv) {
	N := len(pop)
	s.keys = slices.Grow(s.keys[:0], N)[:N]
	for i, in := range pop {
		s.keys[i] = sortKey{in.f[0], in.f[1], i}
	}
	s.tmp = slices.Grow(s.tmp[:0], N)[:N]
	mergeSort(s.keys, s.tmp)
	s.frontOf = slices.Grow(s.frontOf[:0], N)[:N]
	s.minF1, s.f0At = s.minF1[:0], s.f0At[:0]
	for _, k := range s.keys {
		lo, hi := 0, len(s.minF1)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if s.minF1[m] < k.f1 || (s.minF1[m] == k.f1 && s.f0At[m] < k.f0) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(s.minF1) {
			s.minF1 = append(s.minF1, math.Inf(1))
			s.f0At = append(s.f0At, 0)
		}
		s.frontOf[k.i] = lo
		if k.f1 < s.minF1[lo] {
			s.minF1[lo], s.f0At[lo] = k.f1, k.f0
		}
	}
	// Group by front (a counting sort, stable in both orders).
	nf := len(s.minF1)
	s.start = append(s.start[:0], make([]int, nf+1)...)
	for _, f := range s.frontOf {
		s.start[f+1]++
	}
	for f := 0; f < nf; f++ {
		s.start[f+1] += s.start[f]
	}
	s.byIndex = slices.Grow(s.byIndex[:0], N)[:N]
	s.bySorted = slices.Grow(s.bySorted[:0], N)[:N]
	next := s.rev[:0]
	next = append(next, s.start[:nf]...)
	for i, f := range s.frontOf {
		s.byIndex[next[f]] = i
		next[f]++
	}
	copy(next, s.start[:nf])
	for _, k := range s.keys {
		f := s.frontOf[k.i]
		s.bySorted[next[f]] = k.i
		next[f]++
	}
	s.rev = next
}

// crowding sets the crowding distance of one front's members, given in
// (f0, index) order: the sum over the objectives of the gap between each
// member's neighbours in that objective's order, over the objective's range;
// the extremes of each order get +Inf. In a front, a larger f0 means a
// smaller f1, and equal f0 equal f1, so the f1 order (ties by f0, then
// index) is the f0 order with its groups of equal objectives reversed.
func (s *survival) crowding(pop []*indiv, byF0 []int) {
	for _, i := range byF0 {
		pop[i].crowd = 0
	}
	if len(byF0) <= 2 {
		for _, i := range byF0 {
			pop[i].crowd = math.Inf(1)
		}
		return
	}
	addGaps(pop, byF0, 0)
	byF1 := s.rev[:0]
	for end := len(byF0); end > 0; {
		b := end - 1
		for b > 0 && pop[byF0[b-1]].f == pop[byF0[end-1]].f {
			b--
		}
		byF1 = append(byF1, byF0[b:end]...)
		end = b
	}
	s.rev = byF1
	addGaps(pop, byF1, 1)
}

// addGaps adds objective k's normalised neighbour gaps to the crowding
// distance of members sorted by that objective.
func addGaps(pop []*indiv, idx []int, k int) {
	lo, hi := pop[idx[0]].f[k], pop[idx[len(idx)-1]].f[k]
	pop[idx[0]].crowd = math.Inf(1)
	pop[idx[len(idx)-1]].crowd = math.Inf(1)
	if hi == lo {
		return
	}
	for m := 1; m < len(idx)-1; m++ {
		pop[idx[m]].crowd += (pop[idx[m+1]].f[k] - pop[idx[m-1]].f[k]) / (hi - lo)
	}
}

// mergeSort sorts keys (a strict total order) using tmp, of the same length,
// as scratch: insertion-sorted runs of 16, then bottom-up merges.
func mergeSort(keys, tmp []sortKey) {
	const run = 16
	n := len(keys)
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for i := lo + 1; i < hi; i++ {
			for j := i; j > lo && keys[j].less(keys[j-1]); j-- {
				keys[j], keys[j-1] = keys[j-1], keys[j]
			}
		}
	}
	src, dst := keys, tmp
	for w := run; w < n; w *= 2 {
		for lo := 0; lo < n; lo += 2 * w {
			mid, hi := min(lo+w, n), min(lo+2*w, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if src[j].less(src[i]) {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if n > 0 && &src[0] != &keys[0] {
		copy(keys, src)
	}
}
