package ilp

import (
	"container/heap"
)

// marginalGreedy is a primal heuristic for the capacity-bound rounds in
// which the Lagrangian choices at lam over-demand some types: every free
// job is given the type of its Lagrangian choice (jobs whose choice is none
// wait), and each type's capacity is then handed out by marginal profit per
// GPU, one step up a job's upper concave hull of (GPUs, profit) over its
// options of the type at a time, best step first: the greedy that is
// optimal for one capacity and concave profits up to the last step. Jobs
// left without an option then take, in job order, the option of least
// reduced cost that fits, and a last pass gives every job any more
// profitable option that still fits. The result (parallel to free) fits
// every row.
func (sr *search) marginalGreedy(free []int32, capv []int, lam []float64) []int {
	m := sr.m
	choice := make([]int, len(free))
	left := append([]int(nil), capv...)
	chains := make([][]int, len(free)) // hull of each job's options on its type
	pos := make([]int, len(free))      // position reached on the chain (-1: none)
	var h stepHeap
	for k, i := range free {
		choice[k], pos[k] = -1, -1
		j := &m.jobs[i]
		c := j.lagChoice(lam)
		if c < 0 {
			continue
		}
		t := int(j.groups[j.opts[c].grp].rows[0])
		// the job's options of type t are contiguous, GPUs ascending and
		// profit increasing (see newModel); keep their upper hull
		var ch []int
		for oi := range j.opts {
			if !j.onType(oi, t) {
				continue
			}
			for len(ch) >= 1 {
				x1, y1 := 0.0, 0.0
				if len(ch) >= 2 {
					x1, y1 = float64(j.opts[ch[len(ch)-2]].g), j.opts[ch[len(ch)-2]].p
				}
				x2, y2 := float64(j.opts[ch[len(ch)-1]].g), j.opts[ch[len(ch)-1]].p
				x3, y3 := float64(j.opts[oi].g), j.opts[oi].p
				if (y2-y1)*(x3-x1) <= (y3-y1)*(x2-x1) {
					ch = ch[:len(ch)-1]
				} else {
					break
				}
			}
			ch = append(ch, oi)
		}
		chains[k] = ch
		o := &j.opts[ch[0]]
		heap.Push(&h, step{k: k, slope: o.p / float64(o.g)})
	}
	for h.Len() > 0 {
		if sr.clk.tick(64) {
			break // what is placed so far fits
		}
		s := heap.Pop(&h).(step)
		k := s.k
		j := &m.jobs[free[k]]
		next := chains[k][pos[k]+1]
		if c := choice[k]; c >= 0 {
			apply(left, j, c, -1)
		}
		if !sr.fits(left, j, next) {
			if c := choice[k]; c >= 0 {
				apply(left, j, c, 1)
			}
			continue // the job stays where it is
		}
		apply(left, j, next, 1)
		choice[k] = next
		pos[k]++
		if pos[k]+1 < len(chains[k]) {
			a, b := &j.opts[next], &j.opts[chains[k][pos[k]+1]]
			heap.Push(&h, step{k: k, slope: (b.p - a.p) / float64(b.g-a.g)})
		}
	}
	// jobs still without an option: least reduced cost that fits (past
	// the greedy incumbents' time, see clock.greedyOver, the jobs seen so
	// far)
	var pace1, pace2 greedyPace // the clock, by the work of each pass (lateclock.go)
	for k, i := range free {
		j := &m.jobs[i]
		if pace1.over(sr.clk, j) {
			break
		}
		if choice[k] >= 0 {
			continue
		}
		hb, _ := j.best(lam)
		bo, brc := -1, 0.0
		for oi := range j.opts {
			o := &j.opts[oi]
			rc := hb - (o.p - j.groups[o.grp].price(lam)*float64(o.g))
			if (bo < 0 || rc < brc) && sr.fits(left, j, oi) {
				bo, brc = oi, rc
			}
		}
		if bo >= 0 {
			choice[k] = bo
			apply(left, j, bo, 1)
		}
	}
	for k, i := range free {
		if pace2.over(sr.clk, &m.jobs[i]) {
			break
		}
		choice[k] = sr.upgrade(left, &m.jobs[i], choice[k])
	}
	return choice
}

// step is one step up a job's chain in marginalGreedy, worth slope per GPU.
type step struct {
	k     int
	slope float64
}

// stepHeap is a max-heap of steps by slope (ties: lower job position).
type stepHeap []step

func (h stepHeap) Len() int { return len(h) }
func (h stepHeap) Less(a, b int) bool {
	if h[a].slope != h[b].slope {
		return h[a].slope > h[b].slope
	}
	return h[a].k < h[b].k
}
func (h stepHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *stepHeap) Push(x any)   { *h = append(*h, x.(step)) }
func (h *stepHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
