package sia

// Hostile inputs a new user would try, of the classes of issue 10 (node
// shapes, excluded types, snapshot rules, numbers, times, quotas,
// determinism, a reason on every Queue decision): each either a clear
// error naming the job, node or field, or a plan that keeps every
// invariant (checkPlan, checkAdmissible).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia/siatest"
)

// hostileSnap: 8×A100 (two nodes), 4×T4, one 6-GPU L40S node; three jobs.
func hostileSnap() Snapshot {
	lin := siatest.Table{"a100": {1: 2, 2: 4, 4: 8, 8: 16, 16: 30}, "t4": {1: 1, 2: 2, 4: 4}, "l40s": {1: 1.5, 2: 3, 3: 4.5, 6: 9}}
	return Snapshot{
		Now: t0.Add(time.Hour),
		Nodes: []Node{
			{ID: "a0", Type: "a100", GPUs: 8}, {ID: "a1", Type: "a100", GPUs: 8},
			{ID: "t0", Type: "t4", GPUs: 4}, {ID: "l0", Type: "l40s", GPUs: 6},
		},
		Jobs: []Job{
			{ID: "j0", Submitted: t0, Models: lin},
			{ID: "j1", Submitted: t0, Models: lin, MinGPUs: 2, MaxGPUs: 8,
				State: JobState{Current: Allocation{Type: "a100", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}, PeakReplicas: 2}},
			{ID: "j2", Submitted: t0, Models: lin, Kind: Rigid, GPUs: 4},
		},
	}
}

