package sia

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBareRowTwin: the bare kept rows built without a rowBuilder
// (bareRow) are the rows of the paper's steps (rowSteps, rowBare), on
// fleets of one and several node sizes per type, with pinned, restoring,
// out-of-bounds and type-restricted jobs, jobs whose Models are their own
// predictor (Evaluator), and under the artifact's knobs and both senses;
// and the fast path takes most of the running jobs.
func TestBareRowTwin(t *testing.T) {
	snaps := []Snapshot{
		largeSnapshot(t, 8, 600, 1),
		largeSnapshot(t, 8, 600, 2),
		fleetSnapshot(t, placeFleet{1000, 2000, 3, 1}),
		fleetSnapshot(t, placeFleet{2500, 4000, 5, 3}),
	}
	snaps = append(snaps, offSetSnapshot(t, &snaps[0]))
	knobs := ArtifactKnobs{Filler: true, Round: true, Clip: true, RestartGrace: true, ModelPenalties: true, BlindFirst: true}
	opts := []Options{{}, {P: 0.5}, {P: -1, Lambda: 0.3, Artifact: &knobs}, {MaxGPUsPerJob: 4}}
	var evals atomic.Int64
	for si := range snaps {
		snap := snaps[si]
		snap.Jobs = append([]Job(nil), snap.Jobs...)
		for i := range snap.Jobs {
			j := &snap.Jobs[i]
			cur := j.State.Current
			if !cur.Running() {
				continue
			}
			switch i % 11 {
			case 1:
				j.State.RestoreUntil = snap.Now.Add(time.Minute) // restoring: pinned
			case 2:
				j.Models = countedModels{j.Models, &evals} // its own predictor
			case 3:
				if j.Kind != Rigid && cur.GPUs > 1 && !j.NonPreemptible {
					j.MaxGPUs, j.MinGPUs = cur.GPUs-1, 0 // above its bounds
				}
			case 4:
				j.Types = []string{cur.Type}
			case 5:
				j.Types = []string{"nowhere", cur.Type}
			case 6:
				j.State.PeakReplicas = 0
			case 7:
				j.State.Restarts, j.State.RestartCost = 3, time.Hour
			}
		}
		for oi, o := range opts {
			o := o.WithDefaults()
			t.Run(fmt.Sprintf("snap%d/opts%d", si, oi), func(t *testing.T) {
				cl, err := validateSnapshot(&snap, &o, true)
				require.NoError(t, err)
				k, lambda := o.knobs(), o.Lambda
				if k.Round {
					lambda = roundTo(lambda, artifactGrid)
				}
				sense := ilp.Maximize
				if o.P < 0 {
					sense = ilp.Minimize
				}
				fastM := goodputMatrix{Rows: make([]matrixRow, len(snap.Jobs)), Sense: sense}
				slowM := goodputMatrix{Rows: make([]matrixRow, len(snap.Jobs)), Sense: sense}
				fast, running := 0, 0
				for i := range snap.Jobs {
					if !snap.Jobs[i].State.Current.Running() {
						continue
					}
					running++
					if _, ok := bareRow(nil, &snap, &o, &k, cl, &fastM, lambda, i); !ok {
						continue
					}
					fast++
					_, err := rowSteps(nil, &snap, &o, &k, cl, newEvaluator(), &slowM, lambda, i, rowBare)
					require.NoError(t, err)
					require.Equal(t, slowM.Rows[i], fastM.Rows[i], "job %d (%s)", i, snap.Jobs[i].ID)
				}
				if si < len(snaps)-1 {
					assert.Greater(t, fast, running/3, "%d of %d running jobs on the fast path", fast, running)
				} else {
					assert.Less(t, fast, running, "shapes off the configuration set take rowSteps")
				}
			})
		}
	}
}

// offSetSnapshot returns a snapshot of two 8-GPU nodes whose running jobs
// (with the models of a data-parallel job of base) hold shapes that are no
// configuration of the set (3 GPUs on one node, 2 on two) besides one that is.
func offSetSnapshot(t *testing.T, base *Snapshot) Snapshot {
	var src *Job
	for i := range base.Jobs {
		j := &base.Jobs[i]
		if cur := j.State.Current; cur.Running() && j.Kind == Adaptive {
			if m, _ := j.Models.Model(cur.Type); m.Stages == 0 {
				src = j
				break
			}
		}
	}
	require.NotNil(t, src)
	ty := src.State.Current.Type
	run := func(id string, nodes int, gpus ...GPU) Job {
		j := Job{ID: id, Kind: Adaptive, Models: src.Models, Submitted: base.Now.Add(-time.Hour)}
		j.State.Current = Allocation{Type: ty, Nodes: nodes, GPUs: len(gpus), Placement: gpus}
		return j
	}
	return Snapshot{Now: base.Now, Nodes: []Node{{ID: "a0", Type: ty, GPUs: 8}, {ID: "a1", Type: ty, GPUs: 8}},
		Jobs: []Job{
			run("three", 1, GPU{"a0", 0}, GPU{"a0", 1}, GPU{"a0", 2}),
			run("two", 2, GPU{"a0", 3}, GPU{"a1", 0}),
			run("four", 1, GPU{"a1", 1}, GPU{"a1", 2}, GPU{"a1", 3}, GPU{"a1", 4}),
		}}
}

// BenchmarkBareRows measures the running jobs' bare kept rows (rowBare) of
// the 5,000-job fleets of examples/round-deadline, built by bareRow where
// it can (bare) and by the paper's steps (steps), in CPU time per round.
func BenchmarkBareRows(b *testing.B) {
	for _, c := range []placeFleet{{5000, 8000, 6, 4}, {5000, 16000, 8, 5}} {
		snap := fleetSnapshot(b, c)
		o := (&Options{}).WithDefaults()
		cl, err := validateSnapshot(&snap, &o, true)
		require.NoError(b, err)
		k := o.knobs()
		m := goodputMatrix{Rows: make([]matrixRow, len(snap.Jobs))}
		backing := make([]matrixEntry, 0, len(snap.Jobs))
		ev := newEvaluator()
		for _, way := range []string{"steps", "bare"} {
			b.Run(fmt.Sprintf("gpus=%d/%s", c.GPUs, way), func(b *testing.B) {
				benchCPU(b, func() error {
					backing = backing[:0]
					for i := range snap.Jobs {
						if !snap.Jobs[i].State.Current.Running() {
							continue
						}
						var err error
						if way == "bare" {
							backing, err = buildRow(backing, &snap, &o, &k, cl, ev, &m, o.Lambda, i, rowBare)
						} else {
							backing, err = rowSteps(backing, &snap, &o, &k, cl, ev, &m, o.Lambda, i, rowBare)
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
	}
}
