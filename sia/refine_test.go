package sia

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cloneMatrix(m *goodputMatrix) *goodputMatrix {
	c := *m
	c.Rows = make([]matrixRow, len(m.Rows))
	for i, r := range m.Rows {
		r.Entries = append([]matrixEntry(nil), r.Entries...)
		c.Rows[i] = r
	}
	return &c
}

// refineVariants are the option sets the tests re-finish under.
func refineVariants() map[string]*Options {
	return map[string]*Options{
		"artifact": {Artifact: PublishedArtifact()},
		"paper":    nil,
		"p=0.5":    {P: 0.5},
		"p=-1":     {P: -1, Lambda: 1e3},
		"clip":     {Artifact: &ArtifactKnobs{Clip: true}},
	}
}

// TestRefinishUneditedIsIdentity: re-finishing a matrix nobody edited
// gives the matrix BuildMatrix built (values, drops, dominance), on random
// scenarios of every variant; so Refinish and the build's row finishing
// agree.
func TestRefinishUneditedIsIdentity(t *testing.T) {
	for name, opt := range refineVariants() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(0); seed < 15; seed++ {
				g := newScenarioGen(seed, seed%2 == 1)
				for r := 0; r < 3; r++ {
					g.step()
				}
				snap := g.snap
				m, err := newMatrix(&snap, opt)
				require.NoError(t, err)
				for _, ed := range []editKind{editedNormalized, editedValue} {
					c := cloneMatrix(m)
					require.NoError(t, refinish(c, opt, ed))
					assert.Equal(t, m, c, "seed %d edited %d", seed, ed)
				}
			}
		})
	}
}

// TestRefinishAfterStickinessBonus: raising the current entry's G re-rounds
// and re-clips its value and recomputes dominance (a stale Dominated flag is
// cleared; entries it now dominates are flagged).
func TestRefinishAfterStickinessBonus(t *testing.T) {
	opt := &Options{Artifact: PublishedArtifact()}
	checked, flipped := 0, 0
	for seed := uint64(0); seed < 30; seed++ {
		g := newScenarioGen(seed, false)
		for r := 0; r < 3; r++ {
			g.step()
		}
		snap := g.snap
		m, err := newMatrix(&snap, opt)
		require.NoError(t, err)
		for i := range m.Rows {
			for k := range m.Rows[i].Entries {
				m.Rows[i].Entries[k].Normalized *= 1.2345
				m.Rows[i].Entries[k].Dominated = k%2 == 0 // stale flags
			}
		}
		require.NoError(t, refinish(m, opt, editedNormalized))
		for i := range m.Rows {
			row := &m.Rows[i]
			want := cloneMatrix(&goodputMatrix{Rows: []matrixRow{*row}}).Rows[0]
			for k := range want.Entries {
				e := &want.Entries[k]
				e.Dominated = false
				x := e.Restart * e.Normalized
				v := math.Pow(x, m.P)
				switch {
				case x <= 0 && m.P < 0:
					v = math.Inf(1)
				case x <= 0:
					v = 0
				}
				e.Value = roundTo(math.Min(v, artifactClip), artifactGrid)
				assert.Equal(t, e.Value, row.Entries[k].Value)
				assert.InDelta(t, 0, math.Remainder(row.Entries[k].Value, artifactGrid), 1e-9, "on the grid")
			}
			markDominated(&want, m.Sense)
			for k := range want.Entries {
				assert.Equal(t, want.Entries[k].Dominated, row.Entries[k].Dominated)
				checked++
				if k%2 == 0 && !row.Entries[k].Dominated {
					flipped++
				}
			}
		}
	}
	assert.Greater(t, checked, 100)
	assert.Greater(t, flipped, 10, "stale Dominated flags were cleared")
}