func TestHostileSnapshotRejected(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(s *Snapshot)
		field string
	}{
		{"node GPUs negative", func(s *Snapshot) { s.Nodes[2].GPUs = -4 }, "Nodes[2].GPUs"},
		{"node GPUs huge", func(s *Snapshot) { s.Nodes[3].GPUs = 1 << 40 }, "Nodes[3].GPUs"},
		{"node GPUs above MaxGPUsPerNode", func(s *Snapshot) { s.Nodes[0].GPUs = configset.MaxGPUsPerNode + 1 }, "Nodes[0].GPUs"},
		{"node GPUs MinInt", func(s *Snapshot) { s.Nodes[0].GPUs = math.MinInt }, "Nodes[0].GPUs"},
		{"duplicate node ID later", func(s *Snapshot) { s.Nodes[3].ID = "a1" }, "Nodes[3].ID"},
		{"Submitted 1ns after Now", func(s *Snapshot) { s.Jobs[2].Submitted = s.Now.Add(1) }, "Jobs[2].Submitted"},
		{"Submitted year 9999", func(s *Snapshot) { s.Jobs[0].Submitted = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) }, "Jobs[0].Submitted"},
		{"MinGPUs above MaxGPUs", func(s *Snapshot) { s.Jobs[0].MinGPUs, s.Jobs[0].MaxGPUs = 3, 2 }, "Jobs[0].MinGPUs"},
		{"MinGPUs MinInt", func(s *Snapshot) { s.Jobs[0].MinGPUs = math.MinInt }, "Jobs[0].MinGPUs"},
		{"rigid GPUs negative", func(s *Snapshot) { s.Jobs[2].GPUs = -4 }, "Jobs[2].GPUs"},
		{"rigid with MinGPUs only", func(s *Snapshot) { s.Jobs[2].GPUs = 0; s.Jobs[2].MinGPUs = 4 }, "Jobs[2].GPUs"},
		{"kind negative", func(s *Snapshot) { s.Jobs[1].Kind = -1 }, "Jobs[1].Kind"},
		{"duplicate job ID last", func(s *Snapshot) { s.Jobs[2].ID = "j0" }, "Jobs[2].ID"},
		// a quota or reservation of a type no node has this round has no
		// effect (TestProbe7AbsentTypeEntries); its other rules still hold
		{"quota of a type no node has, limit -1", func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Jobs: []string{"j0"}, Type: "A100", Limit: -1}} }, "Quotas[0].Limit"},
		{"quota job wrong case", func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Jobs: []string{"J0"}, Limit: 4}} }, "Quotas[0].Jobs"},
		{"quota job with space", func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Jobs: []string{"j0 "}, Limit: 4}} }, "Quotas[0].Jobs"},
		{"quota negative limit", func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Jobs: []string{"j0"}, Limit: -1}} }, "Quotas[0].Limit"},
		{"quota limit MinInt", func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Limit: math.MinInt}} }, "Quotas[0].Limit"},
		{"reserved MinInt", func(s *Snapshot) { s.Reserved = map[string]int{"t4": math.MinInt} }, "Reserved"}, // above capacity: the whole type (TestReservedAboveCapacityWithholdsType)
		{"reserved -1 of a type no node has", func(s *Snapshot) { s.Reserved = map[string]int{"T4": -1} }, "Reserved"},
		{"reserved empty type", func(s *Snapshot) { s.Reserved = map[string]int{"": 0} }, "Reserved"},
		{"Types with empty name", func(s *Snapshot) { s.Jobs[0].Types = []string{"a100", ""} }, "Jobs[0].Types[1]"},
		{"Types twice", func(s *Snapshot) { s.Jobs[0].Types = []string{"t4", "a100", "t4"} }, "Jobs[0].Types[2]"},
		{"replica size negative", func(s *Snapshot) { s.Jobs[0].Models = pipelined{s.Jobs[0].Models, map[string]int{"a100": 2, "t4": -2}} }, "Models"},
		{"running on departed node", func(s *Snapshot) {
			s.Jobs[1].State.Current.Placement = []GPU{{"a9", 0}, {"a9", 1}}
		}, "Jobs[1].State.Current.Placement[0]"},
		{"pinned on departed node", func(s *Snapshot) {
			s.Jobs[1].NonPreemptible = true
			s.Jobs[1].State.Current.Placement = []GPU{{"a0", 0}, {"gone", 1}}
			s.Jobs[1].State.Current.Nodes = 2
		}, "Jobs[1].State.Current.Placement[1]"},
		{"pinned on departed type", func(s *Snapshot) {
			s.Jobs[1].State.Restoring = true
			s.Jobs[1].State.Current = Allocation{Type: "v100", Nodes: 1, GPUs: 2, Placement: []GPU{{"v0", 0}, {"v0", 1}}}
		}, "Jobs[1].State.Current.Type"},
		{"running without placement", func(s *Snapshot) { s.Jobs[1].State.Current.Placement = nil }, "Jobs[1].State.Current.Placement"},
		{"placement GPU index negative", func(s *Snapshot) { s.Jobs[1].State.Current.Placement[1].Index = -1 }, "Jobs[1].State.Current.Placement[1]"},
		{"placement GPU twice", func(s *Snapshot) { s.Jobs[1].State.Current.Placement[1].Index = 0 }, "Jobs[1].State.Current.Placement[1]"},
		{"current 6 GPUs on one 4-GPU node", func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "t4", Nodes: 1, GPUs: 6}
		}, "Jobs[0].State.Current.GPUs"},
		{"current 7 GPUs on the 6-GPU node", func(s *Snapshot) {
			s.Jobs[0].State.Current = Allocation{Type: "l40s", Nodes: 1, GPUs: 7}
		}, "Jobs[0].State.Current.GPUs"},
		{"current negative nodes", func(s *Snapshot) { s.Jobs[1].State.Current.Nodes = -1 }, "Jobs[1].State.Current.Nodes"},
		{"current GPUs negative", func(s *Snapshot) { s.Jobs[0].State.Current.GPUs = -2 }, "Jobs[0].State.Current.GPUs"},
		{"pinned above MaxGPUs", func(s *Snapshot) { s.Jobs[1].MaxGPUs = 1; s.Jobs[1].MinGPUs = 1; s.Jobs[1].NonPreemptible = true }, "Jobs[1].State.Current.GPUs"},
		{"pinned outside Types", func(s *Snapshot) { s.Jobs[1].Types = []string{"t4"}; s.Jobs[1].State.Restoring = true }, "Jobs[1].State.Current.Type"},
		{"restore until far future on queued", func(s *Snapshot) { s.Jobs[0].State.Restoring = true }, "Jobs[0].State.Restoring"},
		{"restarts MinInt", func(s *Snapshot) { s.Jobs[1].State.Restarts = math.MinInt }, "Jobs[1].State.Restarts"},
		{"restart cost negative", func(s *Snapshot) { s.Jobs[1].State.RestartCost = math.MinInt64 }, "Jobs[1].State.RestartCost"},
		{"model with NaN params", func(s *Snapshot) {
			s.Jobs[0].Models = bootstrap.Static{"a100": {Params: goodput.Params{AlphaC: math.NaN(), Gamma: 1}, InitBatch: 8, MaxBatch: 64, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 64}}}
		}, "Models"},
		{"model with Inf params", func(s *Snapshot) {
			s.Jobs[0].Models = bootstrap.Static{"t4": {Params: goodput.Params{AlphaC: 0.1, BetaC: math.Inf(1), Gamma: 1}, InitBatch: 8, MaxBatch: 64, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 64}}}
		}, "Models"},
		{"model with negative grad", func(s *Snapshot) {
			s.Jobs[0].Models = bootstrap.Static{"t4": {Params: goodput.Params{AlphaC: 0.1, BetaC: 0.01, Gamma: 1}, Grad: goodput.GradStats{Sqr: -1, Var: 1}, InitBatch: 8, MaxBatch: 64, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 64}}}
		}, "Models"},
	}
	sched, err := New(nil)
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := hostileSnap()
			c.edit(&s)
			p, err := sched.Round(context.Background(), s)
			require.Error(t, err, "accepted: %+v", p.Decisions)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, ie.Field, c.field, err.Error())
		})
	}
}

