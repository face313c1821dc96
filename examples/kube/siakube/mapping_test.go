package siakube

import (
	"testing"
	"time"

	"github.com/sia-sched/sia/sia"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name, typ string, gpus int64, mut ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{DefaultTypeLabel: typ}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{DefaultGPUResource: *resource.NewQuantity(gpus, resource.DecimalSI)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
	for _, m := range mut {
		m(n)
	}
	return n
}

func TestReadNodes(t *testing.T) {
	nodes := []*corev1.Node{
		node("b", "a100", 8),
		node("a", "t4", 4),
		node("cordoned", "a100", 8, func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("notready", "a100", 8, func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }),
		node("noready", "a100", 8, func(n *corev1.Node) { n.Status.Conditions = nil }),
		node("tainted", "a100", 8, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
		}),
		node("gputaint", "rtx", 6, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule},
				{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
		}),
		node("nolabel", "x", 8, func(n *corev1.Node) { n.Labels = nil }),
		node("badlabel", "a b", 8),
		node("nogpu", "a100", 0),
		node("busy", "a100", 2),
		node("huge", "a100", 1<<40),
		nil,
	}
	got, skipped := ReadNodes(nodes, map[string]int{"b": 2, "busy": 2}, NodeConfig{})
	assert.Equal(t, []GPUNode{
		{Name: "a", Type: "t4", Allocatable: 4, GPUs: 4},
		{Name: "b", Type: "a100", Allocatable: 8, External: 2, GPUs: 6},
		{Name: "gputaint", Type: "rtx", Allocatable: 6, GPUs: 6},
	}, got)
	why := map[string]string{}
	for _, s := range skipped {
		why[s.Name] = s.Reason
	}
	assert.Equal(t, "cordoned", why["cordoned"])
	assert.Equal(t, "not Ready", why["notready"])
	assert.Equal(t, "not Ready", why["noready"])
	assert.Contains(t, why["tainted"], "maintenance:NoSchedule")
	assert.Contains(t, why["nolabel"], "no label")
	assert.Contains(t, why["badlabel"], "no GPU type name")
	assert.Contains(t, why["nogpu"], "no free")
	assert.Contains(t, why["busy"], "2 held by other pods")
	assert.Contains(t, why["huge"], "more than")

	got, _ = ReadNodes(nodes[:1], nil, NodeConfig{TypeLabel: "other"})
	assert.Empty(t, got, "a configured label that the node lacks")
	got, _ = ReadNodes(nodes[6:7], nil, NodeConfig{TolerateTaints: []string{}})
	assert.Empty(t, got, "an empty toleration list tolerates nothing")
}

func TestPodGPUs(t *testing.T) {
	q := func(n int64) corev1.ResourceList {
		return corev1.ResourceList{DefaultGPUResource: *resource.NewQuantity(n, resource.DecimalSI)}
	}
	p := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: q(2)}}, {Resources: corev1.ResourceRequirements{Limits: q(1)}}},
		InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: q(4)}}},
	}}
	assert.Equal(t, 4, PodGPUs(p, ""))
	p.Spec.InitContainers = nil
	assert.Equal(t, 3, PodGPUs(p, ""))
}

func TestAssignmentPods(t *testing.T) {
	two := Assignment{Type: "a100", GPUs: 16, PerNode: []NodeGPUs{{"a", 8}, {"b", 8}}}
	pods, per := two.Pods(PodPerNode)
	assert.Equal(t, [2]int{2, 8}, [2]int{pods, per})
	pods, per = two.Pods(PodPerGPU)
	assert.Equal(t, [2]int{16, 1}, [2]int{pods, per})
	rem := Assignment{Type: "rtx", GPUs: 9, PerNode: []NodeGPUs{{"a", 6}, {"b", 3}}}
	pods, per = rem.Pods(PodPerNode)
	assert.Equal(t, [2]int{9, 1}, [2]int{pods, per}, "a whole node plus a remainder: one pod per GPU")
	pods, per = Assignment{}.Pods(PodPerNode)
	assert.Zero(t, pods+per)
	assert.Equal(t, "a=8,b=8", two.NodesString())
}

