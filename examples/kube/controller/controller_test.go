package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sia-sched/sia/examples/kube/siakube"
	"github.com/sia-sched/sia/sia"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

const ns = "team"

func gpuNode(name, typ string, gpus int64) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{siakube.DefaultTypeLabel: typ}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{siakube.DefaultGPUResource: *resource.NewQuantity(gpus, resource.DecimalSI)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
}

func trainJob(name string, managed bool, ann map[string]string) *batchv1.Job {
	idx := batchv1.IndexedCompletion
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Annotations: map[string]string{
			siakube.AnnInitBatch: "128", siakube.AnnMaxBatch: "2048", siakube.AnnMinGPUs: "1", siakube.AnnMaxGPUs: "8",
			siakube.AnnLimits:       "a100=16-512,t4=16-128",
			siakube.AnnProfile:      `[{"type":"a100","localBatch":64,"stepTime":0.05,"syncTime":0},{"type":"a100","localBatch":128,"stepTime":0.09,"syncTime":0},{"type":"t4","localBatch":64,"stepTime":0.2,"syncTime":0},{"type":"t4","localBatch":128,"stepTime":0.38,"syncTime":0}]`,
			siakube.AnnRestoreDelay: "30s",
		}},
		Spec: batchv1.JobSpec{CompletionMode: &idx, Suspend: ptr.To(true), Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "train", Image: "train"}}}}},
	}
	if managed {
		j.Labels = map[string]string{siakube.LabelManaged: siakube.LabelManagedValue}
	}
	for k, v := range ann {
		if v == "" {
			delete(j.Annotations, k)
			continue
		}
		j.Annotations[k] = v
	}
	return j
}

type env struct {
	t      *testing.T
	client *fake.Clientset
	clock  *ManualClock
	c      *Controller
	rec    *record.FakeRecorder
	ctx    context.Context
}

func newEnv(t *testing.T, client *fake.Clientset) *env {
	return newEnvOptions(t, client, nil)
}

// newEnvOptions is newEnv with the scheduler's options.
func newEnvOptions(t *testing.T, client *fake.Clientset, opts *sia.Options) *env {
	clock := NewManualClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	rec := record.NewFakeRecorder(10000)
	c, err := New(client, Config{Namespace: "sia-system", Clock: clock, Recorder: rec, Options: opts})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, c.Start(ctx))
	return &env{t: t, client: client, clock: clock, c: c, rec: rec, ctx: ctx}
}

// settle waits until the informers hold what the fake API server holds.
func (e *env) settle() {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		jobs, _ := e.client.BatchV1().Jobs("").List(e.ctx, metav1.ListOptions{LabelSelector: siakube.LabelManaged + "=true"})
		for _, j := range jobs.Items {
			got, err := e.c.jobs.Jobs(j.Namespace).Get(j.Name)
			if err != nil || !equality.Semantic.DeepEqual(got, &j) {
				return false
			}
		}
		cached, _ := e.c.jobs.List(labels.Everything())
		pods, _ := e.client.CoreV1().Pods("").List(e.ctx, metav1.ListOptions{})
		cpods, _ := e.c.pods.List(labels.Everything())
		nodes, _ := e.client.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
		cnodes, _ := e.c.nodes.List(labels.Everything())
		return len(cached) == len(jobs.Items) && len(cpods) == len(pods.Items) && len(cnodes) == len(nodes.Items)
	}, 5*time.Second, 5*time.Millisecond)
}

func (e *env) round() *Report {
	e.t.Helper()
	e.settle()
	rep, err := e.c.RunRound(e.ctx)
	require.NoError(e.t, err)
	require.Empty(e.t, rep.JobErrors)
	e.settle()
	return rep
}

func (e *env) job(name string) *batchv1.Job {
	j, err := e.client.BatchV1().Jobs(ns).Get(e.ctx, name, metav1.GetOptions{})
	require.NoError(e.t, err)
	return j
}