func TestHostileOptionsRejected(t *testing.T) {
	for name, o := range map[string]Options{
		"P +Inf":               {P: math.Inf(1)},
		"P -Inf":               {P: math.Inf(-1)},
		"P beyond MaxP":        {P: -MaxP - 1},
		"P tiny positive, λ>0": {P: 1e-300, Lambda: 1},
		"Lambda NaN":           {Lambda: math.NaN()},
		"Lambda -Inf":          {P: 1, Lambda: math.Inf(-1)},
		"Lambda huge":          {Lambda: 1e300},
		"ScaleUpFactor NaN":    {ScaleUpFactor: math.NaN()},
		"ScaleUpFactor +Inf":   {ScaleUpFactor: math.Inf(1)},
		"ScaleUpFactor -1":     {ScaleUpFactor: -1},
		"ScaleUpFactor 0.999":  {ScaleUpFactor: 0.999},
		"MaxGPUsPerJob MinInt": {MaxGPUsPerJob: math.MinInt},
		"RestartCost MinInt":   {RestartCost: math.MinInt64},
		"Parallelism -1":       {Parallelism: -1},
		"SolverMaxNodes -5":    {SolverMaxNodes: -5},
		"SolverDeadline -1ns":  {SolverDeadline: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(&o)
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.True(t, strings.HasPrefix(ie.Field, "Options."), ie.Field)
		})
	}
}

