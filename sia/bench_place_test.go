package sia

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// The placement step on the fleets of examples/round-deadline (the same
// recipe: 3 to 8 types, nodes of 4 to 16 GPUs, one or two sizes per type,
// random concave models; half the jobs placed by a round, a third of those
// finished, one in fifty of the others non-preemptible), made deterministic:
// the setup round is the greedy allocation, not a deadline-bound solve.

type placeFleet struct {
	jobs, gpus, types int
	seed              uint64
}

var placeFleetTypes = []string{"t4", "v100", "l4", "rtx", "l40s", "a10", "a100", "h100"}

func (c placeFleet) cluster(rng *rand.Rand) []Node {
	sizes := []int{4, 6, 8, 8, 10, 12, 16}
	var cl []Node
	for t := 0; t < c.types; t++ {
		name := placeFleetTypes[t]
		sz := []int{sizes[rng.IntN(len(sizes))]}
		if rng.IntN(2) == 0 {
			sz = append(sz, sizes[rng.IntN(len(sizes))])
		}
		left := c.gpus / c.types
		for k := 0; left > 0; k++ {
			g := sz[k%len(sz)]
			cl = append(cl, Node{ID: fmt.Sprintf("%s-%d", name, k), Type: name, GPUs: g})
			left -= g
		}
	}
	return cl
}

func (c placeFleet) models(rng *rand.Rand) bootstrap.Static {
	out := bootstrap.Static{}
	m0 := []int{8, 16, 32, 64, 128, 256}[rng.IntN(6)]
	maxB := m0 * (8 + rng.IntN(56))
	noise := float64(m0) * (0.05 + 2*rng.Float64())
	for t := 0; t < c.types; t++ {
		if t > 0 && c.types > 3 && rng.IntN(8) == 0 {
			continue
		}
		speed := 1 + float64(t)/2
		jit := func() float64 { return 0.7 + 0.6*rng.Float64() }
		bmax := max(m0/2, 4) * (1 + rng.IntN(8))
		out[placeFleetTypes[t]] = goodput.Model{
			Params: goodput.Params{
				AlphaC: 0.02 * jit() / speed, BetaC: 0.001 * jit() / speed,
				AlphaN: 0.1 * jit(), BetaN: 0.01 * jit(),
				AlphaR: 0.03 * jit(), BetaR: 0.003 * jit(),
				Gamma: 1 + rng.Float64(),
			},
			Grad:      goodput.GradStats{Sqr: 1, Var: noise},
			InitBatch: m0, MaxBatch: maxB,
			Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: bmax},
		}
	}
	return out
}

func (c placeFleet) jobList(rng *rand.Rand, n int, now time.Time) []Job {
	out := make([]Job, n)
	for i := range out {
		j := Job{ID: fmt.Sprintf("job-%d", i), Submitted: now.Add(-time.Duration(1+rng.IntN(3600)) * time.Second), Models: c.models(rng)}
		j.State.RestartCost = time.Duration(10+rng.IntN(240)) * time.Second
		switch x := rng.IntN(20); {
		case x == 0:
			j.Kind = Rigid
			j.GPUs = []int{1, 2, 4, 6, 8, 12}[rng.IntN(6)]
		case x == 1:
			j.Kind = StrongScaling
			j.MaxGPUs = 16
		case x == 2:
			j.MinGPUs = 2
		}
		out[i] = j
	}
	return out
}

// greedyRound builds the matrix of snap in full and the greedy allocation
// (the solver skipped: its ctx has ended).
func greedyRound(tb testing.TB, snap *Snapshot) (*goodputMatrix, solution) {
	o := (&Options{}).WithDefaults()
	cl, err := validateSnapshot(snap, &o, true)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := buildMatrix(context.Background(), snap, &o, cl, false)
	if err != nil {
		tb.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	sol, err := solve(done, m, &o)
	if err != nil {
		tb.Fatal(err)
	}
	return m, sol
}

// snapshot returns the fleet's second round: its matrix, the greedy
// allocation, and that allocation with only the first starts queued jobs
// started (everybody running keeps its configuration).
func (c placeFleet) snapshot(tb testing.TB, starts int) (Snapshot, *goodputMatrix, solution, solution) {
	rng := rand.New(rand.NewPCG(c.seed, 11))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	jobs := c.jobList(rng, c.jobs*6/5, now)
	snap := Snapshot{Now: now, Nodes: c.cluster(rng), Jobs: jobs[:len(jobs)/2]}
	m, sol := greedyRound(tb, &snap)
	lay, err := place(context.Background(), &snap, m, sol)
	if err != nil {
		tb.Fatal(err)
	}
	o := (&Options{}).WithDefaults()
	var p Plan
	assemble(&p, &snap, m, sol, lay, &o)
	snap.Advance(&p, now.Add(time.Minute))
	kept := snap.Jobs[:0]
	for i, j := range snap.Jobs {
		j.State.RestoreUntil = time.Time{}
		if i%3 == 0 && j.State.Current.Running() {
			continue
		}
		if i%50 == 1 && j.State.Current.Running() {
			j.NonPreemptible = true
		}
		kept = append(kept, j)
	}
	snap.Jobs = append(kept, jobs[len(jobs)/2:]...)
	m, many := greedyRound(tb, &snap)
	few := solution{Choice: append([]int(nil), many.Choice...)}
	n := 0
	for i, c := range few.Choice {
		if c >= 0 && m.Rows[i].Current < 0 {
			if n++; n > starts {
				few.Choice[i] = -1
			}
		}
	}
	return snap, m, few, many
}

// BenchmarkPlaceFleet measures sia's placement step (place: requests,
// placement.PlaceContext, the layout) on the 5,000-job fleets: "few", where
// every running job keeps its configuration and 30 queued jobs start (a
// round at a 5 ms deadline), and "many", the greedy allocation that starts
// every queued job that fits. It reports the thread's CPU time per round
// and the starts.
func BenchmarkPlaceFleet(b *testing.B) {
	for _, c := range []placeFleet{{5000, 8000, 6, 4}, {5000, 16000, 8, 5}} {
		snap, m, few, many := c.snapshot(b, 30)
		for _, k := range []struct {
			name string
			sol  solution
		}{{"few", few}, {"many", many}} {
			b.Run(fmt.Sprintf("gpus=%d/%s", c.gpus, k.name), func(b *testing.B) {
				starts := 0
				for i, ch := range k.sol.Choice {
					if ch >= 0 && m.Rows[i].Current < 0 {
						starts++
					}
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				b.ResetTimer()
				c0, _ := threadCPU()
				for i := 0; i < b.N; i++ {
					if _, err := place(context.Background(), &snap, m, k.sol); err != nil {
						b.Fatal(err)
					}
				}
				if c1, ok := threadCPU(); ok {
					b.ReportMetric(float64((c1-c0).Microseconds())/float64(b.N), "cpu-µs/op")
				}
				b.ReportMetric(float64(starts), "starts")
			})
		}
	}
}