// kubelet plays the scheduler and kubelet: every unsuspended job gets its
// pods, bound to its assigned nodes and Running; a suspended job's pods are
// deleted. It checks that no node's GPUs are overcommitted.
func (e *env) kubelet() {
	e.t.Helper()
	jobs, err := e.client.BatchV1().Jobs(ns).List(e.ctx, metav1.ListOptions{})
	require.NoError(e.t, err)
	used := map[string]int{}
	for _, j := range jobs.Items {
		pods, _ := e.client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{LabelSelector: "job=" + j.Name})
		if siakube.Suspended(&j) || j.Labels[siakube.LabelManaged] == "" {
			for _, p := range pods.Items {
				require.NoError(e.t, e.client.CoreV1().Pods(ns).Delete(e.ctx, p.Name, metav1.DeleteOptions{}))
			}
			continue
		}
		if len(pods.Items) > 0 {
			for _, p := range pods.Items {
				used[p.Spec.NodeName] += siakube.PodGPUs(&p, "")
			}
			continue
		}
		per := j.Spec.Template.Spec.Containers[0].Resources.Limits[siakube.DefaultGPUResource]
		var nodes []string
		var counts []int
		for _, pn := range splitNodes(j.Annotations[siakube.AnnOutNodes]) {
			nodes = append(nodes, pn.Node)
			counts = append(counts, pn.GPUs)
		}
		k := 0
		for i := 0; i < int(*j.Spec.Parallelism); i++ {
			for counts[k] <= 0 {
				k++
			}
			counts[k] -= int(per.Value())
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", j.Name, i), Namespace: ns,
				Labels:          map[string]string{"job": j.Name},
				OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: j.Name, UID: j.UID, Controller: ptr.To(true)}}},
				Spec: *j.Spec.Template.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodRunning}}
			p.Spec.NodeName = nodes[k]
			used[nodes[k]] += int(per.Value())
			_, err := e.client.CoreV1().Pods(ns).Create(e.ctx, p, metav1.CreateOptions{})
			require.NoError(e.t, err)
		}
	}
	for n, g := range used {
		node, err := e.client.CoreV1().Nodes().Get(e.ctx, n, metav1.GetOptions{})
		if err != nil {
			continue
		}
		q := node.Status.Allocatable[siakube.DefaultGPUResource]
		require.LessOrEqual(e.t, int64(g), q.Value(), "node %s overcommitted", n)
	}
}

func splitNodes(s string) []siakube.NodeGPUs {
	var out []siakube.NodeGPUs
	var n string
	var g int
	for _, part := range splitComma(s) {
		if _, err := fmt.Sscanf(replaceEq(part), "%s %d", &n, &g); err == nil {
			out = append(out, siakube.NodeGPUs{Node: n, GPUs: g})
		}
	}
	return out
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func replaceEq(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '=' {
			b[i] = ' '
		}
	}
	return string(b)
}

