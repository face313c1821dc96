package sia

import (
	"context"
	"fmt"
	"math"
)

// The round's steps one by one, with their input checks, for the tests that
// run them separately (Round composes the unexported steps directly).

// newMatrix validates the snapshot and builds its goodput matrix
// (buildMatrix).
func newMatrix(snap *Snapshot, opts *Options) (*goodputMatrix, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	o := opts.WithDefaults()
	cl, err := validateSnapshot(snap, &o, false)
	if err != nil {
		return nil, err
	}
	return buildMatrix(context.Background(), snap, &o, cl, false)
}

// solveMatrix checks the options and matrix and solves it (solve).
func solveMatrix(ctx context.Context, m *goodputMatrix, opts *Options) (solution, error) {
	if err := opts.Validate(); err != nil {
		return solution{}, err
	}
	o := opts.WithDefaults()
	if m == nil {
		return solution{}, &InputError{Field: "Matrix", Reason: "nil matrix"}
	}
	return solve(ctx, m, &o)
}

// place places the solution's allocations onto the snapshot's nodes
// (package placement, paper §3.4): jobs that keep type and count keep their
// GPUs, multi-node jobs take whole nodes, single-node jobs go best-fit, and on
// fragmentation the fewest and smallest jobs are evicted and re-placed. Every
// job is placed in the pool and on the node count of its entry (the shape
// its goodput was predicted for). Jobs pinned in the matrix always keep
// their current GPUs. A running job whose new allocation cannot be placed
// keeps its current allocation and GPUs when its current entry is in its row
// (not Dropped), its GPUs are still free and keeping them breaks no
// reservation or quota (layout.Kept); any other job that cannot be placed is
// listed in Unplaced and gets no GPUs. Every running job of the snapshot
// must list its GPUs (JobState.Current.Placement).
func placeSolution(snap *Snapshot, m *goodputMatrix, sol solution) (layout, error) {
	if snap == nil || m == nil {
		return layout{}, &InputError{Field: "Place", Reason: "nil snapshot or matrix"}
	}
	if len(m.Rows) != len(snap.Jobs) || len(sol.Choice) != len(m.Rows) {
		return layout{}, &InputError{Field: "Place", Reason: fmt.Sprintf("snapshot has %d jobs, matrix %d rows, solution %d choices", len(snap.Jobs), len(m.Rows), len(sol.Choice))}
	}
	for i, c := range sol.Choice {
		if c < -1 || c >= len(m.Rows[i].Entries) {
			return layout{}, &InputError{Job: m.Rows[i].Job, Field: "Solution.Choice", Reason: fmt.Sprintf("entry %d out of range", c)}
		}
		if id := snap.Jobs[i].ID; m.Rows[i].Job != id {
			return layout{}, &InputError{Job: id, Field: fmt.Sprintf("Matrix.Rows[%d].Job", i), Reason: fmt.Sprintf("row of job %q, but the snapshot's job %d is %q", m.Rows[i].Job, i, id)}
		}
	}
	for i := range snap.Jobs {
		// Placement must know the GPUs running jobs hold, or it would give
		// them to others.
		if cur := snap.Jobs[i].State.Current; cur.Running() && len(cur.Placement) != cur.GPUs {
			return layout{}, &InputError{Job: snap.Jobs[i].ID, Field: fmt.Sprintf("Jobs[%d].State.Current.Placement", i),
				Reason: fmt.Sprintf("%d GPUs listed for a running allocation of %d", len(cur.Placement), cur.GPUs)}
		}
	}
	return place(context.Background(), snap, m, sol)
}

// AssemblePlan builds the plan of a round from its steps: the snapshot, the
// matrix it was solved on, the solution and the layout that placed it (the
// last step of Round, for a caller that runs BuildMatrix, Solve and Place
// itself, possibly editing in between). It checks that the pieces fit
// together: one row, choice and layout element per job, chosen entries in
// range, each placed job holding exactly its entry's GPU count of its
// entry's type on GPUs of the snapshot's nodes, and no GPU given twice.
// Errors wrap ErrInvalidInput.
func assemblePlan(snap *Snapshot, m *goodputMatrix, sol solution, lay layout) (Plan, error) {
	if snap == nil || m == nil {
		return Plan{}, &InputError{Field: "AssemblePlan", Reason: "nil snapshot or matrix"}
	}
	n := len(snap.Jobs)
	if len(m.Rows) != n || len(sol.Choice) != n || len(lay.GPUs) != n {
		return Plan{}, &InputError{Field: "AssemblePlan", Reason: fmt.Sprintf("snapshot has %d jobs, matrix %d rows, solution %d choices, layout %d jobs", n, len(m.Rows), len(sol.Choice), len(lay.GPUs))}
	}
	o := (*Options)(nil).WithDefaults()
	if _, err := validateSnapshot(snap, &o, true); err != nil {
		return Plan{}, err
	}
	if err := checkLayout(snap, m, sol, lay); err != nil {
		return Plan{}, err
	}
	if err := checkSnapshotRules(snap, m, sol, lay); err != nil {
		return Plan{}, err
	}
	var plan Plan
	assemble(&plan, snap, m, sol, lay, &o)
	if plan.Status == StatusOptimal && !sameObjective(m, sol, lay) {
		// the choice was edited after the solve: not the proven optimum
		plan.Status = StatusFeasible
	}
	return plan, nil
}

