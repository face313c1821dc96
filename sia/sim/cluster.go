package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// NodeGroup is a set of identical nodes: Nodes machines with GPUsPerNode GPUs of
// one Type each.
type NodeGroup struct {
	Type        string
	Nodes       int
	GPUsPerNode int
}

// Cluster is a simulated cluster: node groups in a fixed order. Types must be
// distinct. The order matters for the baselines that break ties by type order.
type Cluster struct {
	Groups []NodeGroup
}

// Named clusters of the paper (paper §5.1).
var namedClusters = map[string]string{
	"heterogeneous": "t4:6x4,a100:2x8,rtx:3x8",
	"homogeneous":   "t4:16x4",
	"physical":      "rtx:3x8,a100:2x8,quad:1x4",
}

// MaxClusterNodes bounds the nodes of one group after scaling.
const MaxClusterNodes = 1 << 16

// ParseCluster parses "heterogeneous", "homogeneous", "physical" or a SPEC of
// the form type:NxR[,type:NxR...] (N nodes of R GPUs each), and multiplies every
// node count by scale (≥ 1).
func ParseCluster(spec string, scale int) (Cluster, error) {
	if scale < 1 || scale > MaxClusterNodes {
		return Cluster{}, inputErr("", 0, "", "scale", "%d, want 1..%d", scale, MaxClusterNodes)
	}
	if s, ok := namedClusters[strings.TrimSpace(spec)]; ok {
		spec = s
	}
	var c Cluster
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		typ, shape, ok := strings.Cut(part, ":")
		typ = strings.TrimSpace(typ)
		if !ok || typ == "" {
			return Cluster{}, inputErr("", 0, "", "cluster", "%q: want type:NxR (for example t4:6x4) or heterogeneous|homogeneous|physical", part)
		}
		ns, rs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(shape)), "x")
		if !ok {
			return Cluster{}, inputErr("", 0, "", "cluster", "%q: want type:NxR (for example t4:6x4)", part)
		}
		n, err1 := strconv.Atoi(strings.TrimSpace(ns))
		r, err2 := strconv.Atoi(strings.TrimSpace(rs))
		if err1 != nil || err2 != nil || n < 1 || r < 1 {
			return Cluster{}, inputErr("", 0, "", "cluster", "%q: node count and GPUs per node must be positive integers", part)
		}
		if n > MaxClusterNodes || r > MaxGPUsPerNode {
			return Cluster{}, inputErr("", 0, "", "cluster", "%q: want at most %d nodes of at most %d GPUs", part, MaxClusterNodes, MaxGPUsPerNode)
		}
		if seen[typ] {
			return Cluster{}, inputErr("", 0, "", "cluster", "GPU type %q listed twice", typ)
		}
		seen[typ] = true
		if n*scale > MaxClusterNodes {
			return Cluster{}, inputErr("", 0, "", "scale", "%d nodes of %s after scaling, at most %d", n*scale, typ, MaxClusterNodes)
		}
		c.Groups = append(c.Groups, NodeGroup{Type: typ, Nodes: n * scale, GPUsPerNode: r})
	}
	if err := c.Validate(); err != nil {
		return Cluster{}, err
	}
	return c, nil
}

// MaxGPUsPerNode bounds NodeGroup.GPUsPerNode.
const MaxGPUsPerNode = 1024

// MaxClusterGPUs bounds the GPUs of a cluster (all groups): the policies'
// per-round work and memory grow with it.
const MaxClusterGPUs = 1 << 20

// NewCluster returns a cluster of the given node groups, validated.
func NewCluster(groups ...NodeGroup) (Cluster, error) {
	c := Cluster{Groups: append([]NodeGroup(nil), groups...)}
	return c, c.Validate()
}

// Validate checks that the cluster has at least one group, distinct
// non-empty types, 1..MaxClusterNodes nodes and 1..MaxGPUsPerNode GPUs per
// node. Errors are *InputError naming the group.
func (c Cluster) Validate() error {
	if len(c.Groups) == 0 {
		return inputErr("", 0, "", "Cluster", "empty cluster")
	}
	seen := map[string]bool{}
	total := 0
	for i, g := range c.Groups {
		f := fmt.Sprintf("Cluster.Groups[%d]", i)
		switch {
		case g.Type == "":
			return inputErr("", 0, "", f+".Type", "empty GPU type")
		case seen[g.Type]:
			return inputErr("", 0, "", f+".Type", "GPU type %q listed twice", g.Type)
		case g.Nodes < 1 || g.Nodes > MaxClusterNodes:
			return inputErr("", 0, "", f+".Nodes", "%d, want 1..%d", g.Nodes, MaxClusterNodes)
		case g.GPUsPerNode < 1 || g.GPUsPerNode > MaxGPUsPerNode:
			return inputErr("", 0, "", f+".GPUsPerNode", "%d, want 1..%d", g.GPUsPerNode, MaxGPUsPerNode)
		}
		seen[g.Type] = true
		total += g.Nodes * g.GPUsPerNode
		if total > MaxClusterGPUs {
			return inputErr("", 0, "", "Cluster", "more than %d GPUs", MaxClusterGPUs)
		}
	}
	return nil
}

// Types returns the GPU types in group order.
func (c Cluster) Types() []string {
	out := make([]string, len(c.Groups))
	for i, g := range c.Groups {
		out[i] = g.Type
	}
	return out
}

// Group returns the node group of a type.
func (c Cluster) Group(typ string) (NodeGroup, bool) {
	for _, g := range c.Groups {
		if g.Type == typ {
			return g, true
		}
	}
	return NodeGroup{}, false
}

// Capacity returns the number of GPUs of a type.
func (c Cluster) Capacity(typ string) int {
	g, _ := c.Group(typ)
	return g.Nodes * g.GPUsPerNode
}

// TotalGPUs returns the number of GPUs in the cluster.
func (c Cluster) TotalGPUs() int {
	t := 0
	for _, g := range c.Groups {
		t += g.Nodes * g.GPUsPerNode
	}
	return t
}

// String formats the cluster as a SPEC.
func (c Cluster) String() string {
	parts := make([]string, len(c.Groups))
	for i, g := range c.Groups {
		parts[i] = fmt.Sprintf("%s:%dx%d", g.Type, g.Nodes, g.GPUsPerNode)
	}
	return strings.Join(parts, ",")
}

// ProfileTypes maps the simulator's GPU type names to the profile folder's
// suffixes: t4→aws, a100→dgx-ext, rtx→rtx, quad→quad, v100→azure.
var ProfileTypes = map[string]string{
	"t4":   "aws",
	"a100": "dgx-ext",
	"rtx":  "rtx",
	"quad": "quad",
	"v100": "azure",
}

// MaxPhysicalNodes is the largest node count profiled per GPU type (artifact
// cluster_max_physical_nnodes). Configurations of a job never span more nodes,
// and placements over more nodes are looked up as if spread over this many.
var MaxPhysicalNodes = map[string]int{
	"t4": 16, "a100": 2, "rtx": 3, "quad": 1, "v100": 5,
}

// physicalNodes returns the profiled node limit of a type (0 = unlimited).
func physicalNodes(typ string) int { return MaxPhysicalNodes[typ] }
