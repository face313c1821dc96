package sia

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// fuzzSnapshot decodes bytes into a (possibly invalid) snapshot: node sizes,
// jobs of every kind with table or model goodputs, current allocations and
// placements, reservations and flags.
func fuzzSnapshot(data []byte) (Snapshot, Options) {
	pos := 0
	next := func() int {
		if pos >= len(data) {
			return 0
		}
		b := int(data[pos])
		pos++
		return b
	}
	types := []string{"A", "B", "C"}
	snap := Snapshot{Now: t0.Add(time.Duration(next()) * time.Minute)}
	for i, n := 0, next()%6; i < n; i++ {
		snap.Cluster.Nodes = append(snap.Cluster.Nodes, Node{ID: fmt.Sprintf("n%d", next()%8), Type: types[next()%3], GPUs: next()%10 - 1})
	}
	if next()%4 == 0 {
		snap.Reserved = map[string]int{types[next()%3]: next()%6 - 1}
	}
	for i, n := 0, next()%7; i < n; i++ {
		j := Job{ID: fmt.Sprintf("j%d", next()%8), Kind: Kind(next() % 4), Submitted: t0.Add(time.Duration(next()) * time.Second)}
		j.MinGPUs, j.MaxGPUs = next()%5-1, next()%9-1
		if j.Kind == Rigid || next()%8 == 0 {
			j.GPUs = next() % 13
		}
		if next()%5 == 0 {
			j.ReplicaSize = map[string]int{types[next()%3]: next() % 5}
		}
		j.NonPreemptible = next()%5 == 0
		switch next() % 3 {
		case 0:
			tab := Table{}
			for k, m := 0, next()%4; k < m; k++ {
				t := types[next()%3]
				if tab[t] == nil {
					tab[t] = map[int]float64{}
				}
				tab[t][1<<(next()%5)] = float64(next()) / 16
			}
			j.Models = tab
		case 1:
			st := bootstrap.Static{}
			for k, m := 0, next()%3; k < m; k++ {
				st[types[next()%3]] = goodput.Model{
					Params:    goodput.Params{AlphaC: float64(next()) / 1000, BetaC: float64(next()) / 1e5, AlphaN: float64(next()) / 100, BetaN: float64(next()) / 1e4, AlphaR: float64(next()) / 1000, BetaR: float64(next()) / 1e5, Gamma: 1 + float64(next()%10)},
					Grad:      goodput.GradStats{Sqr: float64(next()) / 10, Var: float64(next())},
					InitBatch: next()%64 + 1, MaxBatch: next() * 16, Limits: goodput.Limits{MinLocalBatch: next() % 16, MaxLocalBatch: next() * 2},
				}
			}
			j.Models = st
		}
		if next()%2 == 0 {
			c := Allocation{Type: types[next()%3], Nodes: next() % 3, GPUs: next() % 9}
			for k, m := 0, next()%5; k < m; k++ {
				c.Placement = append(c.Placement, GPU{Node: fmt.Sprintf("n%d", next()%8), Index: next() % 9})
			}
			j.State.Current = c
			j.State.Restoring = next()%3 == 0
		}
		j.State.Restarts = next()%4 - 1
		j.State.PeakReplicas = next() % 9
		snap.Jobs = append(snap.Jobs, j)
	}
	if next()%3 == 0 {
		q := Quota{Name: "q", Type: []string{"", "A", "B"}[next()%3], Limit: next()%6 - 1}
		for k, m := 0, next()%3; k < m; k++ {
			q.Jobs = append(q.Jobs, fmt.Sprintf("j%d", next()%8))
		}
		snap.Quotas = []Quota{q}
	}
	opts := Options{Seed: uint64(next())}
	switch next() % 4 {
	case 1:
		opts.Variant = Artifact
	case 2:
		opts.P, opts.Lambda = 0.5, -1.1
	case 3:
		opts.NoScaleUpCap = true
	}
	return snap, opts
}

// FuzzRound: Round never panics on arbitrary snapshots; when it accepts one,
// the plan keeps every invariant.
func FuzzRound(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 3, 1, 0, 4, 2, 1, 8, 0, 0, 3, 1, 0, 5, 2, 3, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, repeatedly, to fill a snapshot"))
	f.Add([]byte{2, 2, 0, 0, 5, 1, 1, 9, 1, 2, 0, 3, 2, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1, 100, 0, 0, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, opts := fuzzSnapshot(data)
		s, err := New(&opts)
		if err != nil {
			return
		}
		p, err := s.Round(context.Background(), snap)
		if err != nil {
			return
		}
		checkPlan(t, &snap, &p)
		if !math.IsNaN(p.Objective) && len(snap.Jobs) <= 4 {
			best, _ := bruteForce(p.Matrix)
			if math.Abs(best-p.Objective) > 1e-6*math.Max(1, math.Abs(best)) {
				t.Fatalf("objective %v, brute force %v", p.Objective, best)
			}
		}
	})
}
