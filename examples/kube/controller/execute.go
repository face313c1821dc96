package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sia-sched/sia/examples/kube/siakube"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	batchclient "k8s.io/client-go/kubernetes/typed/batch/v1"
	"k8s.io/client-go/util/retry"
)

// ConditionScheduled is the Job condition the controller maintains: True
// while the job holds GPUs, False with the queue reason (or
// InvalidAnnotations) otherwise.
const ConditionScheduled batchv1.JobConditionType = "SiaScheduled"

// errNotOurs: the Job changed identity or left the opt-in between list and
// write; the controller does not touch it.
var errNotOurs = errors.New("job is no longer the opted-in Job the round read")

// execute makes the Jobs match their records. GPUs are committed per node in
// snapshot order: a job is resumed only when, on each of its nodes, the GPUs
// of the pods that may run there (other pods, jobs running or restoring, and
// the pods still terminating) leave room for it, so the pods the controller
// lets run never overcommit a node.
func (c *Controller) execute(ctx context.Context, now time.Time, jobs []*job, nodes []*corev1.Node, external map[string]int, rep *Report) {
	alloc := map[string]int{}
	for _, n := range nodes {
		q := n.Status.Allocatable[resourceOf(c.cfg.Nodes)]
		alloc[n.Name] = int(min(q.Value(), siakube.MaxJobGPUs))
	}
	commit := map[string]int{}
	for n, g := range external {
		commit[n] += g
	}
	for _, j := range jobs {
		if j.e.rec.Phase == siakube.PhaseRestoring || j.e.rec.Phase == siakube.PhaseRunning {
			for _, pn := range j.e.rec.Assigned.PerNode {
				commit[pn.Node] += pn.GPUs
			}
		} else {
			for n, g := range j.onNode {
				commit[n] += g
			}
		}
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			rep.JobErrors = append(rep.JobErrors, fmt.Sprintf("job %s: not written: %v", j.id, ctx.Err()))
			continue
		}
		c.executeJob(ctx, now, j, alloc, commit, rep)
	}
}

func (c *Controller) executeJob(ctx context.Context, now time.Time, j *job, alloc, commit map[string]int, rep *Report) {
	r := j.e.rec
	a := r.Assigned
	status := map[string]string{siakube.AnnOutState: string(r.Phase), siakube.AnnOutReason: r.Reason}
	var mutate func(*batchv1.Job) bool
	prev := *r // restored when the write fails: the Job did not change
	switch r.Phase {
	case siakube.PhaseQueued, siakube.PhaseStopping:
		mutate = func(o *batchv1.Job) bool {
			ch := siakube.SetSuspend(o, true)
			return siakube.SetAnnotations(&o.Annotations, status) || ch
		}
	case siakube.PhaseStarting:
		mutate = c.startStep(j, alloc, commit, status)
	default: // restoring, running
		batch := siakube.BatchAnnotations(a, j.layout())
		mutate = func(o *batchv1.Job) bool {
			ch := siakube.SetAnnotations(&o.Annotations, status)
			return siakube.SetAnnotations(&o.Annotations, batch) || ch
		}
		if j.step == siakube.StepBatch {
			c.publishToPods(ctx, j, batch, rep)
		}
	}
	o, err := c.writeJob(ctx, j.obj, mutate, rep)
	if err != nil || o == nil {
		*r = prev
	}
	if err != nil {
		rep.JobErrors = append(rep.JobErrors, err.Error())
		return
	}
	if o != nil {
		j.obj = o
		c.showReason(ctx, j, rep)
	}
}

