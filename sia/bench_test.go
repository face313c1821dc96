package sia

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// BenchmarkRound measures whole rounds (validation, goodput matrix, exact
// allocation, placement) on the heterogeneous cluster scaled 1×, 8× and 32×
// with 20, 300 and 1500 active jobs in a steady state (after four rounds).
func BenchmarkRound(b *testing.B) {
	for _, c := range []struct {
		name    string
		k, jobs int
	}{{"gpus=64", 1, 20}, {"gpus=512", 8, 300}, {"gpus=2048", 32, 1500}} {
		b.Run(c.name, func(b *testing.B) {
			snap, err := steadySnapshot(c.k, c.jobs, 1)
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			benchCPU(b, func() error {
				_, err := s.Round(ctx, snap)
				return err
			})
		})
	}
}

// benchCPU runs op b.N times on one locked OS thread, failing b on its
// first error, and reports the allocations and the thread's CPU time per
// op ("cpu-µs/op"): on a shared machine the wall time per op says more
// about the load than the code.
func benchCPU(b *testing.B, op func() error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	c0, _ := threadCPU()
	for i := 0; i < b.N; i++ {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	if c1, ok := threadCPU(); ok {
		b.ReportMetric(float64(c1.Since(c0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// BenchmarkRoundDeadline runs the 2048-GPU round under a 20 ms context
// deadline: the time per round shows how far past the deadline Round
// returns (with a Feasible plan).
func BenchmarkRoundDeadline(b *testing.B) {
	snap, err := steadySnapshot(32, 1500, 1)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := s.Round(ctx, snap)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
}
