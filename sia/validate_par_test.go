package sia

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// parMutation breaks (or, for a few, keeps valid) job i of a snapshot in
// one way a host could: each kind of rule validation checks, on one job
// (or across jobs, through job i and another).
type parMutation struct {
	name    string
	running bool // needs a running job i
	apply   func(s *Snapshot, i int, rng *rand.Rand)
}

// otherRunning returns a running job of s other than i (-1: none).
func otherRunning(s *Snapshot, i int, rng *rand.Rand) int {
	for range 2 * len(s.Jobs) {
		if k := rng.IntN(len(s.Jobs)); k != i && s.Jobs[k].State.Current.Running() {
			return k
		}
	}
	return -1
}

// otherType returns a type of the cluster other than t ("" if none).
func otherType(s *Snapshot, t string) string {
	for _, n := range s.Nodes {
		if n.Type != t {
			return n.Type
		}
	}
	return ""
}

var parMutations = []parMutation{
	{"empty ID", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].ID = "" }},
	{"duplicate ID", false, func(s *Snapshot, i int, rng *rand.Rand) { s.Jobs[i].ID = s.Jobs[rng.IntN(len(s.Jobs))].ID }},
	{"kind", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Kind = 7 }},
	{"nil models", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Models = nil }},
	{"min", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].MinGPUs = -1 }},
	{"max", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].MaxGPUs = -2 }},
	{"min above max", false, func(s *Snapshot, i int, _ *rand.Rand) {
		s.Jobs[i].Kind, s.Jobs[i].GPUs, s.Jobs[i].MinGPUs, s.Jobs[i].MaxGPUs = Adaptive, 0, 5, 3
	}},
	{"rigid count", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Kind, s.Jobs[i].GPUs = Rigid, 0 }},
	{"adaptive count", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Kind, s.Jobs[i].GPUs = Adaptive, 2 }},
	{"submitted late", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Submitted = s.Now.Add(time.Second) }},
	{"empty types", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Types = []string{} }},
	{"empty type name", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Types = []string{s.Nodes[0].Type, ""} }},
	{"type twice", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].Types = []string{s.Nodes[0].Type, s.Nodes[0].Type} }},
	{"restarts", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Restarts = -1 }},
	{"restart cost", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.RestartCost = -time.Second }},
	{"peak", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.PeakReplicas = -1 }},
	{"negative current", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current = Allocation{GPUs: -1} }},
	{"queued with type", false, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current = Allocation{Type: s.Nodes[0].Type} }},
	{"queued restoring", false, func(s *Snapshot, i int, _ *rand.Rand) {
		s.Jobs[i].State.Current, s.Jobs[i].State.Restoring = Allocation{}, true
	}},
	{"unknown type", true, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current.Type = "no-such-type" }},
	{"zero nodes", true, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current.Nodes = 0 }},
	{"above capacity", true, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current.GPUs = 1 << 40 }},
	{"too many nodes", true, func(s *Snapshot, i int, _ *rand.Rand) {
		c := &s.Jobs[i].State.Current
		c.Nodes = c.GPUs
		c.GPUs += 1 << 20
		c.Nodes += 1 << 20
	}},
	{"no placement", true, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current.Placement = nil }},
	{"short placement", true, func(s *Snapshot, i int, _ *rand.Rand) {
		c := &s.Jobs[i].State.Current
		c.Placement = c.Placement[:len(c.Placement)-1]
	}},
	{"unknown node", true, func(s *Snapshot, i int, rng *rand.Rand) {
		c := &s.Jobs[i].State.Current
		c.Placement[rng.IntN(len(c.Placement))].Node = "no-such-node"
	}},
	{"node of another type", true, func(s *Snapshot, i int, rng *rand.Rand) {
		c := &s.Jobs[i].State.Current
		for _, n := range s.Nodes {
			if n.Type != c.Type {
				c.Placement[rng.IntN(len(c.Placement))] = GPU{Node: n.ID, Index: 0}
				return
			}
		}
	}},
	{"index", true, func(s *Snapshot, i int, rng *rand.Rand) {
		c := &s.Jobs[i].State.Current
		c.Placement[rng.IntN(len(c.Placement))].Index = 99
	}},
	{"listed twice", true, func(s *Snapshot, i int, _ *rand.Rand) {
		c := &s.Jobs[i].State.Current
		if len(c.Placement) > 1 {
			c.Placement[len(c.Placement)-1] = c.Placement[0]
		}
	}},
	{"held by another", true, func(s *Snapshot, i int, rng *rand.Rand) {
		c := &s.Jobs[i].State.Current
		if k := otherRunning(s, i, rng); k >= 0 && s.Jobs[k].State.Current.Type == c.Type && len(s.Jobs[k].State.Current.Placement) > 0 {
			c.Placement[0] = s.Jobs[k].State.Current.Placement[0]
		}
	}},
	{"spans", true, func(s *Snapshot, i int, _ *rand.Rand) { s.Jobs[i].State.Current.Nodes++ }},
	{"pinned above max", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		j.NonPreemptible, j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs = true, Adaptive, 0, 0, max(1, j.State.Current.GPUs-1)
	}},
	{"pinned rigid count", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		j.State.Restoring, j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs = true, Rigid, j.State.Current.GPUs+1, 0, 0
	}},
	{"pinned off its types", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		if t := otherType(s, j.State.Current.Type); t != "" {
			j.NonPreemptible, j.Types = true, []string{t}
		}
	}},
	{"pinned, type excluded", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		j.NonPreemptible = true
		j.Models = bootstrap.Static{"only-" + j.State.Current.Type: goodput.Model{Stages: 2}}
	}},
	{"type excluded, unpinned (valid)", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		j.NonPreemptible, j.State.Restoring = false, false
		j.Models = bootstrap.Static{"only-" + j.State.Current.Type: goodput.Model{Stages: 2}}
	}},
	{"negative stages", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		m, _ := j.Models.Model(j.State.Current.Type)
		m.Stages = -1
		j.Models = bootstrap.Static{j.State.Current.Type: m}
	}},
	{"pinned, part of a replica", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		m, _ := j.Models.Model(j.State.Current.Type)
		m.Stages = j.State.Current.GPUs + 1
		j.Models, j.NonPreemptible = bootstrap.Static{j.State.Current.Type: m}, true
	}},
	{"pins above capacity", true, func(s *Snapshot, i int, _ *rand.Rand) {
		t := s.Jobs[i].State.Current.Type
		for k := range s.Jobs {
			if c := s.Jobs[k].State.Current; c.Type == t && k >= i {
				s.Jobs[k].NonPreemptible = true
			}
		}
		s.Reserved = map[string]int{t: 1 << 30}
	}},
	{"pins above a quota", true, func(s *Snapshot, i int, _ *rand.Rand) {
		s.Jobs[i].NonPreemptible = true
		s.Quotas = append(s.Quotas, Quota{Name: "q" + strconv.Itoa(i), Jobs: []string{s.Jobs[i].ID}, Limit: 0})
	}},
	{"pinned (valid)", true, func(s *Snapshot, i int, _ *rand.Rand) {
		j := &s.Jobs[i]
		j.NonPreemptible, j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs, j.Types = true, Adaptive, 0, 0, 0, nil
	}},
}

