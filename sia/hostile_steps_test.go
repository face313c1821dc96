package sia

// Hostile inputs to the piecemeal steps (BuildMatrix, Solve, Place,
// AssemblePlan) that a host running them itself could pass: pieces that do
// not fit together are errors, never a panic or a plan that breaks the
// snapshot's constraints, and an edited choice is never called optimal
// unless its objective is the solver's.

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func hostileSteps(t *testing.T) (Snapshot, *goodputMatrix, solution, layout) {
	t.Helper()
	snap := hostileSnap()
	m, err := newMatrix(&snap, nil)
	require.NoError(t, err)
	sol, err := solveMatrix(context.Background(), m, nil)
	require.NoError(t, err)
	lay, err := placeSolution(&snap, m, sol)
	require.NoError(t, err)
	return snap, m, sol, lay
}

func TestHostileAssemblePlanRejected(t *testing.T) {
	cases := map[string]func(s *Snapshot, m *goodputMatrix, sol *solution, lay *layout){
		"layout choice too short": func(_ *Snapshot, _ *goodputMatrix, _ *solution, lay *layout) { lay.Choice = []int{0} },
		"layout choice out of range": func(_ *Snapshot, m *goodputMatrix, _ *solution, lay *layout) {
			lay.Choice = []int{0, len(m.Rows[1].Entries), 0}
		},
		"snapshot of other jobs": func(s *Snapshot, _ *goodputMatrix, _ *solution, _ *layout) {
			s.Jobs = append([]Job(nil), s.Jobs...)
			s.Jobs[0].ID = "other"
		},
		"quota the solution breaks": func(s *Snapshot, _ *goodputMatrix, _ *solution, _ *layout) {
			s.Quotas = []Quota{{Name: "zero", Jobs: []string{"j0", "j1", "j2"}, Limit: 0}}
		},
		"reservation the solution breaks": func(s *Snapshot, _ *goodputMatrix, _ *solution, _ *layout) {
			s.Reserved = map[string]int{"a100": 16}
		},
		"pinned job moved": func(s *Snapshot, _ *goodputMatrix, sol *solution, lay *layout) {
			// j1 pinned in the snapshot, but the layout gives it other GPUs
			s.Jobs = append([]Job(nil), s.Jobs...)
			s.Jobs[1].NonPreemptible = true
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			snap, m, sol, lay := hostileSteps(t)
			edit(&snap, m, &sol, &lay)
			var err error
			require.NotPanics(t, func() { _, err = assemblePlan(&snap, m, sol, lay) })
			require.ErrorIs(t, err, ErrInvalidInput)
		})
	}
}

// TestHostileAssemblePlanEditedChoice: a host that changes the solver's
// choice gets a plan that does not claim the optimum.
func TestHostileAssemblePlanEditedChoice(t *testing.T) {
	snap, m, sol, _ := hostileSteps(t)
	require.Equal(t, StatusOptimal, sol.Status)
	edited := sol
	edited.Choice = append([]int(nil), sol.Choice...)
	edited.Choice[0] = -1 // j0 waits
	lay, err := placeSolution(&snap, m, edited)
	require.NoError(t, err)
	p, err := assemblePlan(&snap, m, edited, lay)
	require.NoError(t, err)
	assert.Equal(t, Queue, p.Decisions[0].Action)
	assert.NotEqual(t, StatusOptimal, p.Status, "an edited, worse choice called optimal")
	// The unedited pieces assemble as Round does.
	lay, err = placeSolution(&snap, m, sol)
	require.NoError(t, err)
	p, err = assemblePlan(&snap, m, sol, lay)
	require.NoError(t, err)
	assert.Equal(t, StatusOptimal, p.Status)
}