func TestControllerLifecycle(t *testing.T) {
	client := fake.NewClientset(
		gpuNode("a100-0", "a100", 8), gpuNode("a100-1", "a100", 8), gpuNode("t4-0", "t4", 4),
		trainJob("adaptive", true, map[string]string{siakube.AnnMinGPUs: "2", siakube.AnnMaxGPUs: "2"}),
		trainJob("rigid", true, map[string]string{siakube.AnnKind: "rigid", siakube.AnnGPUs: "4", siakube.AnnMinGPUs: "", siakube.AnnMaxGPUs: ""}),
		trainJob("hostile", true, map[string]string{siakube.AnnMaxGPUs: "1e999"}),
		trainJob("other", false, nil),
	)
	e := newEnv(t, client)
	other := e.job("other")

	rep := e.round()
	assert.Equal(t, 2, rep.Actions["start"], "both valid jobs start")
	assert.Contains(t, rep.Invalid, ns+"/hostile")
	h := e.job("hostile")
	assert.Equal(t, "invalid", h.Annotations[siakube.AnnOutState])
	assert.Contains(t, h.Annotations[siakube.AnnOutReason], siakube.AnnMaxGPUs)
	assert.True(t, siakube.Suspended(h), "an invalid job is left as it is")
	for _, name := range []string{"adaptive", "rigid"} {
		j := e.job(name)
		assert.False(t, siakube.Suspended(j), name)
		assert.Equal(t, "restoring", j.Annotations[siakube.AnnOutState], name)
		assert.NotEmpty(t, j.Spec.Template.Annotations[siakube.AnnOutLocalBatch], name)
		terms := j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		require.Len(t, terms, 1, name)
	}
	assert.Equal(t, other.ResourceVersion, e.job("other").ResourceVersion, "a Job that did not opt in is never written")

	// Pods run; the pin lasts the restore delay.
	e.kubelet()
	e.clock.Advance(time.Minute)
	e.round()
	assert.Equal(t, "restoring", e.job("adaptive").Annotations[siakube.AnnOutState], "pinned until the delay has passed")
	e.clock.Advance(time.Minute)
	rep = e.round()
	assert.Equal(t, "running", e.job("adaptive").Annotations[siakube.AnnOutState])
	assert.Equal(t, 2, rep.Phases["running"])

	// A measurement of another configuration is refused with an event; the
	// right one enters the tracker.
	j := e.job("adaptive")
	a := siakube.Assignment{}
	for _, pn := range splitNodes(j.Annotations[siakube.AnnOutNodes]) {
		a.PerNode = append(a.PerNode, pn)
	}
	typ := j.Annotations[siakube.AnnOutGPUType]
	j.Annotations[siakube.AnnMeasurement] = fmt.Sprintf(`{"type":%q,"nodes":%d,"replicas":%s,"localBatch":64,"stepTime":0.1,"syncTime":0.01,"gradSqr":1,"gradVar":5}`,
		typ, len(a.PerNode), j.Annotations[siakube.AnnOutReplicas])
	_, err := client.BatchV1().Jobs(ns).Update(e.ctx, j, metav1.UpdateOptions{})
	require.NoError(t, err)
	e.clock.Advance(time.Minute)
	e.round()
	uid := string(e.job("adaptive").UID)
	tr := e.c.entries[uid].tracker
	assert.Equal(t, 1.0, tr.Grad().Sqr, "the agent's gradient statistics reached the tracker")

	// Restart: a new controller on the same cluster keeps the model and counts.
	before, err := e.c.entries[uid].rec.Encode(tr)
	require.NoError(t, err)
	e2 := newEnv(t, client)
	e2.clock.Set(e.clock.Now())
	require.NoError(t, e2.c.Load(e.ctx))
	got, err := e2.c.entries[uid].rec.Encode(e2.c.entries[uid].tracker)
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(got), "the record survives a restart")

	// The node of a running job disappears: its allocation is cleared,
	// not a failed round.
	victim := splitNodes(e.job("rigid").Annotations[siakube.AnnOutNodes])[0].Node
	require.NoError(t, client.CoreV1().Nodes().Delete(e.ctx, victim, metav1.DeleteOptions{}))
	e2.clock.Advance(time.Minute)
	e2.settle()
	rep, err = e2.c.RunRound(e.ctx)
	require.NoError(t, err)
	assert.Contains(t, rep.Cleared, ns+"/rigid")
	r := e.job("rigid")
	assert.True(t, siakube.Suspended(r), "the job is suspended before it restarts elsewhere")
	e2.kubelet()
	e2.clock.Advance(time.Minute)
	e2.round()
	r = e.job("rigid")
	assert.NotContains(t, r.Annotations[siakube.AnnOutNodes], victim)
	assert.False(t, siakube.Suspended(r), "restarted on the nodes left")
	assert.Equal(t, 1, e2.c.entries[string(r.UID)].rec.Restarts)

	// The job finishes: its record is collected.
	r.Status.Conditions = append(r.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
	_, err = client.BatchV1().Jobs(ns).UpdateStatus(e.ctx, r, metav1.UpdateOptions{})
	require.NoError(t, err)
	e2.clock.Advance(time.Minute)
	e2.round()
	_, err = client.CoreV1().ConfigMaps("sia-system").Get(e.ctx, RecordPrefix+string(r.UID), metav1.GetOptions{})
	assert.Error(t, err, "the finished job's record is deleted")
}

