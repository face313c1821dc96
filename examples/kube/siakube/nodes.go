package siakube

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// Defaults of NodeConfig.
const (
	DefaultTypeLabel   = "nvidia.com/gpu.product"
	DefaultGPUResource = corev1.ResourceName("nvidia.com/gpu")
)

// NodeConfig says how Nodes are read. The zero value means the defaults.
type NodeConfig struct {
	// TypeLabel is the node label holding the GPU type (DefaultTypeLabel,
	// as GPU feature discovery sets it).
	TypeLabel string
	// Resource is the extended resource counting GPUs (DefaultGPUResource).
	Resource corev1.ResourceName
	// TolerateTaints lists taint keys that do not exclude a node (GPU
	// nodes are often tainted nvidia.com/gpu:NoSchedule and every GPU pod
	// tolerates it); nil means {"nvidia.com/gpu"}, an empty list none.
	TolerateTaints []string
}

func (c NodeConfig) withDefaults() NodeConfig {
	if c.TypeLabel == "" {
		c.TypeLabel = DefaultTypeLabel
	}
	if c.Resource == "" {
		c.Resource = DefaultGPUResource
	}
	if c.TolerateTaints == nil {
		c.TolerateTaints = []string{string(DefaultGPUResource)}
	}
	return c
}

// GPUNode is a node the scheduler may use: its name, GPU type and the GPUs
// the sia jobs may hold (allocatable less what other pods request).
type GPUNode struct {
	Name, Type string
	// Allocatable is the node's allocatable GPUs, External the GPUs
	// requested by live pods that belong to no sia job, GPUs the difference.
	Allocatable, External, GPUs int
}

// SkippedNode is a node left out of the round and why.
type SkippedNode struct {
	Name, Reason string
}

// ReadNodes returns the usable GPU nodes, sorted by name, and the nodes left
// out with the reason: cordoned, not Ready, tainted NoSchedule or NoExecute
// (other than the tolerated keys), without the type label or a valid type
// name, or without GPUs. external gives, per node name, the GPUs held by pods
// of no sia job; they are subtracted.
func ReadNodes(nodes []*corev1.Node, external map[string]int, cfg NodeConfig) ([]GPUNode, []SkippedNode) {
	cfg = cfg.withDefaults()
	var out []GPUNode
	var skipped []SkippedNode
	for _, n := range nodes {
		if n == nil {
			continue
		}
		if why := unusable(n, cfg); why != "" {
			skipped = append(skipped, SkippedNode{Name: n.Name, Reason: why})
			continue
		}
		q := n.Status.Allocatable[cfg.Resource]
		alloc := q.Value()
		if alloc > MaxJobGPUs {
			skipped = append(skipped, SkippedNode{Name: n.Name, Reason: fmt.Sprintf("%d allocatable %s (more than %d)", alloc, cfg.Resource, MaxJobGPUs)})
			continue
		}
		g := GPUNode{Name: n.Name, Type: n.Labels[cfg.TypeLabel], Allocatable: int(alloc), External: external[n.Name]}
		g.GPUs = g.Allocatable - g.External
		if g.GPUs <= 0 {
			skipped = append(skipped, SkippedNode{Name: n.Name, Reason: fmt.Sprintf("no free %s (%d allocatable, %d held by other pods)", cfg.Resource, g.Allocatable, g.External)})
			continue
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Name < skipped[j].Name })
	return out, skipped
}

func unusable(n *corev1.Node, cfg NodeConfig) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	if !nodeReady(n) {
		return "not Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for _, k := range cfg.TolerateTaints {
			tolerated = tolerated || t.Key == k
		}
		if !tolerated {
			return fmt.Sprintf("tainted %s:%s", t.Key, t.Effect)
		}
	}
	typ, ok := n.Labels[cfg.TypeLabel]
	if !ok {
		return "no label " + cfg.TypeLabel
	}
	if !validType(typ) {
		return fmt.Sprintf("label %s=%q is no GPU type name", cfg.TypeLabel, typ)
	}
	return ""
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodGPUs returns the GPUs a pod requests of resource r: the larger of the
// sum over its containers and the largest init container (limits count when
// requests are absent, as for extended resources).
func PodGPUs(p *corev1.Pod, r corev1.ResourceName) int {
	if r == "" {
		r = DefaultGPUResource
	}
	sum := int64(0)
	for _, c := range p.Spec.Containers {
		sum += containerGPUs(c, r)
	}
	for _, c := range p.Spec.InitContainers {
		sum = max(sum, containerGPUs(c, r))
	}
	return int(min(sum, 1<<30))
}

func containerGPUs(c corev1.Container, r corev1.ResourceName) int64 {
	if q, ok := c.Resources.Requests[r]; ok {
		return max(q.Value(), 0)
	}
	if q, ok := c.Resources.Limits[r]; ok {
		return max(q.Value(), 0)
	}
	return 0
}

// PodLive reports whether a pod may still hold its node's resources: bound
// (or about to be) and not finished.
func PodLive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// PodRunning reports whether a pod runs on a node.
func PodRunning(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}