func input(id string, rec *Record, spec *JobSpec) *JobInput {
	tr, err := NewTracker(spec)
	if err != nil {
		panic(err)
	}
	if rec.Job == "" {
		rec.Job, rec.UID = id, "uid-"+id
	}
	return &JobInput{ID: id, Spec: spec, Record: rec, Tracker: tr}
}

func mustSpec(t *testing.T, kv ...string) *JobSpec {
	s, err := ParseJobSpec(with(validAnn(), kv...))
	require.NoError(t, err)
	return &s
}

func running(phase Phase, typ string, per ...NodeGPUs) *Record {
	a := Assignment{Type: typ, PerNode: per}
	for _, p := range per {
		a.GPUs += p.GPUs
	}
	a.Replicas = a.GPUs
	return &Record{Phase: phase, Assigned: a, Started: true}
}

func TestBuildSnapshot(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	nodes := []GPUNode{{Name: "a1", Type: "a100", GPUs: 8}, {Name: "a2", Type: "a100", GPUs: 8}, {Name: "t1", Type: "t4", GPUs: 4}}
	spec := mustSpec(t)
	jobs := []*JobInput{
		input("ns/z-running", running(PhaseRunning, "a100", NodeGPUs{"a1", 4}), spec),
		input("ns/b-restoring", running(PhaseRestoring, "a100", NodeGPUs{"a1", 8}), spec), // pinned: wins node a1
		input("ns/c-gone", running(PhaseRunning, "a100", NodeGPUs{"gone", 8}), spec),
		input("ns/d-wrongtype", running(PhaseRunning, "a100", NodeGPUs{"t1", 4}), spec),
		input("ns/e-queued", &Record{Phase: PhaseQueued}, spec),
		input("ns/f-bounds", running(PhaseRestoring, "a100", NodeGPUs{"a2", 8}), mustSpec(t, AnnMaxGPUs, "4")),
		input("ns/g-rigid-bad", &Record{Phase: PhaseQueued}, mustSpec(t, AnnKind, "rigid", AnnGPUs, "4", AnnMinGPUs, "<delete>", AnnMaxGPUs, "<delete>")),
		input("ns/a-future", &Record{Phase: PhaseQueued}, spec),
	}
	jobs[7].Submitted = now.Add(time.Hour)
	// A rigid job may not have MinGPUs: the library refuses it, the others go on.
	jobs[6].Spec = &JobSpec{Kind: sia.Rigid, GPUs: 4, MinGPUs: 9, MaxGPUs: 2, Model: spec.Model}
	res := BuildSnapshot(now, nodes, jobs)
	ids := []string{}
	for _, j := range res.Snapshot.Jobs {
		ids = append(ids, j.ID)
	}
	assert.Equal(t, []string{"ns/a-future", "ns/b-restoring", "ns/c-gone", "ns/d-wrongtype", "ns/e-queued", "ns/f-bounds", "ns/z-running"}, ids)
	assert.Contains(t, res.Rejected, "ns/g-rigid-bad")
	assert.Contains(t, res.Cleared["ns/c-gone"], "node gone is gone")
	assert.Contains(t, res.Cleared["ns/d-wrongtype"], "type t4")
	assert.Contains(t, res.Cleared["ns/z-running"], "node a1", "the pinned job took the node first")
	assert.Contains(t, res.Cleared["ns/f-bounds"], "MaxGPUs", "a pinned job off its (new) bounds is cleared, not a failed round")
	b := res.Snapshot.Jobs[1]
	assert.True(t, b.State.Restoring)
	assert.Len(t, b.State.Current.Placement, 8)
	assert.Equal(t, now, res.Snapshot.Jobs[0].Submitted, "a creation time after Now is clamped")
	require.NoError(t, res.Snapshot.Validate())
	for i, j := range res.Jobs {
		assert.Equal(t, j.ID, res.Snapshot.Jobs[i].ID)
	}

	plan, err := sia.New(nil)
	require.NoError(t, err)
	p, err := plan.Round(t.Context(), res.Snapshot)
	require.NoError(t, err)
	d, ok := p.Decision("ns/b-restoring")
	require.True(t, ok)
	assert.Equal(t, sia.Keep, d.Action, "the restoring job is pinned")
}