func TestControllerQueueReason(t *testing.T) {
	client := fake.NewClientset(gpuNode("t4-0", "t4", 4),
		trainJob("big", true, map[string]string{siakube.AnnKind: "rigid", siakube.AnnGPUs: "16", siakube.AnnMinGPUs: "", siakube.AnnMaxGPUs: ""}))
	e := newEnv(t, client)
	rep := e.round()
	assert.Equal(t, 1, rep.Actions["queue"])
	j := e.job("big")
	assert.True(t, siakube.Suspended(j))
	assert.Equal(t, "too-large", j.Annotations[siakube.AnnOutReason])
	var cond *batchv1.JobCondition
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == ConditionScheduled {
			cond = &j.Status.Conditions[i]
		}
	}
	require.NotNil(t, cond)
	assert.Equal(t, corev1.ConditionFalse, cond.Status)
	assert.Equal(t, "TooLarge", cond.Reason)
	found := false
	for len(e.rec.Events) > 0 && !found {
		ev := <-e.rec.Events
		found = ev == "Normal SiaQueued queued: too-large"
	}
	assert.True(t, found, "an event shows the reason")
}

func TestCamel(t *testing.T) {
	assert.Equal(t, "LostOptimisation", camel("lost-optimisation"))
	assert.Equal(t, "Unknown", camel("--"))
	assert.Equal(t, "AllocationClearedNodeX", camel("allocation cleared: node x"))
}

