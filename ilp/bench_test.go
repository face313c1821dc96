package ilp_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/ilp/ilptest"
)

// BenchmarkSolve times Solve on Sia-shaped instances (ilptest.Generate) at
// 64, 512 and 2048 GPUs with 30 to 1500 jobs, for p = −0.5 (values rounded
// to 0.01, grid declared) and p = +0.5 (unrounded). Each iteration solves the
// next of 8 seeds with a 2 s deadline; "optimal" reports the share of solves
// proven optimal, and cpu-ns/op the process's CPU time per solve.
func BenchmarkSolve(b *testing.B) {
	for _, scale := range []int{1, 8, 32} {
		for _, jobs := range []int{30, 300, 1500} {
			for _, pw := range []float64{-0.5, 0.5} {
				name := fmt.Sprintf("gpus=%d/jobs=%d/p=%+.1f", 64*scale, jobs, pw)
				b.Run(name, func(b *testing.B) {
					var ps []*ilp.Problem
					for seed := uint64(100); seed < 108; seed++ {
						ps = append(ps, ilptest.Generate(ilptest.Config{Scale: scale, Jobs: jobs, Seed: seed, Power: pw, PinFrac: 0.05}))
					}
					optimal := 0
					b.ResetTimer()
					c0 := processCPU()
					for i := 0; i < b.N; i++ {
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
						sol, err := ilp.Solve(ctx, ps[i%len(ps)], nil)
						cancel()
						if err != nil {
							b.Fatal(err)
						}
						if sol.Status == ilp.Optimal {
							optimal++
						}
					}
					b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
					b.ReportMetric(float64(optimal)/float64(b.N), "optimal")
				})
			}
		}
	}
}

// processCPU is the CPU time of the process (user and system): on a shared
// machine it varies less than the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSolveWarm times a re-solve of the same round warm-started from
// its optimum (the previous round's assignment in the steady state).
func BenchmarkSolveWarm(b *testing.B) {
	for _, scale := range []int{1, 32} {
		p := ilptest.Generate(ilptest.Config{Scale: scale, Jobs: 50 * scale, Seed: 7, Power: -0.5, PinFrac: 0.05})
		sol, err := ilp.Solve(context.Background(), p, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("gpus=%d", 64*scale), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := ilp.Solve(context.Background(), p, &ilp.Settings{WarmStart: sol.Assignment}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
