package sia_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/placement"
	"github.com/sia-sched/sia/sia"
)

// fillTwin is the brute-force twin of the fill step: from a plan and its
// snapshot alone it finds the idle GPUs of every node and tells, by trying
// every assignment of an entry's per-node parts to distinct nodes, whether
// a waiting job could run on them with a configuration the matrix
// evaluated, within the quotas and reservations (counted by GPUs held).
type fillTwin struct {
	snap     sia.Snapshot
	plan     *sia.Plan
	idle     map[string]int // per node
	heldType map[string]int
	capacity map[string]int
	heldBy   map[string]sia.Allocation // job → allocation
}

func newFillTwin(snap sia.Snapshot, plan *sia.Plan) *fillTwin {
	tw := &fillTwin{snap: snap, plan: plan, idle: map[string]int{}, heldType: map[string]int{}, capacity: map[string]int{}, heldBy: map[string]sia.Allocation{}}
	for _, n := range snap.Nodes {
		tw.idle[n.ID] = n.GPUs
		tw.capacity[n.Type] += n.GPUs
	}
	for _, d := range plan.Decisions {
		for _, g := range d.Allocation.Placement {
			tw.idle[g.Node]--
		}
		if d.Allocation.Running() {
			tw.heldType[d.Allocation.Type] += d.Allocation.GPUs
			tw.heldBy[d.Job] = d.Allocation
		}
	}
	return tw
}

// idleGPUs returns the GPUs no decision holds.
func (tw *fillTwin) idleGPUs() int {
	n := 0
	for _, k := range tw.idle {
		n += k
	}
	return n
}

// limitsHold reports whether job j taking g GPUs of type typ keeps every
// quota covering it and the type's reservation.
func (tw *fillTwin) limitsHold(j string, typ string, g int) bool {
	if r := tw.snap.Reserved[typ]; r > 0 && tw.heldType[typ]+g > tw.capacity[typ]-r {
		return false
	}
	for _, q := range tw.snap.Quotas {
		if !slices.Contains(q.Jobs, j) || q.Type != "" && q.Type != typ {
			continue
		}
		used := g
		for _, id := range q.Jobs {
			if a, ok := tw.heldBy[id]; ok && (q.Type == "" || a.Type == q.Type) {
				used += a.GPUs
			}
		}
		if used > q.Limit {
			return false
		}
	}
	return true
}

// fits reports whether configuration c can be placed on the idle GPUs by
// its shape (each part of a spanning configuration in its own pool).
func (tw *fillTwin) fits(c configset.Config) bool {
	if c.Spanning() {
		for _, p := range c.Parts() {
			if !tw.partFits(c.Type, p.NodeGPUs, p.Nodes, p.GPUs, p.NodeGPUs) {
				return false
			}
		}
		return true
	}
	r := c.NodeGPUs
	for _, n := range tw.snap.Nodes {
		if n.Type == c.Type && c.NodeGPUs == 0 {
			r = max(r, n.GPUs)
		}
	}
	return tw.partFits(c.Type, c.NodeGPUs, c.Nodes, c.GPUs, r)
}

// partFits tries every assignment of the per-node counts of g GPUs on n
// nodes of r GPUs (placement.Shape, or an even split over n nodes) to
// distinct idle nodes of the pool.
func (tw *fillTwin) partFits(typ string, size, n, g, r int) bool {
	counts := placement.Shape(g, r)
	if n > 0 && n != len(counts) {
		if n > g || (g+n-1)/n > r {
			return false
		}
		counts = make([]int, n)
		for k := range counts {
			counts[k] = g / n
			if k < g%n {
				counts[k]++
			}
		}
	}
	if counts == nil {
		return false
	}
	var pool []string
	for _, nd := range tw.snap.Nodes {
		if nd.Type == typ && (size == 0 || nd.GPUs == size) {
			pool = append(pool, nd.ID)
		}
	}
	used := map[string]bool{}
	var try func(k int) bool
	try = func(k int) bool {
		if k == len(counts) {
			return true
		}
		for _, id := range pool {
			if !used[id] && tw.idle[id] >= counts[k] {
				used[id] = true
				if try(k + 1) {
					return true
				}
				used[id] = false
			}
		}
		return false
	}
	return try(0)
}

// strands returns the entry with which waiting job i could run on the idle
// GPUs, worth more than waiting, within the limits ("" when none).
func (tw *fillTwin) strands(i int) string {
	m := sia.PlanMatrix(tw.plan)
	row := &m.Rows[i]
	for _, e := range row.Entries {
		if e.Dropped || e.Dominated || e.Invalid {
			continue
		}
		gain := e.Value - row.Unallocated
		if m.Sense == ilp.Minimize {
			gain = -gain
		}
		if gain > 0 && tw.fits(e.Config) && tw.limitsHold(row.Job, e.Config.Type, e.Config.GPUs) {
			return e.Config.String()
		}
	}
	return ""
}

