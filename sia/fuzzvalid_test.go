package sia

import (
	"context"
	"errors"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// fuzzValidSnapshot decodes bytes into a snapshot that meets the documented
// rules (unique IDs, running jobs on GPUs they really hold, pinned jobs
// within their bounds) but is otherwise arbitrary: node shapes, kinds,
// allow-lists, excluded types, reservations, quotas, counts near MaxInt,
// extreme options, and an expired deadline. Round must accept it (or find
// the pins infeasible) and return a plan that keeps every invariant.
func fuzzValidSnapshot(data []byte) (Snapshot, Options, bool) {
	next := (&fuzzBytes{data: data}).next
	types := []string{"A", "B", "C"}
	sizes := []int{1, 2, 4, 8, 4, 8, 6, 3}
	snap := Snapshot{Now: t0.Add(time.Duration(1+next()) * time.Hour)}
	type gpuSlot struct {
		g    GPU
		used bool
	}
	free := map[string][]*gpuSlot{}
	perNode := map[string]int{}
	for ti, t := range types[:1+next()%3] {
		perNode[t] = sizes[next()%len(sizes)]
		for n := 0; n < 1+next()%3; n++ {
			id := fmt.Sprintf("%s%d", t, n)
			snap.Nodes = append(snap.Nodes, Node{ID: id, Type: t, GPUs: perNode[t]})
			for k := 0; k < perNode[t]; k++ {
				free[t] = append(free[t], &gpuSlot{g: GPU{id, k}})
			}
		}
		_ = ti
	}
	huge := []int{math.MaxInt, math.MaxInt / 2, 1 << 40}
	pinnedOn := map[string]int{}
	for i, n := 0, next()%9; i < n; i++ {
		j := Job{ID: fmt.Sprintf("j%d", i), Kind: Kind(next() % 3), Submitted: snap.Now.Add(-time.Duration(next()) * time.Minute)}
		switch j.Kind {
		case Rigid:
			j.GPUs = 1 + next()%12
		default:
			j.MinGPUs = next() % 4
			if m := next() % 6; m > 0 {
				j.MaxGPUs = max(m, j.MinGPUs)
			}
		}
		var stages map[string]int // a hybrid-parallel job's replica size (pipelined)
		if next()%6 == 0 {
			stages = map[string]int{}
			for _, t := range types {
				if next()%2 == 0 {
					stages[t] = 1 + next()%2
				}
			}
			if len(stages) == 0 {
				stages = nil
			}
		}
		if next()%5 == 0 {
			j.Types = []string{types[next()%3]}
			if next()%2 == 0 {
				j.Types = append(j.Types, "Z")
			}
		}
		switch next() % 3 {
		case 0, 1:
			tab := siatest.Table{}
			for _, t := range types {
				switch next() % 4 {
				case 0: // no model yet
				case 1:
					tab[t] = map[int]float64{} // excluded
				default:
					row := map[int]float64{}
					g := float64(1+next()) / 32
					for r := 1; r <= 16; r++ {
						if next()%3 != 0 {
							row[r] = g * float64(r) * (1 - float64(next()%8)/16)
						}
					}
					tab[t] = row
				}
			}
			j.Models = tab
		default:
			st := bootstrap.Static{}
			for _, t := range types {
				if next()%2 == 0 {
					st[t] = goodput.Model{
						Params:    goodput.Params{AlphaC: 0.01 + float64(next())/1e4, BetaC: 1e-4 + float64(next())/1e6, AlphaN: 0.01 + float64(next())/1e3, BetaN: 0.001, AlphaR: 0.005, BetaR: 0.0005, Gamma: 1 + float64(next()%3)},
						Grad:      goodput.GradStats{Sqr: 1, Var: float64(next())},
						InitBatch: 32, MaxBatch: 32 * (1 + next()%64), Limits: goodput.Limits{MinLocalBatch: 1 + next()%8, MaxLocalBatch: 8 + next()*4},
					}
				}
			}
			j.Models = st
		}
		if stages != nil {
			j.Models = pipelined{j.Models, stages}
		}
		// Running on GPUs it really holds.
		if next()%2 == 0 {
			t := types[next()%len(types)]
			want := 1 + next()%4
			if j.Kind == Rigid {
				want = j.GPUs
			}
			if p := stages[t]; p > 0 {
				want = p * max(1, want/p)
			}
			var got []GPU
			for _, s := range free[t] {
				if len(got) < want && !s.used {
					s.used = true
					got = append(got, s.g)
				}
			}
			if len(got) == want && (stages == nil || stages[t] > 0) && (j.Kind != Rigid || want == j.GPUs) {
				nodes := map[string]bool{}
				for _, g := range got {
					nodes[g.Node] = true
				}
				j.State.Current = Allocation{Type: t, Nodes: len(nodes), GPUs: want, Placement: got}
				j.State.PeakReplicas = want
				if next()%3 == 0 {
					// Pinned: make its bounds, types and models admit it.
					j.State.Restoring = next()%2 == 0
					j.NonPreemptible = !j.State.Restoring
					if j.Kind != Rigid {
						j.MinGPUs, j.MaxGPUs = min(j.MinGPUs, want), max(j.MaxGPUs, want)
					}
					if j.Types != nil && !slices.Contains(j.Types, t) {
						j.Types = append(j.Types, t)
					}
					if tab, ok := unpipelined(j.Models).(siatest.Table); ok && tab[t] != nil && len(tab[t]) == 0 {
						tab[t] = map[int]float64{want: 1}
					}
					pinnedOn[t] += want
				}
			} else {
				for _, s := range free[t] {
					for _, g := range got {
						if s.g == g {
							s.used = false
						}
					}
				}
			}
		}
		j.State.Restarts = next() % 4
		switch next() % 16 {
		case 0:
			j.State.PeakReplicas = huge[next()%len(huge)]
		case 1:
			if !j.State.Current.Running() && j.Kind != Rigid {
				j.MinGPUs, j.MaxGPUs = huge[next()%len(huge)], 0
			}
		case 2:
			j.State.RestartCost = time.Duration(huge[next()%len(huge)])
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	for _, t := range types {
		if c := len(free[t]); c > 0 && next()%4 == 0 {
			snap.Reserved = map[string]int{t: next() % (c - pinnedOn[t] + 1)}
		}
	}
	if len(snap.Jobs) > 0 && next()%3 == 0 {
		q := Quota{Name: "q", Type: []string{"", "A"}[next()%2], Limit: next() % 8}
		for i := range snap.Jobs {
			if next()%2 == 0 {
				q.Jobs = append(q.Jobs, snap.Jobs[i].ID)
			}
		}
		snap.Quotas = []Quota{q}
	}
	opts := Options{Seed: uint64(next() % 3), Parallelism: next() % 3, NoScaleUpCap: next()%2 == 0}
	switch next() % 5 {
	case 1:
		opts.Artifact = PublishedArtifact()
	case 2:
		opts.P, opts.Lambda = 0.5, -1.1
	case 3:
		opts.P, opts.Lambda = -MaxP, MaxLambda
	case 4:
		opts.ScaleUpFactor, opts.MaxGPUsPerJob = MaxScaleUpFactor, math.MaxInt
	}
	return snap, opts, next()%3 == 0
}

// FuzzRoundValid: on snapshots that meet the rules, Round never fails but
// for infeasible pins, never panics, and its plan never gives a GPU twice,
// moves a pinned job, breaks a bound or a capacity, or uses a type the job
// may not use — with or without time to finish.
func FuzzRoundValid(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 2, 1, 2, 3, 1, 5, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, repeatedly, to fill a snapshot of many jobs"))
	for k := 0; k < 8; k++ {
		b := make([]byte, 160)
		for i := range b {
			b[i] = byte((i*37 + k*101) % 251)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, opts, expired := fuzzValidSnapshot(data)
		s, err := New(&opts)
		if err != nil {
			t.Fatalf("options %+v: %v", opts, err)
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if expired {
			ctx, cancel = context.WithTimeout(ctx, 0)
		}
		defer cancel()
		p, err := s.Round(ctx, snap)
		if errors.Is(err, ErrInfeasible) {
			return
		}
		if err != nil {
			t.Fatalf("valid snapshot rejected: %v", err)
		}
		checkPlan(t, &snap, &p)
		checkAdmissible(t, &snap, &p)
	})
}
