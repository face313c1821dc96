package bootstrap

import (
	"testing"

	"github.com/sia-sched/sia/goodput"
)

// BenchmarkModelProjected measures Model on a projected type (what a round
// pays per job and type).
func BenchmarkModelProjected(b *testing.B) {
	tr, err := New(testSpec(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, ty := range []string{"fast", "mid", "slow"} {
		if err := tr.Seed(ty, obs(ty, 1, 1, 16), obs(ty, 1, 1, 64), obs(ty, 1, 1, 256)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := tr.Observe("mid", meas("mid", 1, 4, 128)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, src := tr.Model("fast"); src != Projected {
			b.Fatal(src)
		}
	}
}

// BenchmarkObserveNewKey measures a refit (a measurement with a new key).
func BenchmarkObserveNewKey(b *testing.B) {
	base, err := New(testSpec(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := base.Seed("mid", obs("mid", 1, 1, 16), obs("mid", 1, 1, 64), obs("mid", 1, 1, 256)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr := base.Clone()
		if refit, err := tr.Observe("mid", meas("mid", 1, 2+i%6, 128)); err != nil || !refit {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserveKnownKey measures a repeated measurement (no refit).
func BenchmarkObserveKnownKey(b *testing.B) {
	tr, err := New(testSpec(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := tr.Seed("mid", obs("mid", 1, 1, 16), obs("mid", 1, 1, 64)); err != nil {
		b.Fatal(err)
	}
	m := meas("mid", 1, 1, 64)
	g := goodput.GradStats{Sqr: 1, Var: 3}
	m.Grad = &g
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if refit, err := tr.Observe("mid", m); err != nil || refit {
			b.Fatal(err)
		}
	}
}
