package siapolicy

import (
	"fmt"
	"sort"

	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

// placeArtifact turns a plan into simulator allocations with the published
// simulator's placer (placeRoundRobin) on each GPU type, ignoring the GPUs
// package sia chose. The engine charges a restart only when a job's per-node
// shape changes, so only the shapes matter.
func (p *Policy) placeArtifact(plan *sia.Plan) (map[string]sim.Alloc, error) {
	byType := map[string][]request{}
	for _, d := range plan.Decisions {
		st := p.jobs[d.Job]
		st.placement = nil
		if d.Allocation.Running() {
			byType[d.Allocation.Type] = append(byType[d.Allocation.Type], request{job: d.Job, gpus: d.Allocation.GPUs})
		}
	}
	nodes := map[string]int{}
	for _, g := range p.nodes {
		nodes[g.Type]++
	}
	out := map[string]sim.Alloc{}
	for _, t := range p.types {
		reqs := byType[t]
		if len(reqs) == 0 {
			continue
		}
		placed, err := placeRoundRobin(reqs, nodes[t], p.perNode[t])
		if err != nil {
			return nil, fmt.Errorf("siapolicy: placing %s: %w", t, err)
		}
		used := make([]int, nodes[t])
		for _, r := range reqs {
			ns := placed[r.job]
			sort.Ints(ns)
			gpus := make([]sia.GPU, len(ns))
			for i, k := range ns {
				gpus[i] = sia.GPU{Node: nodeID(t, k), Index: used[k]}
				used[k]++
			}
			p.jobs[r.job].placement = gpus
			out[r.job] = sim.Alloc{Type: t, Nodes: ns}
		}
	}
	return out, nil
}

// request is one job's GPU count on a type.
type request struct {
	job  string
	gpus int
}

// placeRoundRobin is the published simulator's placer for one GPU type
// (every node starts empty; previous placements are ignored): jobs in
// descending order of GPU count (ties in the given order) each take
// ⌊g/R⌋ fully free nodes, scanning round-robin from a cursor, then the rest
// of their GPUs from any nodes with free GPUs, continuing the scan; the
// cursor moves to the node after the last one visited. A partial allocation
// can therefore be split over nodes (power-of-two single-node jobs packed in
// this order do not split). It returns one node index per GPU.
func placeRoundRobin(reqs []request, nodes, perNode int) (map[string][]int, error) {
	total := 0
	for _, r := range reqs {
		if r.gpus < 1 {
			return nil, fmt.Errorf("job %q: %d GPUs", r.job, r.gpus)
		}
		total += r.gpus
	}
	if nodes < 1 || perNode < 1 || total > nodes*perNode {
		return nil, fmt.Errorf("%d GPUs requested, capacity %d×%d", total, nodes, perNode)
	}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return reqs[order[a]].gpus > reqs[order[b]].gpus })
	free := make([]int, nodes)
	for k := range free {
		free[k] = perNode
	}
	out := make(map[string][]int, len(reqs))
	cur := 0
	for _, i := range order {
		r := reqs[i]
		need := r.gpus
		var got []int
		k := cur
		last := cur
		for whole, scanned := need/perNode, 0; whole > 0 && scanned < nodes; scanned++ {
			if free[k] == perNode {
				for g := 0; g < perNode; g++ {
					got = append(got, k)
				}
				free[k] = 0
				need -= perNode
				whole--
				last = k
			}
			k = (k + 1) % nodes
		}
		for scanned := 0; need > 0 && scanned < nodes; scanned++ {
			if take := min(free[k], need); take > 0 {
				for g := 0; g < take; g++ {
					got = append(got, k)
				}
				free[k] -= take
				need -= take
			}
			last = k
			if need > 0 {
				k = (k + 1) % nodes
			}
		}
		if need > 0 {
			return nil, fmt.Errorf("job %q: %d of %d GPUs left unplaced", r.job, need, r.gpus)
		}
		cur = (last + 1) % nodes
		out[r.job] = got
	}
	return out, nil
}
