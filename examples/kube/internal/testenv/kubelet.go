package testenv

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"
)

// Labels and annotations the real Job controller puts on its pods.
const (
	JobNameLabel         = "batch.kubernetes.io/job-name"
	ControllerUIDLabel   = "batch.kubernetes.io/controller-uid"
	CompletionIndexLabel = "batch.kubernetes.io/job-completion-index"
)

// FakeKubelet plays, against the real API server and as the admin, the
// parts of a cluster the test server does not run. Exactly what it fakes:
//
//   - The Job controller (kube-controller-manager's), for Indexed Jobs
//     only: while a Job is not suspended and not finished it keeps one pod per
//     completion index 0..parallelism-1 (named <job>-<index>-<suffix>, with
//     the Job controller's labels, the completion-index annotation and a
//     controlling owner reference), deletes the pods of higher indexes and,
//     on suspend, all of them (a normal, graceful delete); it keeps
//     status.active, status.ready and status.startTime (set at the first
//     running pod, cleared while suspended, as the real controller does so
//     that the template's scheduling directives may change). Finish marks a
//     Job complete. No backoff, pod failure policy, or TTL.
//   - The scheduler: a pending pod is bound (pods/binding) to a node its
//     required node affinity and nodeSelector select, that is not cordoned
//     and whose NoSchedule/NoExecute taints it tolerates: the one with the
//     most free GPUs (ties by name). It does NOT refuse a node whose GPUs
//     are all taken: it binds anyway, so that an infeasible plan shows up as
//     an overcommitted node (Overcommitted) rather than a pod pending.
//   - The kubelet: a bound pending pod becomes Running and Ready at once
//     (no images, no containers); a terminating pod is removed (the kubelet's
//     confirmation, a delete with grace period 0).
//   - Pod garbage collection: pods bound to a node that no longer exists
//     are removed.
//   - The node lifecycle controller, once: CreateNode removes the
//     not-ready taint the API server puts on every new node.
//
// It is not safe for concurrent use of Step; Overcommitted may run anytime.
type FakeKubelet struct {
	Client kubernetes.Interface
	// Resource is the GPU resource (default "nvidia.com/gpu").
	Resource corev1.ResourceName
	// Now is the time written into statuses (default time.Now).
	Now func() time.Time

	mu sync.Mutex
	// starts counts, per Job UID, the times its pods went from none to
	// some running: a job resumed.
	starts  map[types.UID]int
	running map[types.UID]bool
	seq     int
}

func (k *FakeKubelet) res() corev1.ResourceName {
	if k.Resource == "" {
		return "nvidia.com/gpu"
	}
	return k.Resource
}

func (k *FakeKubelet) now() metav1.Time {
	if k.Now != nil {
		return metav1.NewTime(k.Now())
	}
	return metav1.Now()
}

// Settle runs Step until the cluster stops changing (at most 20 passes).
func (k *FakeKubelet) Settle(ctx context.Context) error {
	for range 20 {
		changed, err := k.Step(ctx)
		if err != nil {
			return err
		}
		if !changed {
			return nil
		}
	}
	return fmt.Errorf("testenv: fake kubelet: cluster still changing after 20 passes")
}

// Step does one pass of every fake part and reports whether it changed
// anything.
func (k *FakeKubelet) Step(ctx context.Context) (bool, error) {
	nodes, err := k.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	pods, err := k.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	jobs, err := k.Client.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	changed := false
	for _, step := range []func(context.Context, []corev1.Node, []corev1.Pod, []batchv1.Job) (bool, error){
		k.kubelet, k.schedule, k.jobController,
	} {
		ch, err := step(ctx, nodes.Items, pods.Items, jobs.Items)
		if err != nil {
			return changed, err
		}
		changed = changed || ch
	}
	return changed, nil
}

// kubelet removes terminating pods and pods of deleted nodes, and runs bound
// pending pods.
func (k *FakeKubelet) kubelet(ctx context.Context, nodes []corev1.Node, pods []corev1.Pod, _ []batchv1.Job) (bool, error) {
	exists := map[string]bool{}
	for _, n := range nodes {
		exists[n.Name] = true
	}
	changed := false
	for i := range pods {
		p := &pods[i]
		gone := p.Spec.NodeName != "" && !exists[p.Spec.NodeName]
		if p.DeletionTimestamp != nil || gone || (p.Spec.NodeName == "" && p.DeletionTimestamp != nil) {
			err := k.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err != nil && !apierrors.IsNotFound(err) {
				return changed, fmt.Errorf("testenv: fake kubelet: remove pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			changed = true
			continue
		}
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
			continue
		}
		now := k.now()
		p.Status.Phase = corev1.PodRunning
		p.Status.StartTime = &now
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		if _, err := k.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return changed, fmt.Errorf("testenv: fake kubelet: run pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		changed = true
	}
	return changed, nil
}

// schedule binds pending pods.
func (k *FakeKubelet) schedule(ctx context.Context, nodes []corev1.Node, pods []corev1.Pod, _ []batchv1.Job) (bool, error) {
	used := map[string]int{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			used[p.Spec.NodeName] += podGPUs(p, k.res())
		}
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].Name < nodes[b].Name })
	changed := false
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		sel := nodeaffinity.GetRequiredNodeAffinity(p)
		best, bestFree := "", 0
		for j := range nodes {
			n := &nodes[j]
			if ok, _ := sel.Match(n); !ok || n.Spec.Unschedulable || !tolerates(p, n) {
				continue
			}
			q := n.Status.Allocatable[k.res()]
			free := int(q.Value()) - used[n.Name]
			if best == "" || free > bestFree {
				best, bestFree = n.Name, free
			}
		}
		if best == "" {
			continue // no node selected: stays pending, as with the real scheduler
		}
		err := k.Client.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: best},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return changed, fmt.Errorf("testenv: fake scheduler: bind pod %s/%s to %s: %w", p.Namespace, p.Name, best, err)
		}
		used[best] += podGPUs(p, k.res())
		changed = true
	}
	return changed, nil
}

