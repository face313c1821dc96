package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sia-sched/sia/examples/kube/controller"
	"github.com/sia-sched/sia/examples/kube/internal/testenv"
	"github.com/sia-sched/sia/examples/kube/siakube"
	"github.com/sia-sched/sia/sia"
)

// checkRound checks, after a round and the fake kubelet's settling, what
// must hold after every round: no node overcommitted by the pods the
// controller let run, every decision of the plan became the right change of
// its Job, queued jobs show their reason, the pods of running jobs sit on
// exactly their assigned nodes, and no job was resumed more often than the
// controller counted.
func (c *cluster) checkRound(ctx context.Context, round int, rep *controller.Report) {
	t := c.t
	t.Helper()
	over, err := testenv.Overcommitted(ctx, c.admin, "")
	require.NoError(t, err)
	require.Empty(t, over, "round %d: overcommitted nodes", round)

	pods, err := c.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	podsOf := map[string][]corev1.Pod{}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && p.Status.Phase != corev1.PodSucceeded {
			podsOf[p.Namespace+"/"+ref.Name] = append(podsOf[p.Namespace+"/"+ref.Name], p)
		}
	}
	if rep.Plan == nil {
		return
	}
	for _, d := range rep.Plan.Decisions {
		ns, name, _ := strings.Cut(d.Job, "/")
		j, err := c.admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // deleted during the round
		}
		require.NoError(t, err)
		c.checkDecision(round, d, j, podsOf[d.Job])
	}
	for id := range rep.Invalid {
		ns, name, _ := strings.Cut(id, "/")
		j, err := c.admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		require.NoError(t, err)
		cd := condition(j)
		if assert.NotNil(t, cd, "round %d: invalid job %s has no %s condition", round, id, controller.ConditionScheduled) {
			assert.Equal(t, corev1.ConditionFalse, cd.Status, "round %d: invalid job %s", round, id)
			assert.NotEmpty(t, cd.Message, "round %d: invalid job %s", round, id)
		}
		assert.True(t, suspended(j), "round %d: invalid job %s runs", round, id)
	}
	c.checkStarts(ctx, round)
}

func (c *cluster) checkDecision(round int, d sia.Decision, j *batchv1.Job, pods []corev1.Pod) {
	t := c.t
	t.Helper()
	state := siakube.Phase(j.Annotations[siakube.AnnOutState])
	where := fmt.Sprintf("round %d: %s %s (state %s, reason %q)", round, d.Action, d.Job, state, j.Annotations[siakube.AnnOutReason])
	cd := condition(j)
	require.NotNil(t, cd, "%s: no %s condition", where, controller.ConditionScheduled)
	switch d.Action {
	case sia.Start, sia.Resize, sia.Migrate, sia.Move, sia.Keep:
		allowed := []siakube.Phase{siakube.PhaseStarting, siakube.PhaseRestoring}
		if d.Action == sia.Keep || d.Action == sia.Move {
			allowed = append(allowed, siakube.PhaseRunning)
		}
		require.Contains(t, allowed, state, where)
		assert.Equal(t, corev1.ConditionTrue, cd.Status, where)
		want := placementOf(d)
		if state == siakube.PhaseStarting {
			// Waiting for its old pods or its GPUs: suspended meanwhile.
			assert.True(t, suspended(j), "%s: a starting job is suspended until it is configured", where)
			return
		}
		require.False(t, suspended(j), where)
		assert.Equal(t, nodesString(want), j.Annotations[siakube.AnnOutNodes], where)
		assert.Equal(t, sortedKeys(want), affinityNodes(j), "%s: node affinity", where)
		assert.Equal(t, strconv.Itoa(d.LocalBatch), j.Annotations[siakube.AnnOutLocalBatch], where)
		assert.Equal(t, strconv.Itoa(d.AccumSteps), j.Annotations[siakube.AnnOutAccumSteps], where)
		// The pods the fake ran sit on exactly the assigned GPUs.
		got := map[string]int{}
		for _, p := range pods {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				got[p.Spec.NodeName] += gpusOf(&p)
			}
		}
		assert.Equal(t, want, got, "%s: GPUs of its pods per node", where)
	case sia.Preempt, sia.Queue:
		require.Contains(t, []siakube.Phase{siakube.PhaseQueued, siakube.PhaseStopping}, state, where)
		assert.True(t, suspended(j), where)
		assert.Equal(t, corev1.ConditionFalse, cd.Status, where)
		assert.NotEqual(t, sia.ReasonNone, d.Reason, where)
		assert.Contains(t, cd.Message, d.Reason.String(), "%s: the condition shows the queue reason", where)
		assert.Equal(t, d.Reason.String(), j.Annotations[siakube.AnnOutReason], where)
		assert.Empty(t, pods, "%s: pods left after the fake settled", where)
	default:
		t.Fatalf("%s: unknown action", where)
	}
}