// TestHostileAccepted: unusual but valid snapshots and options give a plan
// that keeps every invariant, and the same plan when run again.
func TestHostileAccepted(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *Snapshot)
		opts Options
		// want, if not nil, checks the plan further.
		want func(t *testing.T, p *Plan)
	}{
		{name: "plain"},
		{name: "node and job IDs differing in case and space", edit: func(s *Snapshot) {
			s.Nodes = append(s.Nodes, Node{ID: "A0", Type: "a100", GPUs: 8}, Node{ID: "a0 ", Type: "a100", GPUs: 8})
			s.Jobs = append(s.Jobs, Job{ID: "J0", Submitted: t0, Models: s.Jobs[0].Models, MinGPUs: 8}, Job{ID: " j0", Submitted: t0, Models: s.Jobs[0].Models})
		}},
		{name: "node of 1 GPU and of MaxGPUsPerNode", edit: func(s *Snapshot) {
			s.Nodes = append(s.Nodes, Node{ID: "one", Type: "t4", GPUs: 1}, Node{ID: "big", Type: "l40s", GPUs: configset.MaxGPUsPerNode})
		}},
		{name: "Submitted year 1", edit: func(s *Snapshot) { s.Jobs[1].Submitted = time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC) }},
		{name: "Now far future", edit: func(s *Snapshot) { s.Now = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{name: "Now one ns after zero", edit: func(s *Snapshot) {
			s.Now = time.Time{}.Add(1)
			for i := range s.Jobs {
				s.Jobs[i].Submitted = time.Time{}
			}
		}},
		{name: "Submitted equals Now", edit: func(s *Snapshot) { s.Jobs[1].Submitted = s.Now }},
		{name: "Now in another zone", edit: func(s *Snapshot) { s.Now = s.Now.In(time.FixedZone("x", -11*3600)) }},
		{name: "RestoreUntil far future pins", edit: func(s *Snapshot) { s.Jobs[1].State.RestoreUntil = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) },
			want: func(t *testing.T, p *Plan) {
				assert.Equal(t, Keep, p.Decisions[1].Action)
				assert.True(t, p.Decisions[1].Pinned)
			}},
		{name: "RestoreUntil far past", edit: func(s *Snapshot) { s.Jobs[1].State.RestoreUntil = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{name: "MinGPUs larger than cluster", edit: func(s *Snapshot) { s.Jobs[0].MinGPUs = 1000 },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonTooLarge, p.Decisions[0].Reason) }},
		{name: "MinGPUs MaxInt", edit: func(s *Snapshot) { s.Jobs[0].MinGPUs = math.MaxInt },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonTooLarge, p.Decisions[0].Reason) }},
		{name: "MaxGPUs MaxInt", edit: func(s *Snapshot) { s.Jobs[0].MaxGPUs = math.MaxInt }},
		{name: "rigid MaxInt", edit: func(s *Snapshot) { s.Jobs[2].GPUs = math.MaxInt },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonTooLarge, p.Decisions[2].Reason) }},
		{name: "rigid 6 on the L40S node only", edit: func(s *Snapshot) {
			s.Jobs[2].GPUs = 6
			s.Jobs[2].Types = []string{"l40s"}
		}, want: func(t *testing.T, p *Plan) {
			assert.Equal(t, Start, p.Decisions[2].Action)
			assert.Equal(t, "l40s", p.Decisions[2].Allocation.Type)
		}},
		{name: "rigid 5 on 6-GPU node", edit: func(s *Snapshot) {
			s.Jobs[2].GPUs = 5
			s.Jobs[2].Types = []string{"l40s"}
			s.Jobs[2].Models = siatest.Table{"l40s": {5: 1}}
		},
			want: func(t *testing.T, p *Plan) { assert.Equal(t, Start, p.Decisions[2].Action) }},
		{name: "Types names only a type without nodes", edit: func(s *Snapshot) { s.Jobs[0].Types = []string{"h100"} },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonNoAdmissibleType, p.Decisions[0].Reason) }},
		{name: "Types in other case", edit: func(s *Snapshot) { s.Jobs[0].Types = []string{"A100", "T4"} },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonNoAdmissibleType, p.Decisions[0].Reason) }},
		{name: "running job outside its Types is moved", edit: func(s *Snapshot) { s.Jobs[1].Types = []string{"t4"} },
			want: func(t *testing.T, p *Plan) { assert.NotEqual(t, "a100", p.Decisions[1].Allocation.Type) }},
		{name: "replica size only for a type without nodes", edit: func(s *Snapshot) { s.Jobs[0].Models = pipelined{s.Jobs[0].Models, map[string]int{"h100": 2}} },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonNoAdmissibleType, p.Decisions[0].Reason) }},
		{name: "replica size larger than any node", edit: func(s *Snapshot) { s.Jobs[0].Models = pipelined{s.Jobs[0].Models, map[string]int{"a100": 32, "t4": 5}} },
			want: func(t *testing.T, p *Plan) {
				assert.Contains(t, []QueueReason{ReasonTooLarge, ReasonNoAdmissibleType}, p.Decisions[0].Reason)
			}},
		{name: "quota 0 on all types", edit: func(s *Snapshot) { s.Quotas = []Quota{{Name: "zero", Jobs: []string{"j0", "j2"}}} },
			want: func(t *testing.T, p *Plan) {
				assert.Equal(t, ReasonQuota, p.Decisions[0].Reason)
				assert.Equal(t, ReasonQuota, p.Decisions[2].Reason)
			}},
		{name: "quota limit MaxInt", edit: func(s *Snapshot) {
			s.Quotas = []Quota{{Name: "big", Jobs: []string{"j0", "j1", "j2"}, Limit: math.MaxInt}}
		}},
		{name: "quota covering no job", edit: func(s *Snapshot) { s.Quotas = []Quota{{Name: "none", Limit: 0}} }},
		{name: "two quotas same name", edit: func(s *Snapshot) {
			s.Quotas = []Quota{{Name: "q", Jobs: []string{"j0"}, Limit: 1}, {Name: "q", Jobs: []string{"j0"}, Type: "t4", Limit: 0}}
		}},
		{name: "quota above running job's holding", edit: func(s *Snapshot) { s.Quotas = []Quota{{Name: "q", Jobs: []string{"j1"}, Limit: 1}} },
			want: func(t *testing.T, p *Plan) {
				assert.Equal(t, Preempt, p.Decisions[1].Action)
				assert.Equal(t, ReasonQuota, p.Decisions[1].Reason)
			}},
		{name: "everything reserved", edit: func(s *Snapshot) { s.Reserved = map[string]int{"a100": 16, "t4": 4, "l40s": 6} },
			want: func(t *testing.T, p *Plan) { assert.Equal(t, ReasonReserved, p.Decisions[0].Reason) }},
		{name: "restarts MaxInt", edit: func(s *Snapshot) { s.Jobs[1].State.Restarts = math.MaxInt }},
		{name: "restart cost MaxInt64", edit: func(s *Snapshot) { s.Jobs[1].State.RestartCost = math.MaxInt64 }},
		{name: "peak replicas MaxInt", edit: func(s *Snapshot) { s.Jobs[1].State.PeakReplicas = math.MaxInt }},
		{name: "peak replicas MaxInt, max scale-up", edit: func(s *Snapshot) { s.Jobs[1].State.PeakReplicas = math.MaxInt },
			opts: Options{ScaleUpFactor: MaxScaleUpFactor}},
		{name: "table with +Inf goodput", edit: func(s *Snapshot) {
			s.Jobs[0].Models = siatest.Table{"a100": {1: math.Inf(1), 2: 1}, "t4": {1: 1}}
		}},
		{name: "table with NaN and negative goodput", edit: func(s *Snapshot) {
			s.Jobs[0].Models = siatest.Table{"a100": {1: math.NaN(), 2: -1}, "t4": {1: 1e308}}
		}},
		{name: "table with tiny goodput", edit: func(s *Snapshot) {
			s.Jobs[0].Models = siatest.Table{"a100": {1: 5e-324, 2: 1e-300}, "t4": {1: 1e-200}}
		}},
		{name: "MaxGPUsPerJob MaxInt", opts: Options{MaxGPUsPerJob: math.MaxInt}},
		{name: "Parallelism MaxInt", opts: Options{Parallelism: math.MaxInt}},
		{name: "Lambda at MaxLambda", opts: Options{Lambda: MaxLambda}},
		{name: "P at MaxP", opts: Options{P: MaxP, Lambda: -1}},
		{name: "P at -MaxP", opts: Options{P: -MaxP}},
		{name: "P tiny", opts: Options{P: -1e-300}},
		{name: "ScaleUpFactor MaxScaleUpFactor", opts: Options{ScaleUpFactor: MaxScaleUpFactor}},
		{name: "RestartCost MaxInt64", opts: Options{RestartCost: math.MaxInt64}},
		{name: "SolverMaxNodes 1", opts: Options{SolverMaxNodes: 1}},
		{name: "SolverDeadline 1ns", opts: Options{SolverDeadline: 1}},
		{name: "RoundTimeout 1ns", opts: Options{RoundTimeout: 1}},
		{name: "RoundTimeout none", opts: Options{RoundTimeout: -1}},
		{name: "Seed MaxUint64", opts: Options{Seed: math.MaxUint64}},
		{name: "artifact knobs", opts: Options{Artifact: PublishedArtifact()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := hostileSnap()
			if c.edit != nil {
				c.edit(&s)
			}
			sched, err := New(&c.opts)
			require.NoError(t, err)
			p, err := sched.Round(context.Background(), s)
			require.NoError(t, err)
			checkPlan(t, &s, &p)
			checkAdmissible(t, &s, &p)
			if p.Status == StatusOptimal {
				assert.False(t, math.IsNaN(p.Objective) || math.IsInf(p.Objective, 0), "optimal objective %v", p.Objective)
			}
			for _, d := range p.Decisions {
				assert.False(t, math.IsNaN(d.Goodput) || math.IsInf(d.Goodput, 0), "job %s goodput %v", d.Job, d.Goodput)
			}
			if c.want != nil {
				c.want(t, &p)
			}
			_, err = json.Marshal(p)
			require.NoError(t, err)
			if c.opts.RoundTimeout != 1 && c.opts.SolverDeadline != 1 {
				again, err := sched.Round(context.Background(), s)
				require.NoError(t, err)
				assert.Equal(t, p.Decisions, again.Decisions, "not deterministic")
			}
		})
	}
}

