// Package placement maps per-job allocations (GPU type and count) onto concrete
// GPUs of nodes, keeping jobs in place where possible and evicting few and small
// jobs on fragmentation.
//
// Place follows the rules of design §6 (paper §3.1): (a) an allocation no
// larger than a node stays on one node; (b) an allocation of whole nodes takes
// whole nodes; (c) when fragmentation blocks (a) or (b), jobs are evicted and
// re-placed. Jobs that keep their type and count keep their exact GPUs;
// single-node jobs go best fit; nodes whose GPU count is not a power of two are
// treated as virtual nodes (6 → 4 + 2) whose GPUs are those of the physical
// node. Shape gives the per-node split of a GPU count, including rigid counts
// that are no configuration shape (12 on 8-GPU nodes → 8 + 4).
//
// The package is a leaf: it imports nothing else of this module.
package placement
