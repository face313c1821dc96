package sim

import "context"

// Fixed is a policy that gives every active job the same fixed allocation:
// GPUs GPUs of the cluster's first type, packed onto whole nodes first. It is
// what the isolated runs of finish-time fairness use.
type Fixed struct {
	// GPUs per job.
	GPUs int
}

// Name implements Policy.
func (f Fixed) Name() string { return "fixed" }

// Schedule implements Policy: jobs in order get GPUs while they fit.
func (f Fixed) Schedule(_ context.Context, s *State) (map[string]Alloc, error) {
	out := map[string]Alloc{}
	if len(s.Cluster.Groups) == 0 || f.GPUs <= 0 {
		return out, nil
	}
	g := s.Cluster.Groups[0]
	free := make([]int, g.Nodes)
	for i := range free {
		free[i] = g.GPUsPerNode
	}
	for _, j := range s.Jobs {
		need := f.GPUs
		var nodes []int
		for n := 0; n < g.Nodes && need > 0; n++ {
			k := min(free[n], need)
			for i := 0; i < k; i++ {
				nodes = append(nodes, n)
			}
			free[n] -= k
			need -= k
		}
		if need > 0 {
			break
		}
		out[j.Spec.Name] = Alloc{Type: g.Type, Nodes: nodes}
	}
	return out, nil
}