func tolerates(p *corev1.Pod, n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		ok := false
		for _, tol := range p.Spec.Tolerations {
			keyOK := tol.Key == "" && tol.Operator == corev1.TolerationOpExists || tol.Key == t.Key
			valOK := tol.Operator == corev1.TolerationOpExists || tol.Value == t.Value
			effOK := tol.Effect == "" || tol.Effect == t.Effect
			ok = ok || keyOK && valOK && effOK
		}
		if !ok {
			return false
		}
	}
	return true
}

// jobController keeps the pods of Indexed Jobs and their status.
func (k *FakeKubelet) jobController(ctx context.Context, _ []corev1.Node, pods []corev1.Pod, jobs []batchv1.Job) (bool, error) {
	podsOf := map[types.UID][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "Job" {
			podsOf[ref.UID] = append(podsOf[ref.UID], p)
		}
	}
	changed := false
	for i := range jobs {
		j := &jobs[i]
		if j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion || j.DeletionTimestamp != nil {
			continue
		}
		ch, err := k.syncJob(ctx, j, podsOf[j.UID])
		if err != nil {
			return changed, err
		}
		changed = changed || ch
	}
	return changed, nil
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func (k *FakeKubelet) syncJob(ctx context.Context, j *batchv1.Job, pods []*corev1.Pod) (bool, error) {
	suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
	want := 0
	if !suspended && !finished(j) && j.Spec.Parallelism != nil {
		want = int(*j.Spec.Parallelism)
	}
	changed := false
	have := map[int]bool{}
	active, ready := 0, 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		idx, err := strconv.Atoi(p.Annotations[CompletionIndexLabel])
		if err != nil || idx >= want || have[idx] {
			if err := k.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return changed, fmt.Errorf("testenv: fake job controller: delete pod %s/%s: %w", p.Namespace, p.Name, err)
			}
			changed = true
			continue
		}
		have[idx] = true
		active++
		if p.Status.Phase == corev1.PodRunning {
			ready++
		}
	}
	for idx := range want {
		if have[idx] {
			continue
		}
		if err := k.createPod(ctx, j, idx); err != nil {
			return changed, err
		}
		active++
		changed = true
	}
	k.mu.Lock()
	if k.starts == nil {
		k.starts, k.running = map[types.UID]int{}, map[types.UID]bool{}
	}
	if ready > 0 && !k.running[j.UID] {
		k.starts[j.UID]++
	}
	k.running[j.UID] = ready > 0
	k.mu.Unlock()

	st := j.Status.DeepCopy()
	st.Active, st.Ready = int32(active), ptr.To(int32(ready))
	switch {
	case suspended:
		st.StartTime = nil
	case st.StartTime == nil && active > 0 && !finished(j):
		now := k.now()
		st.StartTime = &now
	}
	if equalStatus(st, &j.Status) {
		return changed, nil
	}
	j.Status = *st
	if _, err := k.Client.BatchV1().Jobs(j.Namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return true, nil // the next pass sees the new version
		}
		return changed, fmt.Errorf("testenv: fake job controller: status of job %s/%s: %w", j.Namespace, j.Name, err)
	}
	return true, nil
}

func equalStatus(a, b *batchv1.JobStatus) bool {
	ra, rb := ptr.Deref(a.Ready, 0), ptr.Deref(b.Ready, 0)
	return a.Active == b.Active && ra == rb && (a.StartTime == nil) == (b.StartTime == nil)
}