// checkSnapshotRules verifies that the placed allocations keep the
// snapshot's own constraints, which a matrix built from another snapshot (or
// an edited solution) need not: the matrix rows are the snapshot's jobs,
// each type's allocations fit its capacity less Reserved, every quota holds,
// and a pinned job keeps its current allocation and GPUs.
func checkSnapshotRules(snap *Snapshot, m *goodputMatrix, sol solution, lay layout) error {
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		capacity[n.Type] += n.GPUs
	}
	used := map[string]int{}
	held := make(map[string]Allocation, len(snap.Jobs))
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if m.Rows[i].Job != j.ID {
			return &InputError{Job: j.ID, Field: fmt.Sprintf("Matrix.Rows[%d].Job", i), Reason: fmt.Sprintf("row of job %q, but the snapshot's job %d is %q", m.Rows[i].Job, i, j.ID)}
		}
		var a Allocation
		if c := lay.choice(i, sol); c >= 0 && lay.GPUs[i] != nil {
			e := &m.Rows[i].Entries[c]
			a = Allocation{Type: e.Config.Type, GPUs: e.Config.GPUs, Placement: lay.GPUs[i]}
			used[a.Type] += a.GPUs // each at most the type's capacity: checkLayout
		}
		held[j.ID] = a
		if cur := j.State.Current; pinned(j, snap.Now) && (a.Type != cur.Type || a.GPUs != cur.GPUs || !sameGPUs(a.Placement, cur.Placement)) {
			return &InputError{Job: j.ID, Type: cur.Type, Field: "Layout.GPUs", Reason: "the job is pinned (Restoring or NonPreemptible), but the layout does not keep its current GPUs"}
		}
	}
	for t, u := range used {
		if u > capacity[t]-snap.Reserved[t] {
			return &InputError{Type: t, Field: "Solution.Choice", Reason: fmt.Sprintf("%d GPUs allocated, the type offers %d (capacity less Reserved)", u, capacity[t]-snap.Reserved[t])}
		}
	}
	for qi, q := range snap.Quotas {
		u := 0
		for _, id := range q.Jobs {
			if a := held[id]; a.GPUs > 0 && (q.Type == "" || q.Type == a.Type) {
				u += a.GPUs
			}
		}
		if u > q.Limit {
			return &InputError{Type: q.Type, Field: fmt.Sprintf("Quotas[%d]", qi), Reason: fmt.Sprintf("quota %q: %d GPUs allocated, limit %d", q.Name, u, q.Limit)}
		}
	}
	return nil
}

// sameObjective reports whether the placed choices are worth the
// solution's Objective (up to rounding): false when a caller edited the
// choice after the solve, or placement changed it.
func sameObjective(m *goodputMatrix, sol solution, lay layout) bool {
	obj := 0.0
	for i := range m.Rows {
		if c := lay.choice(i, sol); c >= 0 {
			obj += m.Rows[i].Entries[c].Value
		} else {
			obj += m.Rows[i].Unallocated
		}
	}
	return math.Abs(obj-sol.Objective) <= 1e-9*math.Max(1, math.Abs(obj))
}

// checkLayout verifies that a layout places the solution on real, distinct
// GPUs of the right type and count.
func checkLayout(snap *Snapshot, m *goodputMatrix, sol solution, lay layout) error {
	nodes := make(map[string]Node, len(snap.Nodes))
	for _, nd := range snap.Nodes {
		nodes[nd.ID] = nd
	}
	used := map[GPU]string{}
	if lay.Choice != nil && len(lay.Choice) != len(sol.Choice) {
		return &InputError{Field: "Layout.Choice", Reason: fmt.Sprintf("%d choices for %d jobs", len(lay.Choice), len(sol.Choice))}
	}
	for i, c := range sol.Choice {
		row := &m.Rows[i]
		if c < -1 || c >= len(row.Entries) {
			return &InputError{Job: row.Job, Field: "Solution.Choice", Reason: fmt.Sprintf("entry %d out of range", c)}
		}
		if c = lay.choice(i, sol); c < -1 || c >= len(row.Entries) {
			return &InputError{Job: row.Job, Field: "Layout.Choice", Reason: fmt.Sprintf("entry %d out of range", c)}
		}
		gs := lay.GPUs[i]
		if c < 0 || gs == nil {
			if c < 0 && gs != nil {
				return &InputError{Job: row.Job, Field: "Layout.GPUs", Reason: "GPUs for a job the solution leaves without"}
			}
			continue
		}
		e := &row.Entries[c]
		if len(gs) != e.Config.GPUs {
			return &InputError{Job: row.Job, Field: "Layout.GPUs", Reason: fmt.Sprintf("%d GPUs, the chosen entry has %d", len(gs), e.Config.GPUs)}
		}
		for _, g := range gs {
			nd, ok := nodes[g.Node]
			switch {
			case !ok:
				return &InputError{Job: row.Job, Node: g.Node, Field: "Layout.GPUs", Reason: "unknown node"}
			case nd.Type != e.Config.Type:
				return &InputError{Job: row.Job, Node: g.Node, Field: "Layout.GPUs", Reason: fmt.Sprintf("node of type %q, entry of type %q", nd.Type, e.Config.Type)}
			case g.Index < 0 || g.Index >= nd.GPUs:
				return &InputError{Job: row.Job, Node: g.Node, Field: "Layout.GPUs", Reason: fmt.Sprintf("GPU index %d, node has %d GPUs", g.Index, nd.GPUs)}
			}
			if other, dup := used[g]; dup {
				return &InputError{Job: row.Job, Node: g.Node, Field: "Layout.GPUs", Reason: fmt.Sprintf("GPU %d also given to job %q", g.Index, other)}
			}
			used[g] = row.Job
		}
	}
	return nil
}