func TestHostilePlaceSteps(t *testing.T) {
	snap, m, sol, _ := hostileSteps(t)
	// a snapshot whose jobs are not the matrix rows
	other := snap
	other.Jobs = append([]Job(nil), snap.Jobs...)
	other.Jobs[2].ID = "x"
	_, err := placeSolution(&other, m, sol)
	require.ErrorIs(t, err, ErrInvalidInput)
	// a choice of the largest entry for every job (more than the cluster)
	big := sol
	big.Choice = make([]int, len(m.Rows))
	for i := range m.Rows {
		best := -1
		for k, e := range m.Rows[i].Entries {
			if best < 0 || e.Config.GPUs > m.Rows[i].Entries[best].Config.GPUs {
				best = k
			}
		}
		big.Choice[i] = best
	}
	var lay layout
	require.NotPanics(t, func() { lay, err = placeSolution(&snap, m, big) })
	if err == nil {
		p, err := assemblePlan(&snap, m, big, lay)
		if err == nil {
			checkPlan(t, &snap, &p)
		}
	}
	// an empty Solution
	_, err = placeSolution(&snap, m, solution{})
	require.ErrorIs(t, err, ErrInvalidInput)
	_, err = assemblePlan(&snap, m, solution{}, layout{})
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestHostileMatrixEdit: a MatrixEdit may change numbers only; one that
// changes the structure the solver and placement rely on (configurations,
// charges, pins, the current entry, job IDs) fails the round instead of
// producing a plan that resizes a pinned job, uses another type or
// over-commits a pool.
func TestHostileMatrixEdit(t *testing.T) {
	for name, edit := range map[string]func(m *goodputMatrix){
		"unpin":         func(m *goodputMatrix) { m.Rows[1].Pin = -1 },
		"current moved": func(m *goodputMatrix) { m.Rows[1].Current = (m.Rows[1].Current + 1) % len(m.Rows[1].Entries) },
		"config GPUs":   func(m *goodputMatrix) { m.Rows[0].Entries[0].Config.GPUs = 1000 },
		"config type":   func(m *goodputMatrix) { m.Rows[0].Entries[0].Config.Type = "h100" },
		"charge zero":   func(m *goodputMatrix) { m.Rows[2].Entries[0].Charge = -1 },
		"replicas":      func(m *goodputMatrix) { m.Rows[0].Entries[0].Replicas = 0 },
		"job renamed":   func(m *goodputMatrix) { m.Rows[0].Job = "other" },
		"current flag":  func(m *goodputMatrix) { m.Rows[0].Entries[0].Current = true },
	} {
		t.Run(name, func(t *testing.T) {
			snap := hostileSnap()
			snap.Jobs[1].NonPreemptible = true
			base, err := New(nil)
			require.NoError(t, err)
			s := base.withMatrixEdit(func(_ *Snapshot, m *goodputMatrix) (editKind, error) {
				edit(m)
				return editedValue, nil
			})
			p, err := s.Round(context.Background(), snap)
			if err == nil {
				checkPlan(t, &snap, &p)
				t.Fatalf("structural edit accepted: %+v", p.Decisions)
			}
			require.ErrorIs(t, err, ErrInvalidInput)
		})
	}
	// Editing numbers is what the seam is for.
	base, err := New(nil)
	require.NoError(t, err)
	s := base.withMatrixEdit(func(_ *Snapshot, m *goodputMatrix) (editKind, error) {
		for i := range m.Rows {
			for k := range m.Rows[i].Entries {
				m.Rows[i].Entries[k].Normalized *= 1.1
			}
		}
		return editedNormalized, nil
	})
	snap := hostileSnap()
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &p)
}

// TestHostileSolveMatrix: Solve on a matrix a caller changed by hand is an
// error or a solution that keeps the matrix's rows, never a panic.
func TestHostileSolveMatrix(t *testing.T) {
	for name, edit := range map[string]func(m *goodputMatrix){
		"pin out of range":     func(m *goodputMatrix) { m.Rows[1].Pin = 99 },
		"pin below -1":         func(m *goodputMatrix) { m.Rows[1].Pin = -7 },
		"current out of range": func(m *goodputMatrix) { m.Rows[1].Current = 99 },
		"value NaN":            func(m *goodputMatrix) { m.Rows[0].Entries[0].Value = math.NaN() },
		"unallocated Inf":      func(m *goodputMatrix) { m.Rows[0].Unallocated = math.Inf(1) },
		"charge negative":      func(m *goodputMatrix) { m.Rows[2].Entries[0].Charge = -3 },
		"config GPUs zero":     func(m *goodputMatrix) { m.Rows[0].Entries[0].Config.GPUs = 0 },
		"unknown type":         func(m *goodputMatrix) { m.Rows[0].Entries[0].Config.Type = "zz" },
		"no rows":              func(m *goodputMatrix) { m.Rows = nil },
		"entries nil":          func(m *goodputMatrix) { m.Rows[0].Entries = nil },
	} {
		t.Run(name, func(t *testing.T) {
			snap := hostileSnap()
			m, err := newMatrix(&snap, nil)
			require.NoError(t, err)
			edit(m)
			var sol solution
			require.NotPanics(t, func() { sol, err = solveMatrix(context.Background(), m, nil) })
			if err != nil {
				return
			}
			require.Len(t, sol.Choice, len(m.Rows))
			for i, c := range sol.Choice {
				require.True(t, c >= -1 && c < len(m.Rows[i].Entries))
			}
			require.NotPanics(t, func() { _, err = placeSolution(&snap, m, sol) })
		})
	}
}