// startStep returns the write that moves a starting job on: suspend it
// (its old pods must stop), wait for its pods to be gone and its nodes'
// GPUs to be free, then configure and resume it in one update. A job whose
// spec already carries the assignment (same nodes and GPUs per pod) is
// resized in place through its parallelism.
func (c *Controller) startStep(j *job, alloc, commit map[string]int, status map[string]string) func(*batchv1.Job) bool {
	r := j.e.rec
	a := r.Assigned
	res := resourceOf(c.cfg.Nodes)
	layout := j.layout()
	fits := func(own map[string]int) (bool, string) {
		for _, pn := range a.PerNode {
			if free := alloc[pn.Node] - (commit[pn.Node] - own[pn.Node]); pn.GPUs > free {
				return false, fmt.Sprintf("waiting for %d GPUs on node %s (%d free)", pn.GPUs, pn.Node, max(free, 0))
			}
		}
		return true, ""
	}
	take := func(own map[string]int) {
		for n, g := range own {
			commit[n] -= g
		}
		for _, pn := range a.PerNode {
			commit[pn.Node] += pn.GPUs
		}
		r.Phase, r.Started, r.RestoreUntil = siakube.PhaseRestoring, true, time.Time{}
		status[siakube.AnnOutState] = string(r.Phase)
	}
	batch := siakube.BatchAnnotations(a, layout)
	inPlace := !siakube.Suspended(j.obj) && siakube.Configured(j.obj, a, layout, res)
	switch {
	case inPlace:
		ok, why := fits(j.onNode)
		if !ok {
			status[siakube.AnnOutReason] = why
			break
		}
		take(j.onNode)
		pods, _ := a.Pods(layout)
		return func(o *batchv1.Job) bool {
			p := int32(pods)
			ch := o.Spec.Parallelism == nil || *o.Spec.Parallelism != p
			o.Spec.Parallelism = &p
			o.Spec.Completions = &p
			ch = siakube.SetAnnotations(&o.Annotations, batch) || ch
			return siakube.SetAnnotations(&o.Annotations, status) || ch
		}
	case !siakube.Suspended(j.obj):
		status[siakube.AnnOutReason] = "suspending: its pods stop before it restarts on the new GPUs"
	case len(j.pods) > 0 || j.obj.Status.Active > 0:
		status[siakube.AnnOutReason] = fmt.Sprintf("waiting for %d pod(s) to stop", max(len(j.pods), int(j.obj.Status.Active)))
	default:
		ok, why := fits(nil)
		if !ok {
			status[siakube.AnnOutReason] = why
			break
		}
		take(nil)
		return func(o *batchv1.Job) bool {
			siakube.Configure(o, a, layout, res)
			siakube.SetAnnotations(&o.Annotations, batch)
			siakube.SetAnnotations(&o.Annotations, status)
			siakube.SetSuspend(o, false)
			return true
		}
	}
	return func(o *batchv1.Job) bool {
		ch := siakube.SetSuspend(o, true)
		return siakube.SetAnnotations(&o.Annotations, status) || ch
	}
}

// writeJob applies mutate to the Job and updates it when mutate reports a
// change: first on the cached copy, then, on a conflict, on a fresh read
// (retry.RetryOnConflict). A Job deleted, re-created or no longer opted in
// meanwhile is left alone.
func (c *Controller) writeJob(ctx context.Context, cached *batchv1.Job, mutate func(*batchv1.Job) bool, rep *Report) (*batchv1.Job, error) {
	jobs := c.client.BatchV1().Jobs(cached.Namespace)
	read := jobReader(ctx, jobs, cached)
	latest := cached
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := read()
		if err != nil {
			return err
		}
		if !mutate(o) {
			latest = o
			return nil
		}
		up, err := jobs.Update(ctx, o, metav1.UpdateOptions{})
		if err == nil {
			rep.Writes++
			latest = up
		}
		return err
	})
	switch {
	case err == nil:
		return latest, nil
	case apierrors.IsNotFound(err) || errors.Is(err, errNotOurs):
		c.log.Info("sia: job gone before its write", "job", siakube.JobID(cached))
		return nil, nil
	}
	return nil, fmt.Errorf("job %s: %w", siakube.JobID(cached), err)
}

// jobReader returns the reads of one optimistic-concurrency write: the
// cached copy first, then, on each retry after a conflict, a fresh Get. A
// Job deleted and re-created under its name (another UID) or no longer
// opted in gives errNotOurs.
func jobReader(ctx context.Context, jobs batchclient.JobInterface, cached *batchv1.Job) func() (*batchv1.Job, error) {
	first := true
	return func() (*batchv1.Job, error) {
		var o *batchv1.Job
		if first {
			o, first = cached.DeepCopy(), false
		} else {
			var err error
			if o, err = jobs.Get(ctx, cached.Name, metav1.GetOptions{}); err != nil {
				return nil, err
			}
		}
		if o.UID != cached.UID || !siakube.Managed(o) {
			return nil, errNotOurs
		}
		return o, nil
	}
}

