package sia

import (
	"context"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// fuzzBytes reads a fuzz input one byte at a time, 0 past its end.
type fuzzBytes struct {
	data []byte
	pos  int
}

func (f *fuzzBytes) next() int {
	if f.pos >= len(f.data) {
		return 0
	}
	b := int(f.data[f.pos])
	f.pos++
	return b
}

// fuzzSnapshot decodes bytes into a (possibly invalid) snapshot: node sizes,
// jobs of every kind with table or model goodputs, current allocations and
// placements, reservations and flags.
func fuzzSnapshot(data []byte) (Snapshot, Options) {
	next := (&fuzzBytes{data: data}).next
	types := []string{"A", "B", "C"}
	snap := Snapshot{Now: t0.Add(time.Duration(next()) * time.Minute)}
	for i, n := 0, next()%6; i < n; i++ {
		snap.Nodes = append(snap.Nodes, Node{ID: fmt.Sprintf("n%d", next()%8), Type: types[next()%3], GPUs: next()%10 - 1})
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
		var stages map[string]int // a hybrid-parallel job's replica size (pipelined)
		if next()%5 == 0 {
			stages = map[string]int{types[next()%3]: next() % 5}
		}
		j.NonPreemptible = next()%5 == 0
		switch next() % 3 {
		case 0:
			tab := siatest.Table{}
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
		if stages != nil && j.Models != nil {
			j.Models = pipelined{j.Models, stages}
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
		opts.Artifact = PublishedArtifact()
	case 2:
		opts.P, opts.Lambda = 0.5, -1.1
	case 3:
		opts.NoScaleUpCap = true
	}
	fuzzExtremes(&snap, &opts, next)
	return snap, opts
}

// fuzzExtremes applies, from the bytes after the rest, the inputs of the
// classes that used to be misread: a zero Now, allow-lists and excluded
// types, counts near MaxInt, shared or missing placements, extreme options.
func fuzzExtremes(snap *Snapshot, opts *Options, next func() int) {
	flags := next() | next()<<8
	pick := func() *Job {
		if len(snap.Jobs) == 0 {
			return nil
		}
		return &snap.Jobs[next()%len(snap.Jobs)]
	}
	types := []string{"A", "B", "C", "Z"}
	huge := []int{math.MaxInt, math.MaxInt - 1, math.MaxInt / 2, math.MinInt, 1 << 40}
	if flags&1 != 0 {
		snap.Now = time.Time{}
	}
	if j := pick(); flags&2 != 0 && j != nil {
		j.Types = nil
		for k, m := 0, next()%3; k < m; k++ {
			j.Types = append(j.Types, types[next()%4])
		}
		if j.Types == nil {
			j.Types = []string{}
		}
	}
	if j := pick(); flags&4 != 0 && j != nil {
		if tab, ok := unpipelined(j.Models).(siatest.Table); ok {
			tab[types[next()%3]] = map[int]float64{}
		}
	}
	if j := pick(); flags&8 != 0 && j != nil {
		switch next() % 4 {
		case 0:
			j.MinGPUs = huge[next()%len(huge)]
		case 1:
			j.MaxGPUs = huge[next()%len(huge)]
		case 2:
			j.GPUs = huge[next()%len(huge)]
		case 3:
			if j.Models != nil {
				j.Models = pipelined{j.Models, map[string]int{types[next()%3]: huge[next()%len(huge)]}}
			}
		}
	}
	if j := pick(); flags&16 != 0 && j != nil {
		j.State.PeakReplicas, j.State.Restarts = huge[next()%len(huge)], huge[next()%len(huge)]
		j.State.RestartCost = time.Duration(huge[next()%len(huge)])
	}
	if a, b := pick(), pick(); flags&32 != 0 && a != nil && b != nil {
		b.State.Current = a.State.Current // the same GPUs twice
	}
	if j := pick(); flags&64 != 0 && j != nil {
		j.State.Current.Placement = nil
	}
	if flags&128 != 0 {
		opts.ScaleUpFactor = []float64{MaxScaleUpFactor, math.Inf(1), math.NaN(), 1}[next()%4]
		opts.MaxGPUsPerJob = huge[next()%len(huge)]
	}
	if flags&256 != 0 {
		opts.P = []float64{-MaxP, MaxP, -1e-300, math.NaN()}[next()%4]
		opts.Lambda = []float64{MaxLambda, -MaxLambda, 1.0000001, -1e-300}[next()%4]
	}
	if n := next(); flags&512 != 0 && len(snap.Nodes) > 0 {
		snap.Nodes[n%len(snap.Nodes)].GPUs = huge[next()%len(huge)]
	}
	if j := pick(); flags&1024 != 0 && j != nil {
		j.Submitted = []time.Time{snap.Now.Add(time.Nanosecond), time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), snap.Now}[next()%3]
	}
	if flags&2048 != 0 && len(snap.Quotas) > 0 {
		snap.Quotas[0].Limit = huge[next()%len(huge)]
	}
	if flags&4096 != 0 {
		snap.Reserved = map[string]int{types[next()%3]: huge[next()%len(huge)]}
	}
}

// checkAdmissible asserts that no matrix entry and no allocation uses a
// type the job may not use (Types, bootstrap.Excluded).
func checkAdmissible(t *testing.T, snap *Snapshot, p *Plan) {
	t.Helper()
	ok := func(j *Job, ty string) bool {
		if j.Types != nil && !slices.Contains(j.Types, ty) {
			return false
		}
		_, src := j.Models.Model(ty)
		return src != bootstrap.Excluded
	}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		for _, e := range p.matrix.Rows[i].Entries {
			if !ok(j, e.Config.Type) {
				t.Fatalf("job %s: excluded type %s offered (%v)", j.ID, e.Config.Type, e.Config)
			}
		}
		if d := p.Decisions[i]; d.Allocation.Running() && !ok(j, d.Allocation.Type) {
			t.Fatalf("job %s: given excluded type %s", j.ID, d.Allocation.Type)
		}
		if d := p.Decisions[i]; (d.Action == Queue || d.Action == Preempt) != (d.Reason != ReasonNone) {
			t.Fatalf("job %s: action %v with reason %v", j.ID, d.Action, d.Reason)
		}
	}
}

// FuzzRound: Round never panics on arbitrary snapshots; when it accepts one,
// the plan keeps every invariant.
func FuzzRound(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{5, 3, 1, 0, 4, 2, 1, 8, 0, 0, 3, 1, 0, 5, 2, 3, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("the quick brown fox jumps over the lazy dog, repeatedly, to fill a snapshot"))
	f.Add([]byte{2, 2, 0, 0, 5, 1, 1, 9, 1, 2, 0, 3, 2, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0, 1, 100, 0, 0, 4})
	// The classes of issue 10: every extreme flag set in turn.
	base := []byte{5, 3, 1, 0, 4, 2, 1, 8, 0, 0, 3, 1, 0, 5, 2, 3, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 0, 0, 1, 3, 2, 0, 1, 1, 1, 0, 2, 2}
	for bit := 0; bit < 13; bit++ {
		v := 1 << bit
		seed := append(append([]byte(nil), base...), byte(v), byte(v>>8), 1, 2, 3, 0, 1, 2)
		f.Add(seed)
	}
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
		checkAdmissible(t, &snap, &p)
		if !math.IsNaN(p.Objective) && len(snap.Jobs) <= 4 && len(p.filled) > 0 {
			// beyond the charged problem: bounded by the uncharged one
			best, _ := bruteForce(uncharged(p.matrix))
			tol := 1e-6 * math.Max(1, math.Abs(best))
			if better(p.Objective, best, p.matrix.Sense) && math.Abs(best-p.Objective) > tol {
				t.Fatalf("filled objective %v beyond the uncharged optimum %v", p.Objective, best)
			}
			if better(best, p.Bound, p.matrix.Sense) && math.Abs(best-p.Bound) > tol {
				t.Fatalf("filled plan's bound %v below the uncharged optimum %v", p.Bound, best)
			}
			if p.Status == StatusOptimal && math.Abs(best-p.Objective) > tol {
				t.Fatalf("filled plan optimal with objective %v, uncharged optimum %v", p.Objective, best)
			}
		} else if !math.IsNaN(p.Objective) && len(snap.Jobs) <= 4 {
			best, _ := bruteForce(p.matrix)
			if math.Abs(best-p.Objective) > 1e-6*math.Max(1, math.Abs(best)) {
				t.Fatalf("objective %v, brute force %v", p.Objective, best)
			}
		}
	})
}
