// Package placement maps per-job allocations (GPU type and count) onto concrete
// GPUs of nodes, keeping jobs in place where possible and evicting few and small
// jobs on fragmentation.
//
// Place follows the rules of design §6 (paper §3.1): (a) an allocation no
// larger than a node stays on one node; (b) an allocation of whole nodes takes
// whole nodes; (c) when fragmentation blocks (a) or (b), jobs are evicted and
// re-placed. Jobs that keep their type and count keep their exact GPUs;
// single-node jobs go best fit. Nodes may have any GPU count, and a type may
// mix node sizes: a request names its pool (Request.NodeGPUs) and node count
// (Request.Nodes), so that a job gets the shape its goodput was predicted for.
// A request may also span the node sizes of its type (Request.Parts, a
// spanning configuration of package configset): each part is placed in its
// own pool with its own node count, and the job is placed only when all its
// parts are.
// Shape gives the per-node split of a GPU count: whole nodes and a remainder,
// also for rigid counts that are no configuration shape (12 on 8-GPU nodes →
// 8 + 4). For the configurations of package configset the largest-first
// re-pack places every allocation whose GPUs fit the pool; beyond that, an
// exact search finds a packing whenever one exists on small pools.
// PlaceContext is Place for a caller with a deadline: once its ctx ends it
// makes no more evictions or re-packs and places the rest on free GPUs
// only (Result.Cut), so kept jobs keep their GPUs and the result keeps
// every rule.
// PlaceSlots is PlaceContext for a host that holds its nodes in a slice:
// current GPUs and results are node positions (Slot), by request, with no
// ID looked up; a Placer does the same while keeping its arrays and the
// last round's indexed nodes from one round to the next.
//
// The package is a leaf: it imports nothing else of this module.
package placement
