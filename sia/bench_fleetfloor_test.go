package sia

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/sia-sched/sia/internal/measure"
)

// fleetSnapshot returns the second round of fleet c as placeFleet.snapshot
// builds it (examples/round-deadline's recipe, made deterministic).
func fleetSnapshot(tb testing.TB, c placeFleet) Snapshot {
	snap, _, _, _ := c.snapshot(tb, 0)
	return snap
}

// BenchmarkFleetFloor measures the floor of a round on the 5,000-job fleets
// of examples/round-deadline: a round out of time when it starts (expired
// ctx, clock an hour late), in CPU time of the round's thread per step:
// validation, matrix, the solver's step (greedy), placement, and the rest
// (fill and the plan). The lean-gc runs are lean rounds each after a
// collection (runtime.GC, untimed), as examples/round-deadline runs them:
// caches cold, the heap's free spans unused. The lean-p2 runs are lean
// rounds with Options.Parallelism 2 (validation's checks of each job and
// the kept and cheap rows on two goroutines: the round's thread does about
// half of them; ns/op is then the figure to read).
func BenchmarkFleetFloor(b *testing.B) {
	for _, c := range []placeFleet{{5000, 8000, 6, 4}, {5000, 16000, 8, 5}} {
		snap := fleetSnapshot(b, c)
		for _, path := range []string{"lean", "lean-gc", "lean-p2", "standard"} {
			b.Run(fmt.Sprintf("gpus=%d/%s", c.GPUs, path), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var o Options
				if path == "lean-p2" {
					o.Parallelism = 2
				}
				s, err := New(&o)
				if err != nil {
					b.Fatal(err)
				}
				s.noLean = path == "standard"
				gc := path == "lean-gc"
				var lean bool
				var st [5]time.Duration
				var last, t0 measure.Reading
				k := 0
				s.opts.Observer = func(e Event) {
					now, _ := threadCPU()
					switch e.Stage {
					case StageMatrix:
						k = 1
					case StageSolve:
						k = 2
					case StagePlace:
						k = 3
					}
					st[k] += now.Since(last)
					last = now
				}
				// The matrix event ends validation and the matrix.
				s.now = func() time.Time { return time.Now().Add(time.Hour) }
				b.ReportAllocs()
				b.ResetTimer()
				var total time.Duration
				for i := 0; i < b.N; i++ {
					if gc {
						b.StopTimer()
						runtime.GC()
						b.StartTimer()
					}
					ctx, cancel := context.WithTimeout(context.Background(), 0)
					t0, _ = threadCPU()
					last = t0
					p, err := s.Round(ctx, snap)
					if err != nil {
						b.Fatal(err)
					}
					lean = p.lean
					t1, _ := threadCPU()
					cancel()
					st[4] += t1.Since(last)
					total += t1.Since(t0)
				}
				per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
				b.ReportMetric(per(st[1]), "valmatrix-cpu-µs")
				b.ReportMetric(per(st[2]), "solve-cpu-µs")
				b.ReportMetric(per(st[3]), "place-cpu-µs")
				b.ReportMetric(per(st[4]), "rest-cpu-µs")
				b.ReportMetric(per(total), "cpu-µs/op")
				if lean != (path != "standard") {
					b.Fatalf("lean path taken: %v, want %v", lean, path != "standard")
				}
			})
		}
	}
}
