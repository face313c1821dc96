package placement_test

// Probes of issue 10's node shapes at the placement step, as package sia
// uses it: configurations of package configset (chain sizes on one node,
// whole nodes, and rigid counts shaped as whole nodes plus a remainder)
// whose charges (configset.Set.Charge) fit their pool are always placed,
// each with the node count and per-node split it was evaluated for; and
// whenever the requests of a small pool can be placed around pinned jobs
// (brute force), Place places them all.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/placement"
)

// probeConfigs draws configurations of one pool (r GPUs × n nodes) whose
// charges fit its capacity: chain sizes, whole nodes and rigid counts.
func probeConfigs(rng *rand.Rand, set *configset.Set, t string, r, n int) []configset.Config {
	cfgs := set.ByType(t)
	var out []configset.Config
	left := r * n
	for tries := 0; tries < 20 && left > 0; tries++ {
		var c configset.Config
		if rng.IntN(3) == 0 {
			fx := set.Fixed(t, 1+rng.IntN(r*n))
			if len(fx) == 0 {
				continue
			}
			c = fx[0]
		} else {
			c = cfgs[rng.IntN(len(cfgs))]
		}
		if ch := set.Charge(c); ch <= left {
			out = append(out, c)
			left -= ch
		}
	}
	return out
}

