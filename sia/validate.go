package sia

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Validate checks the snapshot against every documented rule with default
// options; Round, BuildMatrix and Place validate with their own options.
// Errors are *InputError values wrapping ErrInvalidInput.
func (s *Snapshot) Validate() error {
	o := (*Options)(nil).WithDefaults()
	_, err := validateSnapshot(s, &o)
	return err
}

// validateSnapshot checks the snapshot and returns the per-round cluster view.
func validateSnapshot(s *Snapshot, o *Options) (*cluster, error) {
	if s == nil {
		return nil, &InputError{Field: "Snapshot", Reason: "nil snapshot"}
	}
	nodes := make(map[string]*Node, len(s.Cluster.Nodes))
	for i := range s.Cluster.Nodes {
		n := &s.Cluster.Nodes[i]
		field := "Cluster.Nodes[" + strconv.Itoa(i) + "]"
		switch {
		case n.ID == "":
			return nil, &InputError{Type: n.Type, Field: field + ".ID", Reason: "empty node ID"}
		case nodes[n.ID] != nil:
			return nil, &InputError{Node: n.ID, Field: field + ".ID", Reason: "duplicate node ID"}
		case n.Type == "":
			return nil, &InputError{Node: n.ID, Field: field + ".Type", Reason: "empty GPU type"}
		case n.GPUs <= 0:
			return nil, &InputError{Node: n.ID, Type: n.Type, Field: field + ".GPUs", Reason: fmt.Sprintf("%d, want > 0", n.GPUs)}
		}
		nodes[n.ID] = n
	}
	cl, err := newCluster(s.Cluster, o.MaxGPUsPerJob)
	if err != nil {
		return nil, err
	}
	for _, t := range slices.Sorted(maps.Keys(s.Reserved)) {
		r := s.Reserved[t]
		if _, ok := cl.capacity[t]; !ok {
			return nil, &InputError{Type: t, Field: "Reserved", Reason: "unknown GPU type"}
		}
		if r < 0 || r > cl.capacity[t] {
			return nil, &InputError{Type: t, Field: "Reserved", Reason: fmt.Sprintf("%d, want 0..%d (the type's capacity)", r, cl.capacity[t])}
		}
	}
	if err := validateQuotas(s, cl); err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(s.Jobs))
	used := map[GPU]string{}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if err := validateJob(j, i, s, cl, nodes, used); err != nil {
			return nil, err
		}
		if ids[j.ID] {
			return nil, &InputError{Job: j.ID, Field: fmt.Sprintf("Jobs[%d].ID", i), Reason: "duplicate job ID"}
		}
		ids[j.ID] = true
	}
	return cl, nil
}

