package placement

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Part is the share of a request spanning node sizes on the nodes with
// NodeGPUs GPUs of its type: GPUs GPUs on Nodes nodes (see Request.Parts).
type Part struct {
	NodeGPUs, Nodes, GPUs int
}

// spanSplit records how the requests with Parts were split into one
// request per part (job ID + "\x00" + part index), so that the result can
// be merged back.
type spanSplit struct {
	sub   map[string]string // sub-request ID -> job ID
	first []int             // per request: its first request after the split (nil: no request has parts)
}

// splitParts returns reqs (with their current GPUs cur) with every request
// that has Parts replaced by one request per part, in its pool with its
// node count. A part's request gets the job's current GPUs on the nodes of
// its size (the job's other current GPUs go with the first part, where
// they keep it from being kept). Each part is placed in its pool like any
// request, and since the parts lie in distinct pools they lie on distinct
// nodes.
func splitParts(nodes []Node, reqs []Request, cur [][]Slot) ([]Request, [][]Slot, *spanSplit, error) {
	if !slices.ContainsFunc(reqs, func(r Request) bool { return len(r.Parts) > 0 }) {
		return reqs, cur, &spanSplit{}, nil
	}
	ids := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		ids[r.Job] = true
	}
	sp := &spanSplit{sub: map[string]string{}, first: make([]int, len(reqs))}
	out := make([]Request, 0, len(reqs)+4)
	outCur := make([][]Slot, 0, len(reqs)+4)
	for k, r := range reqs {
		sp.first[k] = len(out)
		if len(r.Parts) == 0 {
			out, outCur = append(out, r), append(outCur, cur[k])
			continue
		}
		if err := checkParts(r); err != nil {
			return nil, nil, nil, err
		}
		subs := make([]Request, len(r.Parts))
		subCur := make([][]Slot, len(r.Parts))
		for q, pt := range r.Parts {
			id := r.Job + "\x00" + strconv.Itoa(q)
			if ids[id] {
				return nil, nil, nil, &InputError{Job: r.Job, Field: "Job", Reason: fmt.Sprintf("the ID of part %d (%q) is another request's job ID", q, id)}
			}
			sp.sub[id] = r.Job
			subs[q] = Request{Job: id, Type: r.Type, GPUs: pt.GPUs, NodeGPUs: pt.NodeGPUs, Nodes: pt.Nodes, Pinned: r.Pinned}
		}
		for i, s := range cur[k] {
			q := 0
			if s.Node >= 0 && int(s.Node) < len(nodes) {
				q = max(slices.IndexFunc(r.Parts, func(pt Part) bool { return pt.NodeGPUs == nodes[s.Node].GPUs }), 0)
			}
			subCur[q] = append(subCur[q], s)
			if i < len(r.Current) { // named GPUs, for error messages
				subs[q].Current = append(subs[q].Current, r.Current[i])
			}
		}
		out, outCur = append(out, subs...), append(outCur, subCur...)
	}
	return out, outCur, sp, nil
}