// probeShapeOK asserts that a placement has c's shape: c.Nodes distinct
// nodes, whole nodes plus at most one remainder (placement.Shape).
func probeShapeOK(t *testing.T, job string, c configset.Config, r int, gs []placement.GPU) {
	t.Helper()
	require.Len(t, gs, c.GPUs, job)
	per := map[string]int{}
	for _, g := range gs {
		per[g.Node]++
	}
	var got []int
	for _, k := range per {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Reverse(got)
	assert.Equal(t, c.Nodes, len(got), "job %s (%v): placed on %v", job, c, got)
	assert.Equal(t, placement.Shape(c.GPUs, r), got, "job %s (%v): split", job, c)
}

// probePool returns n nodes n0, n1, … of type "g" with r GPUs each.
func probePool(r, n int) []placement.Node {
	var nodes []placement.Node
	for k := 0; k < n; k++ {
		nodes = append(nodes, placement.Node{ID: fmt.Sprintf("n%d", k), Type: "g", GPUs: r})
	}
	return nodes
}

// TestProbePlaceChargesFit: on one pool of r = 1..16 GPUs per node and 1–4
// nodes, random multisets of configurations whose charges fit are all
// placed, with their evaluated shapes, from scratch and again after half of
// them changed (the others keep their GPUs, which placement may move).
func TestProbePlaceChargesFit(t *testing.T) {
	cases := 0
	for r := 1; r <= 16; r++ {
		for n := 1; n <= 4; n++ {
			set, err := configset.New([]configset.NodeGroup{{Type: "g", GPUsPerNode: r, Nodes: n}}, nil)
			require.NoError(t, err)
			nodes := probePool(r, n)
			for seed := uint64(0); seed < 30; seed++ {
				cases++
				rng := rand.New(rand.NewPCG(seed, uint64(r*100+n)))
				cfgs := probeConfigs(rng, set, "g", r, n)
				reqs := make([]placement.Request, len(cfgs))
				for i, c := range cfgs {
					reqs[i] = placement.Request{Job: fmt.Sprintf("j%d", i), Type: "g", GPUs: c.GPUs, Nodes: c.Nodes}
				}
				res, err := placement.Place(nodes, reqs)
				require.NoError(t, err)
				require.Empty(t, res.Unplaced, "r=%d n=%d %v", r, n, cfgs)
				for i, c := range cfgs {
					probeShapeOK(t, reqs[i].Job, c, r, res.Placements[reqs[i].Job])
				}
				// next round: half the jobs change configuration
				next := probeConfigs(rng, set, "g", r, n)
				var reqs2 []placement.Request
				left := r * n
				for i, c := range cfgs {
					if rng.IntN(2) == 0 && set.Charge(c) <= left {
						reqs2 = append(reqs2, placement.Request{Job: reqs[i].Job, Type: "g", GPUs: c.GPUs, Nodes: c.Nodes, Current: res.Placements[reqs[i].Job]})
						left -= set.Charge(c)
					}
				}
				shape := map[string]configset.Config{}
				for _, q := range reqs2 {
					shape[q.Job] = configset.Config{Type: "g", Nodes: q.Nodes, GPUs: q.GPUs}
				}
				for i, c := range next {
					if set.Charge(c) <= left {
						id := fmt.Sprintf("k%d", i)
						reqs2 = append(reqs2, placement.Request{Job: id, Type: "g", GPUs: c.GPUs, Nodes: c.Nodes})
						shape[id] = c
						left -= set.Charge(c)
					}
				}
				res2, err := placement.Place(nodes, reqs2)
				require.NoError(t, err)
				require.Empty(t, res2.Unplaced, "r=%d n=%d round 2", r, n)
				for _, q := range reqs2 {
					probeShapeOK(t, q.Job, shape[q.Job], r, res2.Placements[q.Job])
				}
			}
		}
	}
	t.Logf("%d pools", cases)
}

// probeFits is the brute-force twin: can every request (by its shape,
// placement.Shape over distinct nodes) be placed on the free GPUs free
// (per node)?
func probeFits(free []int, shapes [][]int) bool {
	if len(shapes) == 0 {
		return true
	}
	sh := shapes[0]
	var rec func(k int, used []bool) bool
	rec = func(k int, used []bool) bool {
		if k == len(sh) {
			return probeFits(free, shapes[1:])
		}
		for n := range free {
			if used[n] || free[n] < sh[k] {
				continue
			}
			free[n] -= sh[k]
			used[n] = true
			ok := rec(k+1, used)
			free[n] += sh[k]
			used[n] = false
			if ok {
				return true
			}
		}
		return false
	}
	return rec(0, make([]bool, len(free)))
}

// TestProbePlacePinnedBruteForce: on small pools (r = 1..8, 1–3 nodes) with
// pinned jobs on random GPUs, whenever the brute force finds room for every
// other request by its shape, Place places them all (and never moves a
// pinned job).
func TestProbePlacePinnedBruteForce(t *testing.T) {
	cases, placeable := 0, 0
	for r := 1; r <= 8; r++ {
		for n := 1; n <= 3; n++ {
			nodes := probePool(r, n)
			for seed := uint64(0); seed < 60; seed++ {
				cases++
				rng := rand.New(rand.NewPCG(seed, uint64(r*10+n)))
				free := make([]int, n)
				var reqs []placement.Request
				taken := map[placement.GPU]bool{}
				for p := 0; p < 1+rng.IntN(3); p++ { // pinned single-node jobs
					node := rng.IntN(n)
					var gs []placement.GPU
					for i := 0; i < r; i++ {
						g := placement.GPU{Node: nodes[node].ID, Index: i}
						if !taken[g] && rng.IntN(3) == 0 {
							gs = append(gs, g)
							taken[g] = true
						}
					}
					if len(gs) > 0 {
						reqs = append(reqs, placement.Request{Job: fmt.Sprintf("p%d", p), Type: "g", GPUs: len(gs), Current: gs, Pinned: true})
					}
				}
				for k := range free {
					free[k] = r
				}
				for g := range taken {
					free[g.Node[1]-'0']--
				}
				var shapes [][]int
				left := r*n - len(taken)
				for q := 0; q < 1+rng.IntN(4) && left > 0; q++ {
					g := 1 + rng.IntN(left)
					reqs = append(reqs, placement.Request{Job: fmt.Sprintf("q%d", q), Type: "g", GPUs: g})
					shapes = append(shapes, placement.Shape(g, r))
					left -= g
				}
				slices.SortFunc(shapes, func(a, b []int) int { return b[0] - a[0] })
				if !probeFits(slices.Clone(free), shapes) {
					continue
				}
				placeable++
				res, err := placement.Place(nodes, reqs)
				require.NoError(t, err)
				assert.Empty(t, res.Unplaced, "r=%d n=%d free %v shapes %v", r, n, free, shapes)
				for _, q := range reqs {
					if q.Pinned {
						assert.ElementsMatch(t, q.Current, res.Placements[q.Job], "pinned %s moved", q.Job)
					} else if gs, ok := res.Placements[q.Job]; ok {
						per := map[string]int{}
						for _, g := range gs {
							per[g.Node]++
						}
						assert.Equal(t, len(placement.Shape(q.GPUs, r)), len(per), "job %s: node count", q.Job)
					}
				}
			}
		}
	}
	t.Logf("%d pools, %d placeable by brute force", cases, placeable)
}
