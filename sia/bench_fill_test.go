package sia

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// fillBenchRound returns the steps of a round before the fill step on a
// fleet of 15-GPU nodes (chain sizes 1, 3, 15) where running rigid jobs of
// 5 GPUs are charged 15 each: n nodes, n/2 such jobs, and queued jobs of
// every kind, 4 per node.
func fillBenchRound(b *testing.B, n int) (*Snapshot, *goodputMatrix, solution, layout) {
	rng := rand.New(rand.NewPCG(1, 2))
	snap := Snapshot{Now: fillT0}
	for k := 0; k < n; k++ {
		snap.Nodes = append(snap.Nodes, Node{ID: fmt.Sprintf("n%d", k), Type: "g", GPUs: 15})
	}
	for k := 0; k < n/2; k++ {
		m := fillModel{gain: 0.5 + 0.5*rng.Float64(), cross: 0.9}
		snap.Jobs = append(snap.Jobs, Job{ID: fmt.Sprintf("r%d", k), Kind: Rigid, GPUs: 5, Models: m,
			State: JobState{Current: Allocation{Type: "g", Nodes: 1, GPUs: 5, Placement: fillGPUs(snap.Nodes[2*k].ID, 0, 5)}}})
	}
	for k := 0; k < 4*n; k++ {
		j := Job{ID: fmt.Sprintf("w%d", k), Models: fillModel{gain: 0.5 + 0.5*rng.Float64(), cross: 0.9}, Kind: Kind(rng.IntN(3))}
		if j.Kind == Rigid {
			j.GPUs = 1 + rng.IntN(20)
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	o := Options{RoundTimeout: -1}
	m, err := newMatrix(&snap, &o)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // the setup's solve need not be optimal
	defer cancel()
	sol, err := solveMatrix(ctx, m, &o)
	if err != nil {
		b.Fatal(err)
	}
	lay, err := placeSolution(&snap, m, sol)
	if err != nil {
		b.Fatal(err)
	}
	return &snap, m, sol, lay
}

// BenchmarkFill measures the fill step alone (fillIdle, no time limit) on
// fillBenchRound's fleets; ns/entry is its time per entry of the waiting
// jobs it scans, ns/GPU per GPU of the fleet (fillCostPerEntry,
// fillCostPerGPU).
func BenchmarkFill(b *testing.B) {
	for _, n := range []int{50, 400} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			snap, m, sol, lay := fillBenchRound(b, n)
			entries := 0
			for _, i := range fillRows(snap, m, &lay, -1) {
				entries += len(m.Rows[i].Entries)
			}
			filled := 0
			b.ResetTimer()
			for b.Loop() {
				l := lay
				l.GPUs = slices.Clone(lay.GPUs)
				filled = len(fillIdle(snap, m, sol, &l, -1))
			}
			op := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(op/float64(entries), "ns/entry")
			b.ReportMetric(op/float64(15*n), "ns/GPU")
			b.ReportMetric(float64(filled), "filled")
			b.ReportMetric(float64(entries), "entries")
		})
	}
}