// TestHostileDeterministicMaps: snapshots whose maps (Reserved, replica sizes,
// Static models, quotas) have many keys give the same plan every time, and
// the same plan when the nodes of the types come in another order only
// where documented (the order of types fixes the matrix columns, not the
// allocation).
func TestHostileDeterministicMaps(t *testing.T) {
	var nodes []Node
	table := siatest.Table{}
	reserved := map[string]int{}
	replica := map[string]int{}
	for k := range 12 {
		ty := fmt.Sprintf("type%02d", k)
		nodes = append(nodes, Node{ID: ty + "-n0", Type: ty, GPUs: 1 + k%5}, Node{ID: ty + "-n1", Type: ty, GPUs: 3 + k%4})
		table[ty] = map[int]float64{1: 1 + float64(k)/10, 2: 2, 3: 2.5, 4: 3}
		reserved[ty] = k % 2
		replica[ty] = 1 + k%2
	}
	var jobs []Job
	for i := range 30 {
		j := Job{ID: fmt.Sprintf("job%d", i), Submitted: t0, Models: table}
		if i%3 == 0 {
			j.Models = pipelined{table, replica}
		}
		jobs = append(jobs, j)
	}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: nodes, Jobs: jobs, Reserved: reserved,
		Quotas: []Quota{{Name: "q", Jobs: []string{"job1", "job2", "job3"}, Limit: 3}}}
	sched, err := New(&Options{RoundTimeout: -1})
	require.NoError(t, err)
	first, err := sched.Round(context.Background(), snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &first)
	want, err := json.Marshal(first)
	require.NoError(t, err)
	for range 15 {
		p, err := sched.Round(context.Background(), snap)
		require.NoError(t, err)
		got, err := json.Marshal(p)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got))
	}
}

