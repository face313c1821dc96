package sia

import (
	"fmt"
	"math"
	"slices"

	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/ilp"
)

// editKind says which numbers of a goodput matrix a caller changed, so that
// refinish knows what to recompute.
type editKind int

const (
	// EditedNormalized: entries' Normalized (G) or Restart were changed (for
	// example a stickiness bonus on the current configuration); every Value
	// is recomputed as (Restart·Normalized)^P.
	editedNormalized editKind = iota
	// EditedValue: entries' Value were changed directly; they are kept.
	editedValue
)

// refinish re-applies a variant's finishing steps to a matrix whose entries a
// caller edited, so that it is again what newMatrix would have produced for
// those numbers: each Value is recomputed (EditedNormalized) or kept
// (EditedValue), then clipped at artifactClip and rounded to artifactGrid when
// the variant does (Knobs.Clip, Knobs.Round; also each row's Unallocated);
// Dropped is set exactly for the non-finite values (never on a pinned entry);
// and Dominated is recomputed from scratch, so stale flags are cleared. opts
// must be the options the matrix was built with (nil = the defaults). The
// matrix is changed in place; on error it is left unchanged. Errors wrap
// ErrInvalidInput: nil matrix, invalid options, options that do not match
// the matrix (P, rounding), entry indices out of range, NaN numbers.
func refinish(m *goodputMatrix, opts *Options, edited editKind) error {
	if m == nil {
		return &InputError{Field: "Matrix", Reason: "nil matrix"}
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	o := opts.WithDefaults()
	k := o.knobs()
	if err := checkRefinish(m, &o, &k, edited); err != nil {
		return err
	}
	for i := range m.Rows {
		refinishRow(&m.Rows[i], o.P, &k, m.Sense, edited)
	}
	return nil
}

// checkRefinish validates the matrix against the options before any change.
func checkRefinish(m *goodputMatrix, o *Options, k *ArtifactKnobs, edited editKind) error {
	if edited != editedNormalized && edited != editedValue {
		return &InputError{Field: "Edited", Reason: fmt.Sprintf("unknown value %d", edited)}
	}
	if m.P != o.P {
		return &InputError{Field: "Options.P", Reason: fmt.Sprintf("%v, but the matrix was built with p = %v", o.P, m.P)}
	}
	if k.Round != (m.Grid > 0) {
		return &InputError{Field: "Options", Reason: "the variant's rounding does not match the matrix's Grid"}
	}
	for i := range m.Rows {
		r := &m.Rows[i]
		if r.Pin < -1 || r.Pin >= len(r.Entries) || r.Current < -1 || r.Current >= len(r.Entries) {
			return &InputError{Job: r.Job, Field: fmt.Sprintf("Matrix.Rows[%d]", i), Reason: "Pin or Current out of range"}
		}
		if math.IsNaN(r.Unallocated) || math.IsInf(r.Unallocated, 0) {
			return &InputError{Job: r.Job, Field: fmt.Sprintf("Matrix.Rows[%d].Unallocated", i), Reason: fmt.Sprintf("%v, want a finite number", r.Unallocated)}
		}
		for e := range r.Entries {
			en := &r.Entries[e]
			f := fmt.Sprintf("Matrix.Rows[%d].Entries[%d]", i, e)
			if edited == editedNormalized && (math.IsNaN(en.Normalized) || math.IsNaN(en.Restart)) {
				return &InputError{Job: r.Job, Field: f, Reason: "NaN Normalized or Restart"}
			}
			if edited == editedValue && math.IsNaN(en.Value) {
				return &InputError{Job: r.Job, Field: f + ".Value", Reason: "NaN"}
			}
		}
	}
	return nil
}

// refinishRow applies the power, clipping, rounding, dropping and dominance
// steps of a matrix row (as the matrix build's row finishing does).
func refinishRow(row *matrixRow, p float64, k *ArtifactKnobs, sense ilp.Sense, edited editKind) {
	if k.Round {
		row.Unallocated = roundTo(row.Unallocated, artifactGrid)
	}
	for i := range row.Entries {
		e := &row.Entries[i]
		v := artifactValue(e.Value, k)
		if edited == editedNormalized {
			v = power(e.Restart*e.Normalized, p, k)
		}
		e.Value = v
		e.Dropped = math.IsInf(v, 0) || math.IsNaN(v)
		e.Dominated = false
	}
	if row.Pin >= 0 {
		row.Entries[row.Pin].Dropped = false
	}
	markDominated(row, sense)
}

// matrixEdit changes a round's goodput matrix before it is solved (for
// example a stickiness bonus); it returns which numbers it changed, and the
// round then calls Refinish with them. It may change only numbers
// (Normalized, Restart, Value, Unallocated): an edit that adds or removes
// rows or entries, or changes a row's Job, Index, Current or Pin or an
// entry's Config, Replicas, Charge or Current, fails the round. snap is the
// round's validated snapshot (read only).
type matrixEdit func(snap *Snapshot, m *goodputMatrix) (editKind, error)

// withMatrixEdit returns a scheduler with the same options whose rounds
// apply edit to the matrix, re-finish it (refinish) and solve and place the
// edited matrix. An error of edit fails the round.
func (s *Scheduler) withMatrixEdit(edit matrixEdit) *Scheduler {
	c := *s
	c.edit = edit
	return &c
}

// WithGoodputEdit returns a scheduler with the same options whose rounds let
// edit change the goodput of what they offer, the hook of a policy
// experiment (for example a stickiness bonus on a job's current
// configuration). Before the allocation is solved, edit is called once per
// configuration the round offers a job, in snapshot order, with the job
// (read only), the configuration (Type, Nodes and GPUs; no Placement),
// whether it is the job's current one, and g, its normalised goodput G
// (paper §3.3: 1 for the job's smallest configuration, before the restart
// factor); it returns the G to use. The round then recomputes every value
// (r·G)^p, rounds and clips it as Options.Artifact says, and recomputes which
// configurations are dominated, exactly as for a G it computed itself. A
// NaN G fails the round with an *InputError naming the job.
func (s *Scheduler) WithGoodputEdit(edit func(job *Job, config Allocation, current bool, g float64) float64) *Scheduler {
	return s.withMatrixEdit(func(snap *Snapshot, m *goodputMatrix) (editKind, error) {
		for i := range m.Rows {
			r := &m.Rows[i]
			job := &snap.Jobs[r.Index]
			for k := range r.Entries {
				e := &r.Entries[k]
				cfg := Allocation{Type: e.Config.Type, Nodes: e.Config.Nodes, GPUs: e.Config.GPUs}
				e.Normalized = edit(job, cfg, e.Current, e.Normalized)
			}
		}
		return editedNormalized, nil
	})
}

// applyEdit runs the scheduler's matrix edit, if any, and re-finishes.
func (s *Scheduler) applyEdit(snap *Snapshot, m *goodputMatrix) error {
	if s.edit == nil {
		return nil
	}
	rows := make([]rowShape, len(m.Rows))
	for i := range m.Rows {
		rows[i] = shapeOf(&m.Rows[i])
	}
	edited, err := s.edit(snap, m)
	if err != nil {
		return fmt.Errorf("sia: matrix edit: %w", err)
	}
	if len(m.Rows) != len(rows) {
		return &InputError{Field: "MatrixEdit", Reason: fmt.Sprintf("the edit changed the matrix from %d to %d rows", len(rows), len(m.Rows))}
	}
	for i := range m.Rows {
		if len(m.Rows[i].Entries) != len(rows[i].entries) {
			return &InputError{Job: m.Rows[i].Job, Field: "MatrixEdit", Reason: "the edit added or removed entries"}
		}
		if !rows[i].same(shapeOf(&m.Rows[i])) {
			return &InputError{Job: rows[i].job, Field: fmt.Sprintf("MatrixEdit: Matrix.Rows[%d]", i),
				Reason: "the edit changed the row's structure (job, Current, Pin, or an entry's Config, Replicas, Charge or Current): an edit may change only numbers (Normalized, Restart, Value, Unallocated)"}
		}
	}
	return refinish(m, &s.opts, edited)
}

// rowShape is the structure of a matrix row that the solver and placement
// rely on and a MatrixEdit must not change.
type rowShape struct {
	job                 string
	index, current, pin int
	entries             []entryShape
}

type entryShape struct {
	config           configset.Config
	replicas, charge int
	current          bool
}

func shapeOf(r *matrixRow) rowShape {
	sh := rowShape{job: r.Job, index: r.Index, current: r.Current, pin: r.Pin, entries: make([]entryShape, len(r.Entries))}
	for k := range r.Entries {
		e := &r.Entries[k]
		sh.entries[k] = entryShape{config: e.Config, replicas: e.Replicas, charge: e.Charge, current: e.Current}
	}
	return sh
}

func (a rowShape) same(b rowShape) bool {
	return a.job == b.job && a.index == b.index && a.current == b.current && a.pin == b.pin && slices.Equal(a.entries, b.entries)
}

// assemble fills a plan's decisions and solver and placement outcomes. A
// plan whose placement changed the solver's allocation (a job unplaced, or
// kept where it was) is not the proven optimum: its status is Feasible.
func assemble(plan *Plan, snap *Snapshot, m *goodputMatrix, sol solution, lay layout, o *Options) {
	plan.Decisions, plan.entries = decide(snap, m, sol, lay, o)
	plan.matrix = m
	plan.Status, plan.Objective, plan.Bound = sol.Status, sol.Objective, sol.Bound
	if plan.Status == StatusOptimal && (len(lay.Unplaced) > 0 || len(lay.Kept) > 0) {
		plan.Status = StatusFeasible
	}
	if len(lay.fill.Filled) > 0 { // beyond the charged problem: see Plan.Status
		plan.Status, plan.Objective, plan.Bound = StatusFeasible, lay.fill.Objective, lay.fill.Bound
		if lay.fill.Optimal && sol.Status == StatusOptimal && len(lay.Unplaced) == 0 && len(lay.Kept) == 0 {
			plan.Status = StatusOptimal
		}
		plan.filled = lay.fill.Filled
	}
}