func (k *FakeKubelet) createPod(ctx context.Context, j *batchv1.Job, idx int) error {
	tmpl := j.Spec.Template.DeepCopy()
	labels := map[string]string{}
	for kk, v := range tmpl.Labels {
		labels[kk] = v
	}
	labels[JobNameLabel] = j.Name
	labels[ControllerUIDLabel] = string(j.UID)
	labels[CompletionIndexLabel] = strconv.Itoa(idx)
	ann := map[string]string{}
	for kk, v := range tmpl.Annotations {
		ann[kk] = v
	}
	ann[CompletionIndexLabel] = strconv.Itoa(idx)
	k.mu.Lock()
	k.seq++
	seq := k.seq
	k.mu.Unlock()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            fmt.Sprintf("%s-%d-%d", j.Name, idx, seq),
			Namespace:       j.Namespace,
			Labels:          labels,
			Annotations:     ann,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: tmpl.Spec,
	}
	p.Spec.Hostname = fmt.Sprintf("%s-%d", j.Name, idx)
	if _, err := k.Client.CoreV1().Pods(j.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("testenv: fake job controller: create pod %d of job %s/%s: %w", idx, j.Namespace, j.Name, err)
	}
	return nil
}

// Starts returns how many times the Job's pods went from none running to
// some running (the job was resumed), as the fake kubelet saw it.
func (k *FakeKubelet) Starts(uid types.UID) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.starts[uid]
}

// Finish completes a Job as the Job controller would when every index
// succeeded: its pods Succeeded, status succeeded/completedIndexes set, the
// SuccessCriteriaMet and Complete conditions True.
func (k *FakeKubelet) Finish(ctx context.Context, namespace, name string) error {
	j, err := k.Client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pods, err := k.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: ControllerUIDLabel + "=" + string(j.UID)})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		p.Status.Phase = corev1.PodSucceeded
		for c := range p.Status.Conditions {
			if p.Status.Conditions[c].Type == corev1.PodReady || p.Status.Conditions[c].Type == corev1.ContainersReady {
				p.Status.Conditions[c].Status = corev1.ConditionFalse
			}
		}
		if _, err := k.Client.CoreV1().Pods(namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("testenv: finish pod %s: %w", p.Name, err)
		}
	}
	n := int32(1)
	if j.Spec.Completions != nil {
		n = *j.Spec.Completions
	}
	now := k.now()
	if j.Status.StartTime == nil {
		j.Status.StartTime = &now
	}
	j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
	j.Status.Succeeded = n
	j.Status.CompletedIndexes = "0"
	if n > 1 {
		j.Status.CompletedIndexes = fmt.Sprintf("0-%d", n-1)
	}
	j.Status.CompletionTime = &now
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now})
	if _, err := k.Client.BatchV1().Jobs(namespace).UpdateStatus(ctx, j, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("testenv: finish job %s/%s: %w", namespace, name, err)
	}
	return nil
}

// NodeUse is one node's GPUs and the GPUs its bound, unfinished pods hold.
type NodeUse struct {
	Node              string
	Allocatable, Used int
	Pods              []string
}

// Overcommitted returns the nodes whose bound, unfinished pods (running or
// terminating) request more GPUs than the node has allocatable.
func Overcommitted(ctx context.Context, cs kubernetes.Interface, r corev1.ResourceName) ([]NodeUse, error) {
	if r == "" {
		r = "nvidia.com/gpu"
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	use := map[string]*NodeUse{}
	for _, n := range nodes.Items {
		q := n.Status.Allocatable[r]
		use[n.Name] = &NodeUse{Node: n.Name, Allocatable: int(q.Value())}
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		u := use[p.Spec.NodeName]
		if u == nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if g := podGPUs(p, r); g > 0 {
			u.Used += g
			u.Pods = append(u.Pods, fmt.Sprintf("%s/%s=%d", p.Namespace, p.Name, g))
		}
	}
	var out []NodeUse
	for _, u := range use {
		if u.Used > u.Allocatable {
			out = append(out, *u)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Node < out[b].Node })
	return out, nil
}

func podGPUs(p *corev1.Pod, r corev1.ResourceName) int {
	sum := int64(0)
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[r]; ok {
			sum += q.Value()
		} else if q, ok := c.Resources.Limits[r]; ok {
			sum += q.Value()
		}
	}
	return int(sum)
}

// CreateNode creates a Ready node with gpus allocatable GPUs (resource r,
// default nvidia.com/gpu) and the given labels, as a kubelet registering
// and the node lifecycle controller would leave it: the API server's
// TaintNodesByCondition admission taints every new node
// node.kubernetes.io/not-ready:NoSchedule, and with no
// kube-controller-manager nobody would remove it, so CreateNode does.
func CreateNode(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string, r corev1.ResourceName, gpus int) error {
	if r == "" {
		r = "nvidia.com/gpu"
	}
	n, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("testenv: node %s: %w", name, err)
	}
	q := *resource.NewQuantity(int64(gpus), resource.DecimalSI)
	n.Status.Capacity = corev1.ResourceList{r: q, corev1.ResourcePods: resource.MustParse("110")}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletReady"}}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("testenv: node %s: status: %w", name, err)
	}
	var kept []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			kept = append(kept, t)
		}
	}
	if len(kept) != len(n.Spec.Taints) {
		n.Spec.Taints = kept
		if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("testenv: node %s: taints: %w", name, err)
		}
	}
	return nil
}