func TestAdvance(t *testing.T) {
	a8 := sia.Allocation{Type: "a100", Nodes: 1, GPUs: 2, Placement: []sia.GPU{{Node: "a1", Index: 0}, {Node: "a1", Index: 1}}}
	t2 := sia.Allocation{Type: "t4", Nodes: 1, GPUs: 2, Placement: []sia.GPU{{Node: "t1", Index: 0}, {Node: "t1", Index: 1}}}
	cases := []struct {
		name     string
		rec      *Record
		d        sia.Decision
		step     Step
		phase    Phase
		restarts int
	}{
		{"first start", &Record{Phase: PhaseQueued}, sia.Decision{Action: sia.Start, Allocation: a8, Replicas: 2}, StepStart, PhaseStarting, 0},
		{"start after preemption", &Record{Phase: PhaseQueued, Started: true, Restarts: 1}, sia.Decision{Action: sia.Start, Restart: true, Allocation: a8, Replicas: 2}, StepStart, PhaseStarting, 2},
		{"migrate", running(PhaseRunning, "a100", NodeGPUs{"a1", 2}), sia.Decision{Action: sia.Migrate, Restart: true, Allocation: t2, Replicas: 2}, StepStart, PhaseStarting, 1},
		{"resize", running(PhaseRunning, "a100", NodeGPUs{"a1", 4}), sia.Decision{Action: sia.Resize, Restart: true, Allocation: a8, Replicas: 2}, StepStart, PhaseStarting, 1},
		{"move on the same node is a keep", running(PhaseRunning, "a100", NodeGPUs{"a1", 2}), sia.Decision{Action: sia.Move, Restart: true, Allocation: a8, Replicas: 2}, StepNone, PhaseRunning, 0},
		{"move", running(PhaseRunning, "a100", NodeGPUs{"a2", 2}), sia.Decision{Action: sia.Move, Restart: true, Allocation: a8, Replicas: 2}, StepStart, PhaseStarting, 1},
		{"keep, new batch", running(PhaseRunning, "a100", NodeGPUs{"a1", 2}), sia.Decision{Action: sia.Keep, Allocation: a8, Replicas: 2, LocalBatch: 64, GlobalBatch: 128}, StepBatch, PhaseRunning, 0},
		{"keep while restoring", running(PhaseRestoring, "a100", NodeGPUs{"a1", 2}), sia.Decision{Action: sia.Keep, Allocation: a8, Replicas: 2}, StepNone, PhaseRestoring, 0},
		{"preempt", running(PhaseRunning, "a100", NodeGPUs{"a1", 2}), sia.Decision{Action: sia.Preempt, Reason: sia.ReasonLostOptimisation}, StepSuspend, PhaseStopping, 0},
		{"queue", &Record{Phase: PhaseQueued}, sia.Decision{Action: sia.Queue, Reason: sia.ReasonTooLarge}, StepQueue, PhaseQueued, 0},
		{"queue while stopping", &Record{Phase: PhaseStopping}, sia.Decision{Action: sia.Queue, Reason: sia.ReasonQuota}, StepQueue, PhaseStopping, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.rec.Job = "ns/j"
			step, err := Advance(c.rec, c.d)
			require.NoError(t, err)
			assert.Equal(t, c.step, step)
			assert.Equal(t, c.phase, c.rec.Phase)
			assert.Equal(t, c.restarts, c.rec.Restarts)
			if c.d.Allocation.Running() {
				assert.Equal(t, c.d.Allocation.GPUs, c.rec.Assigned.GPUs)
			} else {
				assert.False(t, c.rec.Assigned.Running())
				assert.Equal(t, c.d.Reason.String(), c.rec.Reason)
			}
			_, err = (&Record{Job: "x"}).Encode(nil)
			require.NoError(t, err)
		})
	}
	_, err := Advance(&Record{Job: "ns/j", Phase: PhaseQueued}, sia.Decision{Action: sia.Keep})
	assert.Error(t, err, "keep of a job without GPUs")
}