// TestStartGate: a job assigned GPUs that a preempted job's pods still hold
// stays suspended until those pods are gone, then resumes; no node is ever
// overcommitted by the pods the controller let run.
func TestStartGate(t *testing.T) {
	rigid := map[string]string{siakube.AnnKind: "rigid", siakube.AnnGPUs: "4", siakube.AnnMinGPUs: "", siakube.AnnMaxGPUs: ""}
	oldJob, newJob := trainJob("old", true, rigid), trainJob("new", true, rigid)
	oldJob.Spec.Suspend = ptr.To(true)
	client := fake.NewClientset(gpuNode("t4-0", "t4", 4), oldJob, newJob,
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "old-0", Namespace: ns, Labels: map[string]string{"job": "old"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "old", UID: oldJob.UID, Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: "t4-0", Containers: []corev1.Container{{Name: "train", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{siakube.DefaultGPUResource: *resource.NewQuantity(4, resource.DecimalSI)}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	save := func(j *batchv1.Job, r *siakube.Record) {
		spec, err := siakube.ParseJobSpec(j.Annotations)
		require.NoError(t, err)
		tr, err := siakube.NewTracker(&spec)
		require.NoError(t, err)
		r.Job, r.UID = siakube.JobID(j), string(j.UID)
		st := store{client: client, namespace: "sia-system"}
		require.NoError(t, st.save(context.Background(), &entry{rec: r, tracker: tr}))
	}
	save(oldJob, &siakube.Record{Phase: siakube.PhaseStopping, Started: true})
	save(newJob, &siakube.Record{Phase: siakube.PhaseStarting, Assigned: siakube.Assignment{Type: "t4", GPUs: 4,
		PerNode: []siakube.NodeGPUs{{Node: "t4-0", GPUs: 4}}, Replicas: 4, LocalBatch: 32, GlobalBatch: 128}})

	e := newEnv(t, client)
	rep := e.round()
	assert.Equal(t, 1, rep.Actions["keep"], "the starting job is pinned")
	n := e.job("new")
	assert.True(t, siakube.Suspended(n), "the old job's pods still hold the GPUs")
	assert.Contains(t, n.Annotations[siakube.AnnOutReason], "waiting for 4 GPUs on node t4-0")
	assert.Equal(t, "stopping", e.job("old").Annotations[siakube.AnnOutState])

	e.kubelet() // deletes the suspended job's pod
	e.clock.Advance(time.Minute)
	e.round()
	n = e.job("new")
	assert.False(t, siakube.Suspended(n), "resumed once the GPUs are free")
	assert.Equal(t, "restoring", n.Annotations[siakube.AnnOutState])
	assert.Equal(t, "queued", e.job("old").Annotations[siakube.AnnOutState])
	e.kubelet()
}

// TestConflictsAndFailedWrites: a conflicting write is retried on a fresh
// read; a write that keeps failing leaves the record as it was (the job is
// not taken for resumed) and is reported, not a failed round.
func TestConflictsAndFailedWrites(t *testing.T) {
	client := fake.NewClientset(gpuNode("t4-0", "t4", 4),
		trainJob("a", true, map[string]string{siakube.AnnKind: "rigid", siakube.AnnGPUs: "2", siakube.AnnMinGPUs: "", siakube.AnnMaxGPUs: ""}))
	conflicts, fail := 0, false
	client.PrependReactor("update", "jobs", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "" {
			return false, nil, nil
		}
		if fail {
			return true, nil, errors.New("etcd is down")
		}
		if conflicts < 2 {
			conflicts++
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, "a", errors.New("stale"))
		}
		return false, nil, nil
	})
	e := newEnv(t, client)
	fail = true
	e.settle()
	rep, err := e.c.RunRound(e.ctx)
	require.NoError(t, err, "a failing Job write is no failed round")
	require.NotEmpty(t, rep.JobErrors)
	assert.Contains(t, rep.JobErrors[0], "etcd is down")
	uid := string(e.job("a").UID)
	assert.Equal(t, siakube.PhaseStarting, e.c.entries[uid].rec.Phase, "not resumed: the write failed")
	assert.False(t, e.c.entries[uid].rec.Started)

	fail = false
	e.clock.Advance(time.Minute)
	e.round()
	assert.Equal(t, 2, conflicts)
	assert.False(t, siakube.Suspended(e.job("a")), "resumed after two conflicts")
	assert.Equal(t, siakube.PhaseRestoring, e.c.entries[uid].rec.Phase)
}

// TestLeaderElection: of two replicas only one leads; when it stops, the
// other takes over.
func TestLeaderElection(t *testing.T) {
	client := fake.NewClientset(gpuNode("t4-0", "t4", 4))
	var mu sync.Mutex
	leading := map[string]bool{}
	most := 0
	start := func(id string) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		c, err := New(client, Config{Namespace: "sia-system", Period: time.Hour, Recorder: record.NewFakeRecorder(100)})
		require.NoError(t, err)
		require.NoError(t, c.Start(ctx))
		go func() {
			_ = RunWithLeaderElection(ctx, client, c, LeaderConfig{Identity: id,
				LeaseDuration: 600 * time.Millisecond, RenewDeadline: 400 * time.Millisecond, RetryPeriod: 50 * time.Millisecond,
				OnLeading: func(on bool) {
					mu.Lock()
					defer mu.Unlock()
					leading[id] = on
					n := 0
					for _, l := range leading {
						if l {
							n++
						}
					}
					most = max(most, n)
				}})
		}()
		return cancel
	}
	stopA := start("a")
	stopB := start("b")
	defer stopB()
	who := func() string {
		mu.Lock()
		defer mu.Unlock()
		for id, l := range leading {
			if l {
				return id
			}
		}
		return ""
	}
	require.Eventually(t, func() bool { return who() != "" }, 5*time.Second, 10*time.Millisecond)
	first := who()
	if first == "a" {
		stopA()
	} else {
		stopB()
		defer stopA()
	}
	require.Eventually(t, func() bool { w := who(); return w != "" && w != first }, 10*time.Second, 10*time.Millisecond, "the other replica takes over")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, most, "never two leaders at once")
}

