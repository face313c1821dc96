package sia

import (
	"context"
	"fmt"
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

// placeSolution checks that the solution fits the snapshot and matrix and
// places it (place).
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
	}
	for i := range snap.Jobs {
		// Placement must know the GPUs running jobs hold, or it would give
		// them to others.
		if cur := snap.Jobs[i].State.Current; cur.Running() && len(cur.Placement) != cur.GPUs {
			return layout{}, &InputError{Job: snap.Jobs[i].ID, Field: fmt.Sprintf("Jobs[%d].State.Current.Placement", i),
				Reason: fmt.Sprintf("%d GPUs listed for a running allocation of %d", len(cur.Placement), cur.GPUs)}
		}
	}
	return place(snap, m, sol)
}

// assemblePlan builds the plan of a round from its steps: the snapshot, the
// matrix it was solved on, the solution and the layout that placed it (the
// last step of Round, for a caller that runs newMatrix, solveMatrix and placeSolution
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
	if err := checkLayout(snap, m, sol, lay); err != nil {
		return Plan{}, err
	}
	var plan Plan
	o := (*Options)(nil).WithDefaults()
	assemble(&plan, snap, m, sol, lay, &o)
	return plan, nil
}

// checkLayout verifies that a layout places the solution on real, distinct
// GPUs of the right type and count.
func checkLayout(snap *Snapshot, m *goodputMatrix, sol solution, lay layout) error {
	nodes := make(map[string]Node, len(snap.Nodes))
	for _, nd := range snap.Nodes {
		nodes[nd.ID] = nd
	}
	used := map[GPU]string{}
	for i, c := range sol.Choice {
		row := &m.Rows[i]
		if c < -1 || c >= len(row.Entries) {
			return &InputError{Job: row.Job, Field: "Solution.Choice", Reason: fmt.Sprintf("entry %d out of range", c)}
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
