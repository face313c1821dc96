package sia

import "testing"

// BenchmarkMatrix measures newMatrix alone at 2048 GPUs and 1500 jobs.
func BenchmarkMatrix(b *testing.B) {
	snap, err := steadySnapshot(32, 1500, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := newMatrix(&snap, nil); err != nil {
			b.Fatal(err)
		}
	}
}
