package placement

import (
	"context"
	"fmt"
)

// Slot names a GPU by position: Node is the index of its node in the nodes
// passed to PlaceSlots, Index the GPU's index on that node.
type Slot struct {
	Node, Index int32
}

// SlotResult is the outcome of PlaceSlots, by request position.
type SlotResult struct {
	// Placements has one element per request: the GPUs of every placed
	// request with GPUs > 0, ordered by node, then by index; nil for the
	// others. The lists share one backing array, each capped at its
	// length (an append to one copies it).
	Placements [][]Slot
	// Evicted, Migrated and Unplaced are Result's lists as request
	// positions, sorted by job ID.
	Evicted, Migrated, Unplaced []int
	// Cut is Result.Cut.
	Cut bool
}

// PlaceSlots is PlaceContext for a caller that holds its nodes in a slice
// and its jobs' GPUs as positions: the current GPUs of reqs[k] are cur[k]
// (cur nil: no request holds any; Request.Current must be empty), and the
// result gives GPUs as Slots by request position. It places exactly as
// PlaceContext does on the same requests with their current GPUs named by
// node ID, without looking node IDs up or naming GPUs by them. Its errors are
// PlaceContext's, and a slot on a node position out of range is an
// *InputError for its Current.
func PlaceSlots(ctx context.Context, nodes []Node, reqs []Request, cur [][]Slot) (SlotResult, error) {
	if err := checkSlots(reqs, cur); err != nil {
		return SlotResult{}, err
	}
	return placeSlots(ctx, nodes, reqs, slotsOrNone(reqs, cur))
}

// slotsOrNone returns cur, or no current GPUs for every request when nil.
func slotsOrNone(reqs []Request, cur [][]Slot) [][]Slot {
	if cur == nil {
		return make([][]Slot, len(reqs))
	}
	return cur
}

// checkSlots checks the inputs only PlaceSlots has.
func checkSlots(reqs []Request, cur [][]Slot) error {
	if cur != nil && len(cur) != len(reqs) {
		return &InputError{Field: "Current", Reason: fmt.Sprintf("%d lists of current GPUs for %d requests", len(cur), len(reqs))}
	}
	for k := range reqs {
		if len(reqs[k].Current) > 0 {
			return &InputError{Job: reqs[k].Job, Field: "Current", Reason: "set: PlaceSlots takes the current GPUs as slots"}
		}
	}
	return nil
}

// placeSlots places reqs under ctx, their current GPUs being cur (nil:
// named by Request.Current), with a scratch of the pool.
func placeSlots(ctx context.Context, nodes []Node, reqs []Request, cur [][]Slot) (SlotResult, error) {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	return placeSlotsWith(ctx, sc, nodes, reqs, cur)
}

// placeSlotsWith is placeSlots with the arrays of sc.
func placeSlotsWith(ctx context.Context, sc *scratch, nodes []Node, reqs []Request, cur [][]Slot) (SlotResult, error) {
	defer sc.release()
	p, err := sc.indexed(nodes, cur == nil)
	if err != nil {
		return SlotResult{}, err
	}
	if cur == nil {
		cur = p.slotsOf(reqs)
	}
	flat, flatCur, sp, err := splitParts(nodes, reqs, cur)
	if err != nil {
		return SlotResult{}, err
	}
	if err := p.readRequests(flat, flatCur); err != nil {
		return SlotResult{}, sp.mapError(err)
	}
	if err := p.checkDemand(); err != nil {
		return SlotResult{}, sp.mapError(err)
	}
	p.ctx = ctx
	return sp.merge(nodes, reqs, cur, p.place(true)), nil
}

// namedResult returns res (of reqs on nodes) as a Result: GPUs named by
// node ID (one backing array), jobs by ID.
func namedResult(nodes []Node, reqs []Request, res SlotResult) Result {
	placed, total := 0, 0
	for _, gs := range res.Placements {
		if gs != nil {
			placed++
			total += len(gs)
		}
	}
	out := Result{Placements: make(map[string][]GPU, placed), Cut: res.Cut,
		Evicted: jobIDs(reqs, res.Evicted), Migrated: jobIDs(reqs, res.Migrated), Unplaced: jobIDs(reqs, res.Unplaced)}
	backing := make([]GPU, 0, total)
	for k, gs := range res.Placements {
		if gs == nil {
			continue
		}
		start := len(backing)
		for _, s := range gs {
			backing = append(backing, GPU{Node: nodes[s.Node].ID, Index: int(s.Index)})
		}
		out.Placements[reqs[k].Job] = backing[start:len(backing):len(backing)]
	}
	return out
}

// jobIDs returns the job IDs of the requests at positions ks (nil for
// none).
func jobIDs(reqs []Request, ks []int) []string {
	if len(ks) == 0 {
		return nil
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = reqs[k].Job
	}
	return out
}
