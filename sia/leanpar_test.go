package sia

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leanReuseFleets are two snapshots that take the lean path out of time.
func leanReuseFleets(t *testing.T) [2]Snapshot {
	return [2]Snapshot{
		fleetSnapshot(t, placeFleet{Jobs: 400, GPUs: 800, Types: 4, Seed: 2}),
		fleetSnapshot(t, placeFleet{Jobs: 300, GPUs: 600, Types: 3, Seed: 3}),
	}
}

// copyRows returns a deep copy of m's rows (entries included).
func copyRows(m *goodputMatrix) []matrixRow {
	rows := slices.Clone(m.Rows)
	for i := range rows {
		rows[i].Entries = slices.Clone(rows[i].Entries)
	}
	return rows
}

// TestLeanStorageConcurrent runs lean rounds of two snapshots on one
// scheduler from several goroutines, with collections between them, and
// checks every plan against the snapshot's
// plan from a scheduler of its own (decisions and matrix, also of the
// plans held while the others run).
func TestLeanStorageConcurrent(t *testing.T) {
	snaps := leanReuseFleets(t)
	var want [2]Plan
	for k := range snaps {
		s, err := New(nil)
		require.NoError(t, err)
		want[k] = roundOutOfTime(t, s, snaps[k])
		require.True(t, want[k].lean)
	}
	s, err := New(nil)
	require.NoError(t, err)
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	const workers, rounds = 4, 6
	plans := make([][]Plan, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				ctx, cancel := context.WithTimeout(context.Background(), 0)
				p, err := s.Round(ctx, snaps[(w+r)%2])
				cancel()
				if err != nil {
					t.Error(err)
					return
				}
				if r%2 == 1 {
					plans[w] = append(plans[w], p) // held to the end
				} else {
					assert.Equal(t, want[(w+r)%2].Decisions, p.Decisions, "worker %d round %d", w, r)
				}
				if w == 0 {
					runtime.GC() // now and then: the plans dropped give their storage back
				}
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		for k, p := range plans[w] {
			r := 2*k + 1
			assert.True(t, p.lean)
			assert.Equal(t, want[(w+r)%2].Decisions, p.Decisions, "worker %d round %d, held", w, r)
			assert.Equal(t, want[(w+r)%2].Objective, p.Objective, "worker %d round %d, held", w, r)
			assert.Equal(t, want[(w+r)%2].matrix.Rows, p.matrix.Rows, "worker %d round %d, held: its matrix", w, r)
		}
	}
}

// TestLeanKeptParallelTwin builds the lean round's kept rows with
// Options.Parallelism 1 to 8 on snapshots large enough for several
// workers (rigid jobs among them: rows bareRow does not cover), with and
// without a pinned job that makes the round take the standard path, and
// checks that every value gives the same matrix and the same answer.
func TestLeanKeptParallelTwin(t *testing.T) {
	snaps := []Snapshot{
		fleetSnapshot(t, placeFleet{Jobs: 400, GPUs: 800, Types: 4, Seed: 2}),
		largeSnapshot(t, 8, 600, 3),
	}
	// A running job whose current shape is beyond its MaxGPUs: not kept,
	// no lean round.
	bad := snaps[1]
	bad.Jobs = slices.Clone(bad.Jobs)
	found := false
	for i := len(bad.Jobs) - 1; i >= 0; i-- { // in the last worker's range
		j := &bad.Jobs[i]
		if j.State.Current.GPUs > 1 && j.Kind != Rigid && !pinned(j, bad.Now) {
			j.MaxGPUs, j.MinGPUs = j.State.Current.GPUs-1, 1
			found = true
			break
		}
	}
	require.True(t, found)
	snaps = append(snaps, bad)
	for n, snap := range snaps {
		var want []matrixRow
		var wantOK bool
		for par := 1; par <= 8; par++ {
			o := (&Options{Parallelism: par}).WithDefaults()
			s := snap
			cl, err := validateSnapshot(&s, &o, true)
			require.NoError(t, err)
			m, _, _, ok := leanKept(&s, &o, cl, &leanScratch{})
			var rows []matrixRow
			if ok {
				rows = copyRows(m)
			}
			if par == 1 {
				want, wantOK = rows, ok
				assert.Equal(t, n < 2, ok, "snapshot %d", n)
				continue
			}
			require.Equal(t, wantOK, ok, "snapshot %d, parallelism %d", n, par)
			require.Equal(t, want, rows, "snapshot %d, parallelism %d", n, par)
		}
	}
}

// TestLeanCheapParallelTwin builds the lean round's cheap rows on 1 to 5
// goroutines (leanCheapOn) under three clocks that read the same at the
// same call (a round out of time; one whose time for more rows ends after
// a few hundred readings; one with time for all), and checks that every
// number of goroutines gives the same rows and the same error.
func TestLeanCheapParallelTwin(t *testing.T) {
	snaps := []Snapshot{
		fleetSnapshot(t, placeFleet{Jobs: 400, GPUs: 800, Types: 4, Seed: 2}),
		largeSnapshot(t, 8, 600, 3),
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clocks := map[string]func(jobs int) *roundClock{
		"out of time": func(int) *roundClock {
			return &roundClock{deadline: t0, now: func() time.Time { return t0.Add(time.Hour) }}
		},
		"ends": func(jobs int) *roundClock {
			calls := 0
			return &roundClock{deadline: t0.Add(time.Duration(jobs)*leanRestPerJob + 300*time.Microsecond), now: func() time.Time {
				calls++
				return t0.Add(time.Duration(calls) * time.Microsecond)
			}}
		},
		"time for all": func(int) *roundClock {
			return &roundClock{deadline: t0.Add(time.Hour), now: func() time.Time { return t0 }}
		},
	}
	for n, snap := range snaps {
		for name, clock := range clocks {
			var want []matrixRow
			for par := 1; par <= 5; par++ {
				o := (&Options{Parallelism: 4}).WithDefaults()
				s := snap
				cl, err := validateSnapshot(&s, &o, true)
				require.NoError(t, err)
				m, lambda, ev, ok := leanKept(&s, &o, cl, &leanScratch{})
				require.True(t, ok)
				require.NoError(t, leanCheapOn(&s, &o, cl, clock(len(s.Jobs)), m, lambda, ev, &leanScratch{}, par))
				rows := copyRows(m)
				if par == 1 {
					want = rows
					built := 0
					for i := range rows {
						if !s.Jobs[i].State.Current.Running() && len(rows[i].Entries) > 0 {
							built++
						}
					}
					t.Logf("snapshot %d, %s: %d cheap rows", n, name, built)
					assert.Positive(t, built)
					continue
				}
				require.Equal(t, want, rows, "snapshot %d, %s, %d goroutines", n, name, par)
			}
		}
	}
}