func TestRefinishRejectsMismatches(t *testing.T) {
	g := newScenarioGen(3, false)
	g.step()
	g.step()
	snap := g.snap
	m, err := newMatrix(&snap, &Options{Artifact: PublishedArtifact()})
	require.NoError(t, err)
	require.NotEmpty(t, m.Rows)
	assert.ErrorIs(t, refinish(nil, nil, editedValue), ErrInvalidInput)
	assert.ErrorIs(t, refinish(cloneMatrix(m), &Options{Artifact: PublishedArtifact(), P: 0.5}, editedValue), ErrInvalidInput, "other p")
	assert.ErrorIs(t, refinish(cloneMatrix(m), nil, editedValue), ErrInvalidInput, "paper variant does not round")
	assert.ErrorIs(t, refinish(cloneMatrix(m), &Options{Artifact: PublishedArtifact()}, editKind(9)), ErrInvalidInput)
	c := cloneMatrix(m)
	c.Rows[0].Unallocated = math.NaN()
	assert.ErrorIs(t, refinish(c, &Options{Artifact: PublishedArtifact()}, editedValue), ErrInvalidInput)
	c = cloneMatrix(m)
	c.Rows[0].Pin = len(c.Rows[0].Entries)
	assert.ErrorIs(t, refinish(c, &Options{Artifact: PublishedArtifact()}, editedValue), ErrInvalidInput)
	if len(m.Rows[0].Entries) > 0 {
		c = cloneMatrix(m)
		c.Rows[0].Entries[0].Value = math.NaN()
		before := cloneMatrix(c)
		assert.ErrorIs(t, refinish(c, &Options{Artifact: PublishedArtifact()}, editedValue), ErrInvalidInput)
		assert.Equal(t, before.Rows[1:], c.Rows[1:], "unchanged on error")
	}
}

// TestWithMatrixEditNoOpIsRound: an edit that changes nothing gives the
// same plan as Round; an edit that makes every entry worthless queues all
// jobs that are not pinned.
func TestWithMatrixEditNoOpIsRound(t *testing.T) {
	s, err := New(&Options{Artifact: PublishedArtifact()})
	require.NoError(t, err)
	for seed := uint64(0); seed < 10; seed++ {
		g := newScenarioGen(seed, false)
		for r := 0; r < 3; r++ {
			g.step()
		}
		snap := g.snap
		want, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		noop := s.withMatrixEdit(func(*Snapshot, *goodputMatrix) (editKind, error) { return editedValue, nil })
		got, err := noop.Round(context.Background(), snap)
		require.NoError(t, err)
		assert.Equal(t, want, got)

		zero := s.withMatrixEdit(func(_ *Snapshot, m *goodputMatrix) (editKind, error) {
			for i := range m.Rows {
				for k := range m.Rows[i].Entries {
					m.Rows[i].Entries[k].Value = m.Rows[i].Unallocated // no better than waiting
				}
			}
			return editedValue, nil
		})
		p, err := zero.Round(context.Background(), snap)
		require.NoError(t, err)
		for _, d := range p.Decisions {
			if d.Allocation.Running() {
				assert.True(t, d.Pinned, "%s runs only when pinned", d.Job)
			}
		}
	}
	bad := s.withMatrixEdit(func(_ *Snapshot, m *goodputMatrix) (editKind, error) {
		m.Rows = m.Rows[:0]
		return editedValue, nil
	})
	g := newScenarioGen(1, false)
	g.step()
	g.step()
	if len(g.snap.Jobs) > 0 {
		_, err = bad.Round(context.Background(), g.snap)
		assert.ErrorIs(t, err, ErrInvalidInput)
	}
}

// TestAssemblePlanIsRound: BuildMatrix, Solve, Place and AssemblePlan give
// Round's plan; layouts that break the solution are rejected.
func TestAssemblePlanIsRound(t *testing.T) {
	opt := &Options{Artifact: PublishedArtifact()}
	s, err := New(opt)
	require.NoError(t, err)
	for seed := uint64(0); seed < 10; seed++ {
		g := newScenarioGen(seed, seed%2 == 0)
		for r := 0; r < 3; r++ {
			g.step()
		}
		snap := g.snap
		want, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		m, err := newMatrix(&snap, opt)
		require.NoError(t, err)
		sol, err := solveMatrix(context.Background(), m, opt)
		require.NoError(t, err)
		lay, err := placeSolution(&snap, m, sol)
		require.NoError(t, err)
		got, err := assemblePlan(&snap, m, sol, lay)
		require.NoError(t, err)
		assert.Equal(t, want, got)

		for i, gs := range lay.GPUs {
			if len(gs) == 0 {
				continue
			}
			bad := layout{GPUs: append([][]GPU(nil), lay.GPUs...)}
			bad.GPUs[i] = gs[1:]
			_, err := assemblePlan(&snap, m, sol, bad)
			assert.ErrorIs(t, err, ErrInvalidInput, "one GPU short")
			bad.GPUs[i] = append(append([]GPU(nil), gs...), gs[0])[1:]
			bad.GPUs[i][len(bad.GPUs[i])-1] = GPU{Node: "nope", Index: 0}
			_, err = assemblePlan(&snap, m, sol, bad)
			assert.ErrorIs(t, err, ErrInvalidInput, "unknown node")
			break
		}
	}
	_, err = assemblePlan(nil, nil, solution{}, layout{})
	assert.ErrorIs(t, err, ErrInvalidInput)
}