// TestSuspendedBehindTheBack: a running job that someone else suspends is
// resumed through the start gate (once its pods are gone), not left
// suspended while its record says running.
func TestSuspendedBehindTheBack(t *testing.T) {
	client := fake.NewClientset(gpuNode("t4-0", "t4", 4),
		trainJob("a", true, map[string]string{siakube.AnnKind: "rigid", siakube.AnnGPUs: "2", siakube.AnnMinGPUs: "", siakube.AnnMaxGPUs: ""}))
	e := newEnv(t, client)
	e.round()
	e.kubelet()
	for i := 0; i < 2; i++ {
		e.clock.Advance(time.Minute)
		e.round()
	}
	require.Equal(t, "running", e.job("a").Annotations[siakube.AnnOutState])
	j := e.job("a")
	j.Spec.Suspend = ptr.To(true)
	_, err := client.BatchV1().Jobs(ns).Update(e.ctx, j, metav1.UpdateOptions{})
	require.NoError(t, err)
	e.clock.Advance(time.Minute)
	e.round()
	assert.True(t, siakube.Suspended(e.job("a")), "its pods still run: it waits")
	e.kubelet()
	e.clock.Advance(time.Minute)
	e.round()
	assert.False(t, siakube.Suspended(e.job("a")), "resumed")
	assert.Equal(t, "restoring", e.job("a").Annotations[siakube.AnnOutState])
}

// TestRunLoop: Run rounds at start, then after an event once the debounce
// has passed on the injected clock.
func TestRunLoop(t *testing.T) {
	client := fake.NewClientset(gpuNode("t4-0", "t4", 4))
	e := newEnv(t, client)
	done := make(chan error, 1)
	go func() { done <- e.c.Run(e.ctx) }()
	require.Eventually(t, func() bool { return !e.c.LastRound().IsZero() }, 5*time.Second, 5*time.Millisecond, "a round at start")
	_, err := client.BatchV1().Jobs(ns).Create(e.ctx, trainJob("a", true, map[string]string{siakube.AnnKind: "rigid", siakube.AnnGPUs: "2", siakube.AnnMinGPUs: "", siakube.AnnMaxGPUs: ""}), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		e.clock.Advance(time.Second) // well below the 60 s period: only the debounced kick can start a round
		return !siakube.Suspended(e.job("a"))
	}, 5*time.Second, 10*time.Millisecond, "the new job starts after the debounce")
	assert.Less(t, e.clock.Now().Sub(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)), DefaultPeriod)
}

// TestAgeOnTheControllersClock: a job's age (which drives the restart
// factor, paper §3.3) is measured on the controller's clock from when the
// controller first saw the Job, not from the API server's creationTimestamp:
// with an injected clock behind the wall clock, the timestamp would lie in
// the clock's future, every job would have age 0 forever, and no running
// job would ever be resized.
func TestAgeOnTheControllersClock(t *testing.T) {
	j := trainJob("adaptive", true, map[string]string{siakube.AnnMinGPUs: "1", siakube.AnnMaxGPUs: "8"})
	j.CreationTimestamp = metav1.NewTime(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) // ahead of the manual clock
	client := fake.NewClientset(gpuNode("a100-0", "a100", 8), j)
	var offered int // entries the last round's matrix offered the solver
	e := newEnvOptions(t, client, &sia.Options{Observer: func(ev sia.Event) {
		if ev.Stage == sia.StageMatrix {
			offered = ev.Offered
		}
	}})
	require.Equal(t, 1, e.round().Actions["start"])
	e.kubelet()
	e.clock.Advance(2 * time.Hour)
	rep := e.round()
	require.NotNil(t, rep.Plan)
	require.Len(t, rep.Plan.Decisions, 1)
	// Age 0 gives the restart factor r = 0, which drops every configuration
	// but the running job's current one (its value (r·G)^p is infinite).
	assert.Greater(t, offered, 1, "a job running for 2 h has a restart factor above 0: other configurations are offered")
}