func TestRecordRoundTrip(t *testing.T) {
	spec := mustSpec(t)
	in := input("ns/j", running(PhaseRestoring, "a100", NodeGPUs{"a1", 4}), spec)
	in.Record.Restarts, in.Record.Peak = 3, 4
	in.Record.RestoreUntil = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	b, err := in.Record.Encode(in.Tracker)
	require.NoError(t, err)
	rec, tr, err := DecodeRecord(b)
	require.NoError(t, err)
	assert.Equal(t, 3, rec.Restarts)
	assert.Equal(t, in.Record.Assigned, rec.Assigned)
	assert.True(t, rec.RestoreUntil.Equal(in.Record.RestoreUntil))
	require.NotNil(t, tr)
	assert.Equal(t, in.Tracker.Observations("a100"), tr.Observations("a100"))

	for name, bad := range map[string]string{
		"not JSON":       "{",
		"version":        `{"version":9,"job":"x","phase":"queued"}`,
		"phase":          `{"version":1,"job":"x","phase":"flying"}`,
		"sum":            `{"version":1,"job":"x","phase":"running","assigned":{"type":"a","gpus":9,"perNode":[{"node":"n","gpus":8}]}}`,
		"running no gpu": `{"version":1,"job":"x","phase":"running"}`,
		"tracker":        `{"version":1,"job":"x","phase":"queued","tracker":{"spec":7}}`,
	} {
		_, _, err := DecodeRecord([]byte(bad))
		assert.Error(t, err, name)
	}
}

func TestConfigure(t *testing.T) {
	idx := batchv1.IndexedCompletion
	j := &batchv1.Job{Spec: batchv1.JobSpec{CompletionMode: &idx, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "sidecar"}, {Name: "train", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{DefaultGPUResource: *resource.NewQuantity(1, resource.DecimalSI)}}}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}}},
	}}}}
	a := Assignment{Type: "a100", GPUs: 16, PerNode: []NodeGPUs{{"a1", 8}, {"a2", 8}}, Replicas: 16, LocalBatch: 64, AccumSteps: 1, GlobalBatch: 2048}
	require.False(t, Configured(j, a, PodPerNode, ""))
	Configure(j, a, PodPerNode, "")
	assert.Equal(t, int32(2), *j.Spec.Parallelism)
	assert.Equal(t, int32(2), *j.Spec.Completions)
	ps := j.Spec.Template.Spec
	terms := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	require.Len(t, terms, 2, "one term per node: the API server takes one value per metadata.name selector")
	assert.Equal(t, []string{"a1"}, terms[0].MatchFields[0].Values)
	assert.Equal(t, []string{"a2"}, terms[1].MatchFields[0].Values)
	assert.Len(t, ps.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution, 1, "the user's preferred terms stay")
	q := ps.Containers[1].Resources.Limits[DefaultGPUResource]
	assert.Equal(t, int64(8), q.Value(), "the container that asked for GPUs gets them")
	assert.NotContains(t, ps.Containers[0].Resources.Requests, DefaultGPUResource)
	assert.Equal(t, "64", j.Spec.Template.Annotations[AnnOutLocalBatch])
	assert.Equal(t, "1", j.Spec.Template.Annotations[AnnOutAccumSteps])
	assert.True(t, Configured(j, a, PodPerNode, ""))

	// One pod per GPU: more GPUs on the same nodes keep the template, so the
	// job can grow in place.
	per := Assignment{Type: "a100", GPUs: 2, PerNode: []NodeGPUs{{"a1", 2}}, Replicas: 2}
	Configure(j, per, PodPerGPU, "")
	grown := per
	grown.GPUs, grown.PerNode, grown.Replicas = 4, []NodeGPUs{{"a1", 4}}, 4
	assert.True(t, Configured(j, grown, PodPerGPU, ""))
	assert.False(t, Configured(j, Assignment{Type: "a100", GPUs: 2, PerNode: []NodeGPUs{{"a2", 2}}}, PodPerGPU, ""))

	assert.True(t, SetSuspend(j, true))
	assert.False(t, SetSuspend(j, true))
	assert.True(t, Suspended(j))
}