// checkStarts: the fake kubelet saw every job resumed at most 1 + its
// record's restart count times (a controller that forgot a running job
// would start it again).
func (c *cluster) checkStarts(ctx context.Context, round int) {
	t := c.t
	t.Helper()
	recs := c.records(ctx)
	jobs, err := c.admin.BatchV1().Jobs("").List(ctx, metav1.ListOptions{LabelSelector: siakube.LabelManaged + "=true"})
	require.NoError(t, err)
	for _, j := range jobs.Items {
		if finishedJob(&j) {
			continue // its record is collected
		}
		starts := c.kube.Starts(j.UID)
		r := recs[string(j.UID)]
		if r == nil {
			assert.Zero(t, starts, "round %d: job %s/%s ran without a record", round, j.Namespace, j.Name)
			continue
		}
		assert.LessOrEqual(t, starts, 1+r.Restarts, "round %d: job %s started %d times with %d restarts counted", round, r.Job, starts, r.Restarts)
	}
}

// records reads the controller's records (as the admin), by Job UID.
func (c *cluster) records(ctx context.Context) map[string]*siakube.Record {
	c.t.Helper()
	cms, err := c.admin.CoreV1().ConfigMaps(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: controller.LabelRecord + "=true"})
	require.NoError(c.t, err)
	out := map[string]*siakube.Record{}
	for _, cm := range cms.Items {
		r, _, err := siakube.DecodeRecord([]byte(cm.Data[controller.RecordKey]))
		require.NoError(c.t, err, "record %s", cm.Name)
		out[r.UID] = r
	}
	return out
}

func condition(j *batchv1.Job) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == controller.ConditionScheduled {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func suspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

func placementOf(d sia.Decision) map[string]int {
	out := map[string]int{}
	for _, g := range d.Allocation.Placement {
		out[g.Node]++
	}
	return out
}

func nodesString(m map[string]int) string {
	var parts []string
	for _, n := range sortedKeys(m) {
		parts = append(parts, n+"="+strconv.Itoa(m[n]))
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// affinityNodes returns the node names the Job's required node affinity
// selects by metadata.name, sorted.
func affinityNodes(j *batchv1.Job) []string {
	a := j.Spec.Template.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	var out []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn {
				out = append(out, f.Values...)
			}
		}
	}
	sort.Strings(out)
	return out
}

func gpusOf(p *corev1.Pod) int {
	n := 0
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[siakube.DefaultGPUResource]; ok {
			n += int(q.Value())
		}
	}
	return n
}

func testenvOvercommitted(ctx context.Context, c *cluster) ([]testenv.NodeUse, error) {
	return testenv.Overcommitted(ctx, c.admin, "")
}

// logRound logs a round's decisions (go test -v).
func logRound(t *testing.T, round int, rep *controller.Report) {
	t.Helper()
	if rep.Plan == nil {
		t.Logf("round %d: no plan; phases %v", round, rep.Phases)
		return
	}
	var parts []string
	for _, d := range rep.Plan.Decisions {
		s := d.Job + ":" + d.Action.String()
		if d.Allocation.GPUs > 0 {
			s += fmt.Sprintf("(%d %s)", d.Allocation.GPUs, d.Allocation.Type)
		}
		if d.Reason != sia.ReasonNone {
			s += "[" + d.Reason.String() + "]"
		}
		parts = append(parts, s)
	}
	t.Logf("round %d: phases %v gpus %v writes %d skipped %v; %s", round, rep.Phases, rep.GPUs, rep.Writes, rep.Skipped, strings.Join(parts, " "))
}

func finishedJob(j *batchv1.Job) bool {
	for _, cd := range j.Status.Conditions {
		if cd.Type == batchv1.JobComplete && cd.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