// mutate returns a copy of base with n of parMutations applied, each to
// a random job (a running one where it needs one), deep enough that base
// is never changed.
func mutate(base Snapshot, n int, rng *rand.Rand) (Snapshot, []string) {
	s := base
	s.Jobs = slices.Clone(base.Jobs)
	for i := range s.Jobs {
		j := &s.Jobs[i]
		j.Types = slices.Clone(j.Types)
		j.State.Current.Placement = slices.Clone(j.State.Current.Placement)
	}
	s.Reserved, s.Quotas = nil, nil
	var names []string
	for range n {
		m := parMutations[rng.IntN(len(parMutations))]
		i := rng.IntN(len(s.Jobs))
		if m.running {
			if i = otherRunning(&s, -1, rng); i < 0 || len(s.Jobs[i].State.Current.Placement) == 0 {
				continue // an earlier break took its GPUs
			}
		}
		m.apply(&s, i, rng)
		names = append(names, m.name+"@"+strconv.Itoa(i))
	}
	return s, names
}

// TestValidateParallelTwin: validation with the jobs checked on 2 to 8
// goroutines (checkJobsParallel) accepts exactly the snapshots the
// sequential checks accept, with the same cluster view, and rejects the
// others with the same first error, on random snapshots broken in every
// way validation checks (one to three breaks on random jobs, so the first
// error lies in any chunk and often several chunks fail).
func TestValidateParallelTwin(t *testing.T) {
	base := fleetSnapshot(t, placeFleet{Jobs: 300, GPUs: 600, Types: 4, Seed: 3})
	require.Greater(t, len(base.Jobs), 200)
	small := base
	small.Jobs = base.Jobs[:17] // chunks of 2 to 8 jobs
	o := (&Options{}).WithDefaults()
	rng := rand.New(rand.NewPCG(11, 13))
	valid, kinds := 0, map[string]bool{}
	for c := range 400 {
		b := base
		if c%4 == 3 {
			b = small
		}
		snap, names := mutate(b, rng.IntN(4), rng)
		want, wantErr := validateWith(&snap, &o, true, 0)
		if wantErr == nil {
			valid++
		} else {
			kinds[wantErr.Error()[:min(len(wantErr.Error()), 40)]] = true
		}
		for par := 2; par <= 8; par++ {
			got, err := validateWith(&snap, &o, true, par)
			require.Equal(t, wantErr, err, "case %d %v par %d", c, names, par)
			if wantErr != nil {
				continue
			}
			assert.Equal(t, want.cur, got.cur, "case %d par %d: models", c, par)
			assert.Equal(t, want.curAt, got.curAt, "case %d par %d", c, par)
			assert.Equal(t, want.counts, got.counts, "case %d par %d", c, par)
			assert.Equal(t, want.gpus.owner, got.gpus.owner, "case %d par %d", c, par)
		}
	}
	assert.Greater(t, valid, 40, "valid snapshots among the cases")
	assert.Greater(t, len(kinds), 20, "kinds of first errors among the cases")
}

// TestRoundParallelValidation: Round with Options.Parallelism 4 rejects a
// broken snapshot with the error Round with no parallelism gives, through
// validateSnapshot's choice of workers (300 jobs: 4 of them).
func TestRoundParallelValidation(t *testing.T) {
	base := fleetSnapshot(t, placeFleet{Jobs: 300, GPUs: 600, Types: 4, Seed: 5})
	require.GreaterOrEqual(t, validationWorkers(&Options{Parallelism: 4}, len(base.Jobs)), 4)
	seq, err := New(nil)
	require.NoError(t, err)
	par, err := New(&Options{Parallelism: 4})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(17, 19))
	rejected := 0
	for c := range 30 {
		snap, names := mutate(base, 1+rng.IntN(3), rng)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // validation's answer is all this test reads
		_, want := seq.Round(ctx, snap)
		_, got := par.Round(ctx, snap)
		require.Equal(t, want, got, "case %d %v", c, names)
		if want != nil {
			rejected++
		}
	}
	assert.Greater(t, rejected, 15)
}
