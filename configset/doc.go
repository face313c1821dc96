// Package configset enumerates the valid configurations (nodes, GPUs, type) of a
// heterogeneous cluster, including virtual nodes for per-node GPU counts that are
// not powers of two, and filters them per job.
//
// For a GPU type with R GPUs per node and N nodes the valid configurations are
// {(1,1), (1,2), (1,4), …, (1,R)} ∪ {(n, n·R) : 2 ≤ n ≤ N}: powers of two inside
// one node and whole nodes beyond (design §2, paper §3.1). A node whose R is not
// a power of two is split into virtual nodes (6 → 4 + 2, 12 → 8 + 4); the type
// then offers powers of two up to its largest virtual node V and (n, n·V)
// beyond, and Set.SizeLimits gives the extra constraints under which every
// allocation is placeable. The placement package maps configurations onto
// concrete GPUs.
//
// The package is a leaf: it imports nothing else of this module.
package configset
