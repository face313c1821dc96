package placement

import (
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
	sub map[string]string // sub-request ID -> job ID
	of  map[string][]string
}

// splitParts returns reqs with every request that has Parts replaced by
// one request per part, in its pool with its node count. A part's request
// gets the job's current GPUs on the nodes of its size (the job's other
// current GPUs go with the first part, where they keep it from being
// kept). Each part is placed in its pool like any request, and since the
// parts lie in distinct pools they lie on distinct nodes.
func splitParts(nodes []Node, reqs []Request) ([]Request, *spanSplit, error) {
	if !slices.ContainsFunc(reqs, func(r Request) bool { return len(r.Parts) > 0 }) {
		return reqs, &spanSplit{}, nil
	}
	size := make(map[string]int, len(nodes))
	for _, n := range nodes {
		size[n.ID] = n.GPUs
	}
	ids := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		ids[r.Job] = true
	}
	sp := &spanSplit{sub: map[string]string{}, of: map[string][]string{}}
	out := make([]Request, 0, len(reqs)+4)
	for _, r := range reqs {
		if len(r.Parts) == 0 {
			out = append(out, r)
			continue
		}
		if err := checkParts(r); err != nil {
			return nil, nil, err
		}
		subs := make([]Request, len(r.Parts))
		for k, pt := range r.Parts {
			id := r.Job + "\x00" + strconv.Itoa(k)
			if ids[id] {
				return nil, nil, &InputError{Job: r.Job, Field: "Job", Reason: fmt.Sprintf("the ID of part %d (%q) is another request's job ID", k, id)}
			}
			sp.sub[id] = r.Job
			sp.of[r.Job] = append(sp.of[r.Job], id)
			subs[k] = Request{Job: id, Type: r.Type, GPUs: pt.GPUs, NodeGPUs: pt.NodeGPUs, Nodes: pt.Nodes, Pinned: r.Pinned}
		}
		for _, g := range r.Current {
			k := slices.IndexFunc(r.Parts, func(pt Part) bool { return pt.NodeGPUs == size[g.Node] })
			subs[max(k, 0)].Current = append(subs[max(k, 0)].Current, g)
		}
		out = append(out, subs...)
	}
	return out, sp, nil
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

// merge turns the result of the split requests back into one per job: a
// job is placed when all its parts are (else it is unplaced and its parts'
// GPUs stay free), evicted when a part was, migrated when it ran before
// on another type, or keeps its count and has other GPUs.
func (sp *spanSplit) merge(nodes []Node, reqs []Request, res Result) Result {
	if len(sp.of) == 0 {
		return res
	}
	order := make(map[string]int, len(nodes))
	for i, n := range nodes {
		order[n.ID] = i
	}
	drop := func(list []string) []string {
		return slices.DeleteFunc(list, func(id string) bool { _, ok := sp.sub[id]; return ok })
	}
	unplaced := map[string]bool{}
	evicted := map[string]bool{}
	for _, id := range res.Unplaced {
		if job, ok := sp.sub[id]; ok {
			unplaced[job] = true
		}
	}
	for _, id := range res.Evicted {
		if job, ok := sp.sub[id]; ok {
			evicted[job] = true
		}
	}
	res.Unplaced, res.Evicted, res.Migrated = drop(res.Unplaced), drop(res.Evicted), drop(res.Migrated)
	for _, r := range reqs {
		subs, ok := sp.of[r.Job]
		if !ok {
			continue
		}
		var gs []GPU
		for _, id := range subs {
			gs = append(gs, res.Placements[id]...)
			delete(res.Placements, id)
		}
		if evicted[r.Job] {
			res.Evicted = append(res.Evicted, r.Job)
		}
		if unplaced[r.Job] {
			res.Unplaced = append(res.Unplaced, r.Job)
			continue
		}
		slices.SortFunc(gs, func(a, b GPU) int {
			if c := order[a.Node] - order[b.Node]; c != 0 {
				return c
			}
			return a.Index - b.Index
		})
		res.Placements[r.Job] = gs
		if migrated(nodes, r, gs) {
			res.Migrated = append(res.Migrated, r.Job)
		}
	}
	slices.Sort(res.Unplaced)
	slices.Sort(res.Evicted)
	slices.Sort(res.Migrated)
	return res
}

// migrated reports whether a placed request r that ran before moved: its
// current GPUs are on another type, or it keeps its count on other GPUs.
func migrated(nodes []Node, r Request, gs []GPU) bool {
	if len(r.Current) == 0 {
		return false
	}
	typ := make(map[string]string, len(nodes))
	for _, n := range nodes {
		typ[n.ID] = n.Type
	}
	for _, g := range r.Current {
		if typ[g.Node] != r.Type {
			return true
		}
	}
	if len(r.Current) != len(gs) {
		return false
	}
	have := make(map[GPU]bool, len(gs))
	for _, g := range gs {
		have[g] = true
	}
	for _, g := range r.Current {
		if !have[g] {
			return true
		}
	}
	return false
}
