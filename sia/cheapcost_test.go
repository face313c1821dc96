package sia

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// BenchmarkCheapRows measures a queued job's cheap row (its smallest valid
// configuration per type, rowCheap) on 5,000 jobs: the phased matrix with
// every queued job's cheap row less the one with none, per row and type
// (cheapRowCostPerType is sized from it).
func BenchmarkCheapRows(b *testing.B) {
	snap := largeSnapshot(b, 182, 6000, 1)
	o := (&Options{}).WithDefaults()
	_, queued, _ := roundShape(&snap, &cluster{capacity: map[string]int{}})
	late := func() time.Time { return time.Now().Add(time.Hour) }
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	build := func(rows int) time.Duration {
		cl, err := validateSnapshot(&snap, &o, true)
		if err != nil {
			b.Fatal(err)
		}
		cl.clk = newRoundClock(context.Background(), time.Now(), late)
		cl.clk.keepEnd = time.Now()                   // kept rows bare
		cl.floorRows, cl.capRows = rows, max(rows, 1) // below queued: no full rows after
		c0, _ := threadCPU()
		if _, err := buildMatrix(context.Background(), &snap, &o, cl, true); err != nil {
			b.Fatal(err)
		}
		c1, _ := threadCPU()
		return c1.Since(c0)
	}
	var all, none time.Duration
	for i := 0; i < b.N; i++ {
		all += build(queued - 1)
		none += build(1)
	}
	b.ReportMetric(float64((all-none).Nanoseconds())/float64(b.N)/float64(queued-2)/3/1e3, "µs/row/type")
}