// grows returns an entry of filled job i's row worth more than the one it
// was started on that fits the idle GPUs with its own GPUs given back, by
// its shape, within the limits ("" when none). Its current entry, which
// fill puts only on exactly its current GPUs, is left out.
func (tw *fillTwin) grows(i int) string {
	m := sia.PlanMatrix(tw.plan)
	row := &m.Rows[i]
	d := tw.plan.Decisions[i]
	cur := sia.PlanEntry(tw.plan, i)
	if cur == nil || d.Action != sia.Start {
		return ""
	}
	for _, g := range d.Allocation.Placement {
		tw.idle[g.Node]++
	}
	tw.heldType[d.Allocation.Type] -= d.Allocation.GPUs
	delete(tw.heldBy, d.Job)
	defer func() {
		for _, g := range d.Allocation.Placement {
			tw.idle[g.Node]--
		}
		tw.heldType[d.Allocation.Type] += d.Allocation.GPUs
		tw.heldBy[d.Job] = d.Allocation
	}()
	for k, e := range row.Entries {
		if k == row.Current || e.Dropped || e.Dominated || e.Invalid {
			continue
		}
		more := e.Value > cur.Value && e.Value > row.Unallocated
		if m.Sense == ilp.Minimize {
			more = e.Value < cur.Value && e.Value < row.Unallocated
		}
		if more && tw.fits(e.Config) && tw.limitsHold(row.Job, e.Config.Type, e.Config.GPUs) {
			return fmt.Sprintf("%v (value %.6g, started on %v value %.6g)", e.Config, e.Value, cur.Config, cur.Value)
		}
	}
	return ""
}

// TestFillNoStrandedGPUs: on random small fleets of 1–16-GPU nodes (one or
// two node sizes per type) over several rounds, with rigid, adaptive and
// strong-scaling jobs, quotas and reservations, no job that is not running
// waits with ReasonLostOptimisation while an entry the matrix evaluated
// fits the idle GPUs of its type by its shape (brute force over the nodes)
// within its quotas and the type's reservation, and no job the fill step
// started could take a more valuable entry of its row that fits the idle
// GPUs with its own given back (the grow step). Each plan passes probeCheck
// and is deterministic (probeRound); a filled plan's objective is within
// its bound.
func TestFillNoStrandedGPUs(t *testing.T) {
	cases := max(200, *probeCases) // -probe.cases runs more
	if testing.Short() {
		cases = 40
	}
	var rounds, filled, idle, gpus, grown int
	defer func() {
		t.Logf("%d rounds, %d jobs filled (%d checked for growth), %d of %d GPUs idle after the rounds", rounds, filled, grown, idle, gpus)
	}()
	seeds := make([]int, cases)
	for c := range seeds {
		seeds[c] = c
	}
	if cases < 1877 {
		// the seeds of -probe.cases 2000 whose filled jobs the grow step
		// grows (each failed "not grown" before it)
		seeds = append(seeds, 558, 1375, 1876)
	}
	for _, c := range seeds {
		rng := rand.New(rand.NewPCG(uint64(c), 2026))
		s, err := sia.New(&sia.Options{RoundTimeout: -1})
		require.NoError(t, err)
		nodes := probeFleet(rng)
		snap := sia.Snapshot{Now: probeT0, Nodes: nodes}
		next := 0
		for r := 0; r < 4; r++ {
			for k := 1 + rng.IntN(4); k > 0; k-- {
				j := probeJob(rng, fmt.Sprintf("j%d", next), nodes, snap.Now)
				j.NonPreemptible = false
				snap.Jobs = append(snap.Jobs, j)
				next++
			}
			snap.Reserved, snap.Quotas = nil, nil
			if rng.IntN(3) == 0 {
				probeLimits(rng, &snap)
			}
			if _, err := s.Round(t.Context(), snap); errors.Is(err, sia.ErrInfeasible) {
				snap.Reserved, snap.Quotas = nil, nil // pins beyond a reservation or quota
			}
			ok := t.Run(fmt.Sprintf("case%d/round%d", c, r), func(t *testing.T) {
				plan := probeRound(t, s, snap)
				rounds++
				filled += len(sia.PlanFilled(&plan))
				tw := newFillTwin(snap, &plan)
				idle += tw.idleGPUs()
				for _, n := range nodes {
					gpus += n.GPUs
				}
				for i, d := range plan.Decisions {
					if d.Action != sia.Queue || d.Reason != sia.ReasonLostOptimisation {
						continue
					}
					if how := tw.strands(i); how != "" {
						assert.Failf(t, "stranded", "job %s waits (%v) although %s fits the idle GPUs", d.Job, d.Reason, how)
					}
				}
				for _, id := range sia.PlanFilled(&plan) {
					i := slices.IndexFunc(plan.Decisions, func(d sia.Decision) bool { return d.Job == id })
					grown++
					if how := tw.grows(i); how != "" {
						assert.Failf(t, "not grown", "filled job %s could take %s", id, how)
					}
				}
				if len(sia.PlanFilled(&plan)) > 0 {
					assert.NotEqual(t, sia.StatusUnknown, plan.Status)
					if sia.PlanMatrix(&plan).Sense == ilp.Maximize {
						assert.LessOrEqual(t, plan.Objective, plan.Bound+1e-9*max(1, plan.Bound))
					} else {
						assert.GreaterOrEqual(t, plan.Objective, plan.Bound-1e-9*max(1, -plan.Bound))
					}
				}
			})
			if !ok {
				t.Logf("nodes %v", nodes)
				for _, j := range snap.Jobs {
					t.Logf("  job %s kind %v gpus %d min %d max %d types %v models %+v state %+v", j.ID, j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs, j.Types, j.Models, j.State)
				}
				t.Logf("  reserved %v quotas %+v", snap.Reserved, snap.Quotas)
				break
			}
			plan, err := s.Round(t.Context(), snap)
			require.NoError(t, err)
			snap.Advance(&plan, snap.Now.Add(time.Duration(10+rng.IntN(60))*time.Second))
			snap.Jobs = slices.DeleteFunc(snap.Jobs, func(sia.Job) bool { return rng.IntN(4) == 0 })
		}
	}
}