func validateJob(j *Job, i int, s *Snapshot, cl *cluster, nodes map[string]*Node, used map[GPU]string) error {
	bad := func(f, format string, args ...any) error {
		return &InputError{Job: j.ID, Field: fmt.Sprintf("Jobs[%d]", i) + f, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case j.ID == "":
		return bad(".ID", "empty job ID")
	case j.Kind < Adaptive || j.Kind > Rigid:
		return bad(".Kind", "unknown kind %d", int(j.Kind))
	case j.Models == nil:
		return bad(".Models", "nil (every job needs models, e.g. a *bootstrap.Tracker)")
	case j.MinGPUs < 0:
		return bad(".MinGPUs", "%d, want >= 0", j.MinGPUs)
	case j.MaxGPUs < 0:
		return bad(".MaxGPUs", "%d, want >= 0 (0 = no bound)", j.MaxGPUs)
	case j.MaxGPUs > 0 && j.MinGPUs > j.MaxGPUs:
		return bad(".MinGPUs", "%d exceeds MaxGPUs %d", j.MinGPUs, j.MaxGPUs)
	case j.Kind == Rigid && j.GPUs <= 0:
		return bad(".GPUs", "%d, a rigid job needs a fixed GPU count > 0", j.GPUs)
	case j.Kind != Rigid && j.GPUs != 0:
		return bad(".GPUs", "%d, only rigid jobs have a fixed GPU count (use MinGPUs/MaxGPUs)", j.GPUs)
	case !s.Now.IsZero() && !j.Submitted.IsZero() && j.Submitted.After(s.Now):
		return bad(".Submitted", "%v is after Snapshot.Now %v", j.Submitted, s.Now)
	}
	if j.ReplicaSize != nil && len(j.ReplicaSize) == 0 {
		return bad(".ReplicaSize", "empty map (nil means data parallel)")
	}
	for _, t := range slices.Sorted(maps.Keys(j.ReplicaSize)) {
		if p := j.ReplicaSize[t]; p < 1 {
			return &InputError{Job: j.ID, Type: t, Field: fmt.Sprintf("Jobs[%d]", i) + ".ReplicaSize", Reason: fmt.Sprintf("%d, want >= 1", p)}
		}
	}
	st := &j.State
	switch {
	case st.Restarts < 0:
		return bad(".State.Restarts", "%d, want >= 0", st.Restarts)
	case st.RestartCost < 0:
		return bad(".State.RestartCost", "%v, want >= 0", st.RestartCost)
	case st.PeakReplicas < 0:
		return bad(".State.PeakReplicas", "%d, want >= 0", st.PeakReplicas)
	}
	cur := st.Current
	if !cur.Running() {
		switch {
		case cur.GPUs < 0:
			return bad(".State.Current.GPUs", "%d, want >= 0", cur.GPUs)
		case cur.Type != "" || cur.Nodes != 0 || len(cur.Placement) != 0:
			return bad(".State.Current", "GPUs = 0 but Type, Nodes or Placement set")
		case st.Restoring:
			return bad(".State.Restoring", "set for a job that holds no GPUs")
		}
		return nil
	}
	field := fmt.Sprintf("Jobs[%d]", i)
	cap, ok := cl.capacity[cur.Type]
	switch {
	case !ok:
		return &InputError{Job: j.ID, Type: cur.Type, Field: field + ".State.Current.Type", Reason: "not a GPU type of the cluster"}
	case cur.Nodes < 1 || cur.Nodes > cur.GPUs:
		return bad(".State.Current.Nodes", "%d, want 1..GPUs (%d)", cur.Nodes, cur.GPUs)
	case cur.GPUs > cap:
		return bad(".State.Current.GPUs", "%d exceeds the capacity %d of type %q", cur.GPUs, cap, cur.Type)
	case j.Kind == Rigid && cur.GPUs != j.GPUs:
		return bad(".State.Current.GPUs", "%d, but the rigid job's count is %d", cur.GPUs, j.GPUs)
	case len(cur.Placement) != 0 && len(cur.Placement) != cur.GPUs:
		return bad(".State.Current.Placement", "%d GPUs listed for an allocation of %d", len(cur.Placement), cur.GPUs)
	}
	if j.ReplicaSize != nil {
		p, ok := j.ReplicaSize[cur.Type]
		if !ok || cur.GPUs%p != 0 {
			return &InputError{Job: j.ID, Type: cur.Type, Field: field + ".State.Current.GPUs",
				Reason: fmt.Sprintf("%d is not a multiple of the job's replica size on the type", cur.GPUs)}
		}
	}
	nodeSet := map[string]bool{}
	for k, g := range cur.Placement {
		n := nodes[g.Node]
		f := fmt.Sprintf("%s.State.Current.Placement[%d]", field, k)
		switch {
		case n == nil:
			return &InputError{Job: j.ID, Node: g.Node, Field: f, Reason: "unknown node"}
		case n.Type != cur.Type:
			return &InputError{Job: j.ID, Node: g.Node, Type: n.Type, Field: f, Reason: fmt.Sprintf("node of type %q, allocation of type %q", n.Type, cur.Type)}
		case g.Index < 0 || g.Index >= n.GPUs:
			return &InputError{Job: j.ID, Node: g.Node, Field: f, Reason: fmt.Sprintf("GPU index %d, node has %d GPUs", g.Index, n.GPUs)}
		}
		if other, dup := used[g]; dup {
			return &InputError{Job: j.ID, Node: g.Node, Field: f, Reason: fmt.Sprintf("GPU %d also held by job %q", g.Index, other)}
		}
		used[g] = j.ID
		nodeSet[g.Node] = true
	}
	if len(cur.Placement) != 0 && len(nodeSet) != cur.Nodes {
		return bad(".State.Current.Nodes", "%d, but the placement spans %d nodes", cur.Nodes, len(nodeSet))
	}
	return nil
}

func validateQuotas(s *Snapshot, cl *cluster) error {
	if len(s.Quotas) == 0 {
		return nil
	}
	ids := make(map[string]bool, len(s.Jobs))
	for i := range s.Jobs {
		ids[s.Jobs[i].ID] = true
	}
	for i, q := range s.Quotas {
		field := fmt.Sprintf("Quotas[%d]", i)
		if _, ok := cl.capacity[q.Type]; q.Type != "" && !ok {
			return &InputError{Type: q.Type, Field: field + ".Type", Reason: fmt.Sprintf("quota %q: unknown GPU type", q.Name)}
		}
		if q.Limit < 0 {
			return &InputError{Field: field + ".Limit", Reason: fmt.Sprintf("quota %q: %d, want >= 0", q.Name, q.Limit)}
		}
		seen := map[string]bool{}
		for _, id := range q.Jobs {
			if !ids[id] {
				return &InputError{Job: id, Field: field + ".Jobs", Reason: fmt.Sprintf("quota %q: no such job in the snapshot", q.Name)}
			}
			if seen[id] {
				return &InputError{Job: id, Field: field + ".Jobs", Reason: fmt.Sprintf("quota %q: job listed twice", q.Name)}
			}
			seen[id] = true
		}
	}
	return nil
}
