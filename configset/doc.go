// Package configset enumerates the valid configurations (nodes, GPUs, type) of a
// heterogeneous cluster with nodes of any size, and filters them per job.
//
// The paper (§3.1) restricts a job to powers of two GPUs inside one node and to
// whole nodes across nodes: on nodes of R GPUs (R a power of two) the valid
// configurations are {(1,1), (1,2), (1,4), …, (1,R)} ∪ {(n, n·R) : n ≥ 2}. The
// point of the rule is that every allocation whose GPUs fit the capacity can be
// placed: the sizes 1, 2, 4, …, R each divide the next, and items of such sizes
// pack into bins of size R, largest first, whenever their total fits.
//
// This package keeps that property for any node size. What the packing argument
// needs is not powers of two but a divisible chain that ends at the node size:
// each single-node size divides the next, and the last one is R. Chain(R) is the
// prime factors of R multiplied in one at a time in ascending order: 1, 2, 4, …,
// R for a power of two (the paper's set), 1, 2, 6 for R = 6, 1, 2, 4, 12 for
// R = 12, 1, 3, 9 for R = 9, 1, 5 for R = 5. Across nodes a configuration takes
// whole nodes, (n, n·R). Sizes that are not in the chain (4 on a 6-GPU node) are
// not offered: with them, packing depends on more than the total (three 4-GPU
// jobs do not fit two 6-GPU nodes) and needs rows that count jobs rather than
// GPUs.
//
// The nodes of one type with one size form a Pool; a type with nodes of several
// sizes (8- and 6-GPU A100 nodes) has one pool per size, named "type/R", and an
// allocator keeps one capacity row per pool. Within a pool, capacity is the only
// row needed. A rigid job whose count is not a configuration (5 GPUs, or 12 on
// 8-GPU nodes) is shaped as whole nodes plus its remainder on one more node
// (Set.Fixed) and charged, against its pool, the smallest chain size that holds
// the remainder (Set.Charge), which keeps every allocation placeable. The
// GPUs a charge blocks beyond the configuration's are not used by it; an
// allocator places its allocation and then gives such idle GPUs to waiting
// jobs, each placed exactly by its shape (package sia's fill step).
//
// Spanning configurations. A count that no pool of a type holds would be
// stranded by construction (a rigid job of a whole type with 8- and 6-GPU
// nodes, 8 + 8 + 6 + 6 = 28, or 8 + 6; a MinGPUs of 20 there), although the
// type can run it. Set.Span shapes such a count over the pools: on the
// fewest nodes that hold it, with the fewest GPUs charged among those
// shapes, as whole nodes of each pool and at most one remainder part. A
// Config with Span set lists its per-pool parts (Config.Parts); its charge
// is the sum of the parts' charges, each part charged against its own pool
// as a one-pool configuration would be. The packing argument holds pool by
// pool (every part is whole nodes or one remainder charged a chain size, and
// whole nodes are distinct nodes), so per-pool capacity rows still make
// every allocation placeable exactly as shaped. Spanning configurations are
// not in Configs: Set.Span and Set.Spans offer them only for counts beyond
// every pool (rigid counts, minimums), and Set.Spanned describes a host's
// current allocation on nodes of several sizes. An allocator needs one row
// per pool a spanning configuration touches; package sia enumerates the few
// such choices outside its one-row-per-option solver.
//
// The placement package maps configurations onto concrete GPUs (a spanning
// one part by part, placement.Request.Parts).
//
// The package is a leaf: it imports nothing else of this module.
package configset
