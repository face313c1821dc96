package placement

import (
	"context"
	"slices"
	"sync"
)

// A placement's arrays are kept for the next one (a sync.Pool of
// scratch), and so are its nodes: a round on the nodes of the last one
// (the common case: a host's fleet changes rarely) skips validating and
// indexing them again, and resets only the GPUs' owners and the nodes'
// free counts. Nothing kept outlives the call that holds it: results are
// copied out of the arrays before they go back to the pool.

// scratch is one placement's reusable state.
type scratch struct {
	nodes   []Node  // the nodes p indexes (a copy; nil: p indexes none)
	p       problem // the indexed nodes and pools; the requests' state is reset per use
	claimed []int32 // per GPU: the job (position + 1) that holds it (readInOrder)
	cur     []int   // the jobs' current GPUs (readInOrder)
	parts   []int   // the jobs' shapes (readInOrder)
	idSlots []int32 // the job ID set's table
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// sameNodes reports whether sc indexes exactly nodes (IDs, types and sizes
// in the same order).
func (sc *scratch) sameNodes(nodes []Node) bool {
	return sc.nodes != nil && slices.Equal(sc.nodes, nodes)
}

// indexed returns the problem of nodes (named: with the map of node IDs)
// from sc, indexing the nodes unless sc holds them already.
func (sc *scratch) indexed(nodes []Node, named bool) (*problem, error) {
	if !sc.sameNodes(nodes) {
		sc.nodes = nil
		sc.p = problem{}
		if err := sc.p.indexNodes(nodes, named); err != nil {
			return nil, err
		}
		sc.p.indexPools()
		sc.p.indexFree()
		sc.nodes = append(make([]Node, 0, len(nodes)), nodes...)
	} else {
		sc.p.reset(named)
	}
	sc.p.scratch = sc
	return &sc.p, nil
}

// reset clears the state of the last placement on the indexed nodes: every
// GPU free, no demand, no jobs.
func (p *problem) reset(named bool) {
	if named && p.byID == nil {
		p.byID = make(map[string]int, len(p.nodes))
		for n := range p.nodes {
			p.byID[p.nodes[n].id] = n
		}
	}
	for n := range p.nodes {
		nd := &p.nodes[n]
		for i := range nd.owner {
			nd.owner[i] = -1
		}
		p.free[n] = nd.gpus
	}
	p.indexFree()
	for t := range p.types {
		p.types[t].demand = 0
	}
	for pl := range p.poolJobs {
		p.poolJobs[pl] = p.poolJobs[pl][:0]
	}
	p.jobs = p.jobs[:0]
	p.slab = p.slab[:0] // the last placement's lists were copied out
	p.evict, p.ctx, p.checks, p.cut = false, nil, 0, false
	// used keeps its marks: stamp goes on from the last placement's
}

// release drops what the placement's jobs point to (the caller's
// requests) once sc is done with.
func (sc *scratch) release() {
	clear(sc.p.jobs)
	sc.p.jobs = sc.p.jobs[:0]
	sc.p.ctx = nil
}

// grown returns s with length n, reusing its array when it holds n.
func grown[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// A Placer places one round after another, keeping its arrays and the
// last round's indexed nodes between calls (a host that places every
// round on the same fleet saves validating and indexing its nodes, and
// most allocations). Package-level PlaceSlots and PlaceContext share such
// state through a sync.Pool, which a garbage collection empties; a Placer
// keeps it as long as the Placer lives. The zero value is ready to use. A
// Placer is not safe for concurrent use.
type Placer struct {
	sc *scratch
}

// PlaceSlots is PlaceSlots (the package function) with the Placer's kept
// state: the same result for the same input.
func (pl *Placer) PlaceSlots(ctx context.Context, nodes []Node, reqs []Request, cur [][]Slot) (SlotResult, error) {
	if err := checkSlots(reqs, cur); err != nil {
		return SlotResult{}, err
	}
	if pl.sc == nil {
		pl.sc = new(scratch)
	}
	return placeSlotsWith(ctx, pl.sc, nodes, reqs, slotsOrNone(reqs, cur))
}
