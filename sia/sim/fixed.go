package sim

import "context"

// Fixed is a policy that gives every active job the same fixed allocation:
// GPUs GPUs of the cluster's first type, packed onto whole nodes first. It is
// what the isolated runs of finish-time fairness use. A hybrid-parallel job
// gets GPUs rounded down to whole replicas (none on a type without stages).
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
		need, rep := f.GPUs, 1
		if j.App.Hybrid() {
			var ok bool
			if rep, ok = j.App.ReplicaGPUs(g.Type); !ok {
				continue
			}
			if need -= need % rep; need == 0 {
				continue
			}
		}
		var nodes []int
		for n := 0; n < g.Nodes && need > 0; n++ {
			k := min(free[n], need)
			if rep <= g.GPUsPerNode {
				k -= k % rep // whole replicas on every node
			}
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

// SchedulesHybrid implements HybridScheduler: Fixed allocates hybrid-parallel
// jobs in whole replicas.
func (Fixed) SchedulesHybrid() bool { return true }
