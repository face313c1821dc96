package sia

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sia-sched/sia/internal/fleet"
)

// The placement step on the fleets of examples/round-deadline (the same
// recipe, internal/fleet: 3 to 8 types, nodes of 4 to 16 GPUs, one or two sizes per type,
// random concave models; half the jobs placed by a round, a third of those
// finished, one in fifty of the others non-preemptible), made deterministic:
// the setup round is the greedy allocation, not a deadline-bound solve.

// placeFleet is a fleet of internal/fleet.
type placeFleet fleet.Config

func (c placeFleet) cluster(rng *rand.Rand) []Node {
	var cl []Node
	for _, n := range fleet.Config(c).Cluster(rng) {
		cl = append(cl, Node{ID: n.ID, Type: n.Type, GPUs: n.GPUs})
	}
	return cl
}

func (c placeFleet) jobList(rng *rand.Rand, n int, now time.Time) []Job {
	out := make([]Job, n)
	for i, fj := range fleet.Config(c).JobList(rng, n, now) {
		j := Job{ID: fj.ID, Submitted: fj.Submitted, Models: fj.Models, GPUs: fj.GPUs, MinGPUs: fj.MinGPUs, MaxGPUs: fj.MaxGPUs}
		j.State.RestartCost = fj.RestartCost
		switch fj.Kind {
		case fleet.Rigid:
			j.Kind = Rigid
		case fleet.StrongScaling:
			j.Kind = StrongScaling
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
	rng := rand.New(rand.NewPCG(c.Seed, 11))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	jobs := c.jobList(rng, c.Jobs*6/5, now)
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
			b.Run(fmt.Sprintf("gpus=%d/%s", c.GPUs, k.name), func(b *testing.B) {
				starts := 0
				for i, ch := range k.sol.Choice {
					if ch >= 0 && m.Rows[i].Current < 0 {
						starts++
					}
				}
				benchCPU(b, func() error {
					_, err := place(context.Background(), &snap, m, k.sol)
					return err
				})
				b.ReportMetric(float64(starts), "starts")
			})
		}
	}
}