// showReason keeps the job's SiaScheduled condition and, when the reason
// changes, records an Event (Normal for a start, Warning for a wait).
func (c *Controller) showReason(ctx context.Context, j *job, rep *Report) {
	r := j.e.rec
	switch r.Phase {
	case siakube.PhaseQueued, siakube.PhaseStopping:
		reason := camel(r.Reason)
		if c.setCondition(ctx, j.obj, corev1.ConditionFalse, reason, "queued: "+r.Reason, rep) {
			c.cfg.Recorder.Eventf(j.obj, corev1.EventTypeNormal, "SiaQueued", "queued: %s", r.Reason)
		}
	default:
		msg := fmt.Sprintf("%d %s GPU(s) on %s", r.Assigned.GPUs, r.Assigned.Type, r.Assigned.NodesString())
		if c.setCondition(ctx, j.obj, corev1.ConditionTrue, camel(string(r.Phase)), msg, rep) {
			c.cfg.Recorder.Eventf(j.obj, corev1.EventTypeNormal, "SiaScheduled", "%s: %s", r.Phase, msg)
		}
	}
}

// setCondition sets the SiaScheduled condition of a Job's status and
// reports whether it changed. Errors are reported, not returned.
func (c *Controller) setCondition(ctx context.Context, cached *batchv1.Job, st corev1.ConditionStatus, reason, msg string, rep *Report) bool {
	for _, cd := range cached.Status.Conditions {
		if cd.Type == ConditionScheduled && cd.Status == st && cd.Reason == reason && cd.Message == msg {
			return false
		}
	}
	jobs := c.client.BatchV1().Jobs(cached.Namespace)
	read := jobReader(ctx, jobs, cached)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := read()
		if err != nil {
			return err
		}
		now := metav1.NewTime(c.cfg.Clock.Now())
		found := false
		for i := range o.Status.Conditions {
			cd := &o.Status.Conditions[i]
			if cd.Type != ConditionScheduled {
				continue
			}
			found = true
			if cd.Status != st {
				cd.LastTransitionTime = now
			}
			cd.Status, cd.Reason, cd.Message, cd.LastProbeTime = st, reason, msg, now
		}
		if !found {
			o.Status.Conditions = append(o.Status.Conditions, batchv1.JobCondition{Type: ConditionScheduled, Status: st,
				Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now})
		}
		_, err = jobs.UpdateStatus(ctx, o, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, errNotOurs) {
		rep.JobErrors = append(rep.JobErrors, fmt.Sprintf("job %s: condition: %v", siakube.JobID(cached), err))
	}
	return true
}

// publishToPods patches the batch annotations onto the job's live pods, so
// that a running job sees a new batch size through its downward-API volume
// without a restart.
func (c *Controller) publishToPods(ctx context.Context, j *job, batch map[string]string, rep *Report) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": batch}})
	if err != nil {
		return
	}
	for _, p := range j.pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			rep.JobErrors = append(rep.JobErrors, fmt.Sprintf("job %s: pod %s: %v", j.id, p.Name, err))
		}
	}
}

func resourceOf(c siakube.NodeConfig) corev1.ResourceName {
	if c.Resource == "" {
		return siakube.DefaultGPUResource
	}
	return c.Resource
}

// camel turns "lost-optimisation" into "LostOptimisation" (a condition
// reason); anything but letters and digits separates words.
func camel(s string) string {
	out := make([]byte, 0, len(s))
	up := true
	for i := 0; i < len(s) && len(out) < 64; i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z':
			if up {
				ch -= 'a' - 'A'
			}
			out, up = append(out, ch), false
		case ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' && len(out) > 0:
			out, up = append(out, ch), false
		default:
			up = true
		}
	}
	if len(out) == 0 {
		return "Unknown"
	}
	return string(out)
}