// checkParts validates the parts of request r.
func checkParts(r Request) error {
	bad := func(field, format string, args ...any) error {
		return &InputError{Job: r.Job, Type: r.Type, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	nodes := 0
	for _, pt := range r.Parts {
		nodes += max(pt.Nodes, 0)
	}
	if r.NodeGPUs != 0 || (r.Nodes != 0 && r.Nodes != nodes) {
		return bad("Parts", "set together with NodeGPUs %d or Nodes %d (the parts give both)", r.NodeGPUs, r.Nodes)
	}
	sum := 0
	for k, pt := range r.Parts {
		switch {
		case pt.NodeGPUs <= 0 || pt.Nodes <= 0 || pt.GPUs <= 0:
			return bad(fmt.Sprintf("Parts[%d]", k), "NodeGPUs %d, Nodes %d and GPUs %d must be > 0", pt.NodeGPUs, pt.Nodes, pt.GPUs)
		case slices.IndexFunc(r.Parts[:k], func(q Part) bool { return q.NodeGPUs == pt.NodeGPUs }) >= 0:
			return bad(fmt.Sprintf("Parts[%d]", k), "a second part on the %d-GPU nodes", pt.NodeGPUs)
		case pt.GPUs > MaxNodeGPUs*MaxShapeParts:
			return bad(fmt.Sprintf("Parts[%d].GPUs", k), "%d is more than any cluster holds", pt.GPUs)
		}
		sum += pt.GPUs
	}
	if sum != r.GPUs {
		return bad("Parts", "GPUs sum to %d, the request asks for %d", sum, r.GPUs)
	}
	return nil
}

// mapError names the job, not the part's request, in err.
func (sp *spanSplit) mapError(err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		if job, ok := sp.sub[ie.Job]; ok {
			ie.Job = job
		}
		for id, job := range sp.sub {
			ie.Reason = strings.ReplaceAll(ie.Reason, strconv.Quote(id), strconv.Quote(job))
		}
	}
	return err
}

// merge turns the result of the split requests back into one per job
// (reqs, their current GPUs cur): a job is placed when all its parts are
// (else it is unplaced and its parts' GPUs stay free), evicted when a part
// was, migrated when it ran before on another type, or keeps its count and
// has other GPUs.
func (sp *spanSplit) merge(nodes []Node, reqs []Request, cur [][]Slot, res SlotResult) SlotResult {
	if sp.first == nil {
		return res
	}
	flags := make([]uint8, len(res.Placements)) // per split request: evicted, unplaced, migrated
	for bit, list := range [3][]int{res.Evicted, res.Unplaced, res.Migrated} {
		for _, f := range list {
			flags[f] |= 1 << bit
		}
	}
	out := SlotResult{Placements: make([][]Slot, len(reqs)), Cut: res.Cut}
	for k := range reqs {
		f := sp.first[k]
		if len(reqs[k].Parts) == 0 {
			out.Placements[k] = res.Placements[f]
			out.add(k, flags[f])
			continue
		}
		var any uint8
		var gs []Slot
		for q := range reqs[k].Parts {
			any |= flags[f+q]
			gs = append(gs, res.Placements[f+q]...)
		}
		any &^= 4
		if any&2 == 0 {
			slices.SortFunc(gs, func(a, b Slot) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Index, b.Index)) })
			out.Placements[k] = gs[:len(gs):len(gs)]
			if migrated(nodes, reqs[k].Type, cur[k], gs) {
				any |= 4
			}
		}
		out.add(k, any)
	}
	byJob := func(a, b int) int { return cmp.Compare(reqs[a].Job, reqs[b].Job) }
	slices.SortFunc(out.Evicted, byJob)
	slices.SortFunc(out.Unplaced, byJob)
	slices.SortFunc(out.Migrated, byJob)
	return out
}

// add lists request k as evicted, unplaced and migrated by the bits 1, 2
// and 4 of flags.
func (r *SlotResult) add(k int, flags uint8) {
	if flags&1 != 0 {
		r.Evicted = append(r.Evicted, k)
	}
	if flags&2 != 0 {
		r.Unplaced = append(r.Unplaced, k)
	}
	if flags&4 != 0 {
		r.Migrated = append(r.Migrated, k)
	}
}

// migrated reports whether a placed request of type typ that ran on cur
// (before) moved to gs (sorted): its current GPUs are on another type, or
// it keeps its count on other GPUs.
func migrated(nodes []Node, typ string, cur, gs []Slot) bool {
	if len(cur) == 0 {
		return false
	}
	for _, s := range cur {
		if nodes[s.Node].Type != typ {
			return true
		}
	}
	if len(cur) != len(gs) {
		return false
	}
	have := make(map[Slot]bool, len(gs))
	for _, s := range gs {
		have[s] = true
	}
	for _, s := range cur {
		if !have[s] {
			return true
		}
	}
	return false
}