// TestHostileManyJobs: a round of many queued jobs on a small cluster
// under a tight deadline returns a valid plan with a reason on every
// Queue decision (memory: the matrix holds one row per job).
func TestHostileManyJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	s := hostileSnap()
	tab := s.Jobs[0].Models
	s.Jobs = s.Jobs[:0]
	for i := range 20000 {
		s.Jobs = append(s.Jobs, Job{ID: fmt.Sprintf("j%05d", i), Submitted: t0, Models: tab})
	}
	sched, err := New(nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p, err := sched.Round(ctx, s)
	require.NoError(t, err)
	started := 0
	for _, d := range p.Decisions {
		if d.Action == Queue {
			require.NotEqual(t, ReasonNone, d.Reason, d.Job)
		} else {
			started++
		}
	}
	assert.Positive(t, started, "a tight deadline must still start jobs")
}

// TestHostileJSONRoundTrip: a snapshot written to JSON and read back (jobs
// with a Tracker, with Static models, pinned, restoring, with quotas and
// reservations, times in another zone) plans exactly as the original, and
// a plan read back equals the plan written (but its Matrix).
func TestHostileJSONRoundTrip(t *testing.T) {
	tr, err := bootstrap.New(bootstrap.Spec{InitBatch: 64, MaxBatch: 1024,
		Limits: map[string]goodput.Limits{"a100": {MinLocalBatch: 8, MaxLocalBatch: 512}, "t4": {MinLocalBatch: 8, MaxLocalBatch: 128}}}, nil)
	require.NoError(t, err)
	par := goodput.Params{AlphaC: 0.01, BetaC: 0.0002, AlphaN: 0.05, BetaN: 0.01, AlphaR: 0.01, BetaR: 0.004, Gamma: 1.3}
	for _, b := range []int{16, 64} {
		step := par.IterTime(1, 1, float64(b), 0)
		require.NoError(t, tr.Seed("a100", goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: b, StepTime: step, SyncTime: step - par.AccumTime(float64(b))}))
	}
	static := bootstrap.Static{"a100": {Params: par, Grad: goodput.GradStats{Sqr: 1, Var: 10}, InitBatch: 64, MaxBatch: 512, Limits: goodput.Limits{MinLocalBatch: 8, MaxLocalBatch: 256}},
		"l40s": {Params: par, Grad: goodput.GradStats{Sqr: 1, Var: 10}, InitBatch: 64, MaxBatch: 512, Limits: goodput.Limits{MinLocalBatch: 8, MaxLocalBatch: 256}}}
	hybridA100 := static["a100"]
	hybridA100.Stages, hybridA100.MicroBatches = 2, 8 // replicas of 2 pipeline stages; a Static with Stages excludes the types it lacks
	hybrid := bootstrap.Static{"a100": hybridA100}
	zone := time.FixedZone("x", 5*3600+1800)
	snap := hostileSnap()
	snap.Now = snap.Now.In(zone)
	snap.Jobs = []Job{
		{ID: "tracker", Submitted: t0, Models: tr, Application: "bert"},
		{ID: "static", Submitted: t0.In(zone), Models: static, MinGPUs: 2, MaxGPUs: 8, Types: []string{"a100", "l40s", "h100"},
			State: JobState{Current: Allocation{Type: "a100", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}, PeakReplicas: 2, Restarts: 3, RestartCost: 7 * time.Second}},
		{ID: "restoring", Submitted: t0, Models: static, NonPreemptible: true, Kind: Rigid, GPUs: 3,
			State: JobState{Current: Allocation{Type: "l40s", Nodes: 1, GPUs: 3, Placement: []GPU{{"l0", 5}, {"l0", 2}, {"l0", 0}}}, RestoreUntil: snap.Now.Add(time.Minute)}},
		{ID: "hybrid", Submitted: t0, Models: hybrid, Kind: StrongScaling},
	}
	snap.Reserved = map[string]int{"t4": 1}
	snap.Quotas = []Quota{{Name: "tenant", Jobs: []string{"static", "hybrid"}, Type: "a100", Limit: 6}}
	data, err := json.Marshal(snap)
	require.NoError(t, err)
	var back Snapshot
	require.NoError(t, json.Unmarshal(data, &back))
	sched, err := New(&Options{RoundTimeout: -1})
	require.NoError(t, err)
	p1, err := sched.Round(context.Background(), snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &p1)
	p2, err := sched.Round(context.Background(), back)
	require.NoError(t, err)
	assert.Equal(t, p1.Decisions, p2.Decisions)
	assert.Equal(t, p1.Status, p2.Status)
	assert.Equal(t, p1.Objective, p2.Objective)

	pd, err := json.Marshal(p1)
	require.NoError(t, err)
	var pb Plan
	require.NoError(t, json.Unmarshal(pd, &pb))
	assert.Equal(t, p1.Decisions, pb.Decisions)
	assert.Equal(t, p1.Status, pb.Status)
	assert.Nil(t, pb.matrix)
	assert.Nil(t, pb.entry(0))
	// A plan with infinite numbers survives the trip.
	inf := Plan{Status: StatusFeasible, Objective: math.Inf(1), Bound: math.NaN()}
	d, err := json.Marshal(inf)
	require.NoError(t, err)
	var ib Plan
	require.NoError(t, json.Unmarshal(d, &ib))
	assert.True(t, math.IsInf(ib.Objective, 1))
	assert.True(t, math.IsNaN(ib.Bound))
	// Hostile plan JSON is an error, not a misread.
	for name, in := range map[string]string{
		"objective garbage string": `{"Decisions":null,"Status":0,"Objective":"lots","Bound":1}`,
		"bound object":             `{"Decisions":null,"Status":0,"Objective":1,"Bound":{}}`,
		"trailing":                 `{"Decisions":null,"Status":0,"Objective":1,"Bound":1}x`,
	} {
		var p Plan
		assert.Error(t, json.Unmarshal([]byte(in), &p), name)
	}
	// A job with both model kinds, or Models of a type JSON cannot hold.
	var j Job
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"ID":"j","Models":{"tracker":`+string(must(json.Marshal(tr)))+`,"static":{"a100":{}}}}`), &j), ErrInvalidInput)
	_, err = json.Marshal(Job{ID: "t", Models: siatest.Table{}})
	assert.ErrorIs(t, err, ErrInvalidInput)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// oddEvaluator is a host's predictor whose batch sizes are inconsistent or
// overflow; its goodputs are fine.
type oddEvaluator struct{ local, accum, global int }

func (oddEvaluator) Model(string) (goodput.Model, bootstrap.Source) {
	return goodput.Model{InitBatch: 8, MaxBatch: 64}, bootstrap.Measured
}

func (e oddEvaluator) Evaluate(_ string, _, replicas int) (goodput.Choice, bool) {
	return goodput.Choice{Goodput: float64(replicas), Throughput: float64(replicas), Efficiency: 1,
		LocalBatch: e.local, AccumSteps: e.accum, GlobalBatch: e.global}, true
}

// TestHostileEvaluatorBatches: whatever batch sizes an Evaluator reports,
// every decision keeps GlobalBatch = Replicas·LocalBatch·(AccumSteps+1)
// with positive sizes, as Decision documents.
func TestHostileEvaluatorBatches(t *testing.T) {
	for name, ev := range map[string]oddEvaluator{
		"consistent":          {local: 8, accum: 1, global: 0}, // global filled in below per replica count
		"global inconsistent": {local: 8, accum: 0, global: 1000},
		"global overflow":     {local: math.MaxInt / 2, accum: 3, global: math.MaxInt},
		"accum huge":          {local: 4, accum: math.MaxInt, global: 4},
		"zero local":          {local: 0, accum: 0, global: 16},
	} {
		t.Run(name, func(t *testing.T) {
			snap := hostileSnap()
			snap.Jobs = []Job{{ID: "j", Submitted: t0, Models: ev, MinGPUs: 2, MaxGPUs: 4}}
			sched, err := New(nil)
			require.NoError(t, err)
			p, err := sched.Round(context.Background(), snap)
			require.NoError(t, err)
			d := p.Decisions[0]
			require.True(t, d.Allocation.Running())
			assert.Positive(t, d.LocalBatch)
			assert.GreaterOrEqual(t, d.AccumSteps, 0)
			assert.Equal(t, d.Replicas*d.LocalBatch*(d.AccumSteps+1), d.GlobalBatch, "%+v", d)
			assert.Positive(t, d.GlobalBatch)
		})
	}
}

// TestHostileAdvanceCounts: Advance never wraps a count around (a state
// at MaxInt restarts stays valid for the next round).
func TestHostileAdvanceCounts(t *testing.T) {
	st := JobState{Restarts: math.MaxInt, PeakReplicas: math.MaxInt,
		Current: Allocation{Type: "a100", Nodes: 1, GPUs: 2, Placement: []GPU{{"a0", 0}, {"a0", 1}}}}
	st.Advance(Decision{Action: Resize, Restart: true, Replicas: 1, RestoreUntil: t0,
		Allocation: Allocation{Type: "a100", Nodes: 1, GPUs: 1, Placement: []GPU{{"a0", 0}}}})
	assert.Equal(t, math.MaxInt, st.Restarts)
	assert.Equal(t, math.MaxInt, st.PeakReplicas)
	snap := hostileSnap()
	snap.Jobs[1].State = st
	snap.Jobs[1].MinGPUs = 1
	sched, err := New(nil)
	require.NoError(t, err)
	_, err = sched.Round(context.Background(), snap)
	require.NoError(t, err)
}

// TestHostilePinAcrossPools: a pinned job whose GPUs span nodes of two
// sizes of one type (two pools) is charged to each pool the GPUs it holds
// there. Before, it was charged entirely to the pool of the larger nodes:
// the solver believed the smaller node free and gave its held GPUs to a job
// placement could not place (and placement, placing the pools of one size
// first, double-booked them). Here the pinned job holds 3 GPUs of the 6-GPU
// node and 3 of the 8-GPU node: the rigid 3 fits the 6-GPU node's 3 free
// GPUs and starts; the rigid 5 is charged a whole 8-GPU node (5 is no
// configuration there) and waits for a reason other than placement.
func TestHostilePinAcrossPools(t *testing.T) {
	tab := siatest.Table{"a": {1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 8: 8}}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: []Node{{ID: "s0", Type: "a", GPUs: 6}, {ID: "e0", Type: "a", GPUs: 8}},
		Jobs: []Job{
			{ID: "pin", Submitted: t0, Models: tab, NonPreemptible: true, State: JobState{Current: Allocation{Type: "a", Nodes: 2, GPUs: 6,
				Placement: []GPU{{"s0", 0}, {"s0", 1}, {"s0", 2}, {"e0", 0}, {"e0", 1}, {"e0", 2}}}}},
			{ID: "r5", Submitted: t0, Models: tab, Kind: Rigid, GPUs: 5},
			{ID: "r3", Submitted: t0, Models: tab, Kind: Rigid, GPUs: 3},
		}}
	s, err := New(nil)
	require.NoError(t, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &p)
	assert.Equal(t, Keep, p.Decisions[0].Action)
	assert.Equal(t, Start, p.Decisions[2].Action, "r3 fits the 6-GPU node's free GPUs")
	// r5 fits the 8-GPU node's 5 free GPUs: a pool of one node charges a
	// part its GPUs (configset.Set.Charge), not its chain size (8)
	assert.Equal(t, Start, p.Decisions[1].Action, "r5 fits the 8-GPU node's free GPUs")
	assert.NotEqual(t, ReasonUnplaceable, p.Decisions[1].Reason, "the solver must not allocate GPUs the pin holds")
	assert.Equal(t, StatusOptimal, p.Status)
}
