package siakube

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// JobID returns the sia job ID of a Job: namespace/name.
func JobID(j *batchv1.Job) string { return j.Namespace + "/" + j.Name }

// Managed reports whether a Job opted in (LabelManaged) and is an Indexed
// Job; the controller never touches any other Job.
func Managed(j *batchv1.Job) bool {
	return j != nil && j.Labels[LabelManaged] == LabelManagedValue
}

// Indexed reports whether a Job has completionMode Indexed.
func Indexed(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

// Finished reports whether a Job completed or failed.
func Finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// Suspended reports whether spec.suspend is true.
func Suspended(j *batchv1.Job) bool { return j.Spec.Suspend != nil && *j.Spec.Suspend }

// SetSuspend sets spec.suspend and reports whether it changed.
func SetSuspend(j *batchv1.Job, s bool) bool {
	if Suspended(j) == s {
		return false
	}
	j.Spec.Suspend = &s
	return true
}

// BatchAnnotations are the annotations that publish an assignment to the
// job's pods (and on the Job for kubectl): type, nodes, GPUs per pod,
// replicas and batch size.
func BatchAnnotations(a Assignment, l PodLayout) map[string]string {
	_, per := a.Pods(l)
	return map[string]string{
		AnnOutGPUType:     a.Type,
		AnnOutNodes:       a.NodesString(),
		AnnOutGPUsPerPod:  strconv.Itoa(per),
		AnnOutReplicas:    strconv.Itoa(a.Replicas),
		AnnOutLocalBatch:  strconv.Itoa(a.LocalBatch),
		AnnOutAccumSteps:  strconv.Itoa(a.AccumSteps),
		AnnOutGlobalBatch: strconv.Itoa(a.GlobalBatch),
	}
}

// SetAnnotations merges kv into m (allocating it) and reports whether
// anything changed.
func SetAnnotations(m *map[string]string, kv map[string]string) bool {
	if *m == nil {
		*m = map[string]string{}
	}
	changed := false
	for k, v := range kv {
		if (*m)[k] != v {
			(*m)[k] = v
			changed = true
		}
	}
	return changed
}

// Configure writes an assignment into a suspended Job's spec: parallelism
// and completions (equal, as an elastic Indexed Job needs), the pod template's
// required node affinity (exactly the assigned nodes, by name), the GPU
// request and limit of the GPU container (the first container already asking
// for GPUs, or the first container) and the batch annotations of the
// template. Other node-affinity terms (preferred ones) are kept.
func Configure(j *batchv1.Job, a Assignment, l PodLayout, r corev1.ResourceName) {
	if r == "" {
		r = DefaultGPUResource
	}
	pods, per := a.Pods(l)
	p := int32(pods)
	j.Spec.Parallelism = &p
	c := int32(pods)
	j.Spec.Completions = &c
	spec := &j.Spec.Template.Spec
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	// One term per node (terms are ORed): the API server accepts exactly one
	// value in a metadata.name field selector.
	terms := make([]corev1.NodeSelectorTerm, len(a.PerNode))
	for i, n := range a.PerNode {
		terms[i] = corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n.Node},
		}}}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms}
	gpu := 0
	for i, ct := range spec.Containers {
		if containerGPUs(ct, r) > 0 {
			gpu = i
			break
		}
	}
	for i := range spec.Containers {
		res := &spec.Containers[i].Resources
		if i != gpu {
			delete(res.Requests, r)
			delete(res.Limits, r)
			continue
		}
		q := *resource.NewQuantity(int64(per), resource.DecimalSI)
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		if res.Limits == nil {
			res.Limits = corev1.ResourceList{}
		}
		res.Requests[r] = q
		res.Limits[r] = q
	}
	SetAnnotations(&j.Spec.Template.Annotations, BatchAnnotations(a, l))
}

// Configured reports whether a Job's spec already carries the assignment
// (Configure would change nothing but, possibly, the batch annotations):
// then a running job can be resized in place by its parallelism alone.
func Configured(j *batchv1.Job, a Assignment, l PodLayout, r corev1.ResourceName) bool {
	probe := j.DeepCopy()
	Configure(probe, a, l, r)
	probe.Spec.Parallelism, probe.Spec.Completions = j.Spec.Parallelism, j.Spec.Completions
	probe.Spec.Template.Annotations = j.Spec.Template.Annotations
	return equalTemplates(&probe.Spec.Template, &j.Spec.Template)
}

func equalTemplates(a, b *corev1.PodTemplateSpec) bool { return equality.Semantic.DeepEqual(a, b) }
