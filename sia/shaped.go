package sia

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/ilp"
)

// Shapes built from the GPUs left idle (the fill step's second pass).
//
// The configuration set offers a job one shape per pool for each GPU
// count: whole nodes plus a remainder (§3.1), and a span over the type's
// pools only for a count no pool holds. On nodes of several sizes, or once
// the jobs placed leave a few GPUs idle on each of several nodes, a job
// can wait while enough of its type's GPUs are idle, in no shape it was
// offered: nodes of 15 and 4 GPUs running a rigid 9 on the 15 leave 6 + 4
// idle, and a rigid 10 waits although it fits them.
//
// So once fill has started what it can on the entries the round offered,
// each job still waiting that is rigid, or on its smallest count of a type
// (an adaptive job's minimum), is tried on a shape made of the idle GPUs
// of that type: the nodes with the most usable idle GPUs (whole replicas)
// first, the last part on the node that fits it best, so that the job
// gets as few nodes as the idle GPUs allow. That shape is valued as the
// job's row is (its model's goodput for that node count, normalised with
// the row, the row's restart factor), and the job starts on it when it is
// worth more than waiting and keeps the quotas and reservations. The entry
// is added to the job's row, marked Shaped: the plan's objective and its
// bound (relaxedPlanBound, whose relaxation then offers the entry too, or,
// for one spanning pools, adds its gain over waiting) count it, so that a
// plan is never called optimal beside a better use of the shapes it took.
//
// Jobs are tried in the fill's order (gain per GPU), at most maxShapedTries
// valuations per job, and none once the fill's time is spent.
const maxShapedTries = 4

// shapeValuer values the configurations fill builds from idle GPUs as the
// rows of the round's matrix were valued. The zero value (no cluster)
// values none: fill then has no second pass. It is held in the layout by
// value; its knobs and evaluator are set up when it first values an entry.
type shapeValuer struct {
	snap *Snapshot
	o    *Options
	cl   *cluster
	// stop is when the fill's second pass ends at the latest (zero: the
	// fill's budget alone decides).
	stop time.Time
	k    ArtifactKnobs
	ev   *evaluator
}

// on reports whether v values entries (a round's valuer, not the zero one).
func (v *shapeValuer) on() bool { return v != nil && v.cl != nil }

// value returns job i's entry for configuration c, built from entry from
// of its row (same type, GPUs and replicas): the goodput of c's node count
// normalised with the row (a type without a model: from's value, which
// does not depend on the nodes), discounted by the row's restart factor;
// false when no batch size is feasible or the value is out of range.
func (v *shapeValuer) value(row *matrixRow, from *matrixEntry, c configset.Config) (matrixEntry, bool) {
	if v.ev == nil {
		v.k, v.ev = v.o.knobs(), newEvaluator()
	}
	e := matrixEntry{Config: c, Replicas: from.Replicas, Charge: c.GPUs, Source: from.Source, Restart: row.Restart, Normalized: from.Normalized, Shaped: true}
	if from.Source != bootstrap.None {
		j := restoreView(&v.snap.Jobs[row.Index], v.snap.Now)
		rb := rowBuilder{j: j, idx: row.Index, o: v.o, k: &v.k, cl: v.cl, ev: v.ev, cur: j.State.Current}
		rb.init(rowFull)
		if ok, err := rb.typeModel(c.Type); err != nil || !ok || rb.src == bootstrap.None || rb.p <= 0 || c.GPUs/rb.p != from.Replicas {
			return e, false
		}
		ch, ok := rb.goodput(c)
		if !ok || !(row.Scale > 0) || math.IsInf(row.Scale, 0) {
			return e, false
		}
		e.Choice = ch
		e.Normalized = normalised(ch.Goodput, row.Scale, &v.k)
	}
	e.setValue(v.o.P, &v.k)
	return e, !e.Dropped
}

// shapedKey is a job, type and GPU count fill tried a shaped entry for.
type shapedKey struct {
	row  int
	typ  string
	gpus int
}

// startShaped is fill's second pass (see the comment at the top of this
// file): it starts the jobs still waiting (not done) on shapes of the idle
// GPUs, in the candidates' order, and returns those it started.
func (f *filler) startShaped(cands []fillCandidate, done []bool, choice []int, lay *layout) (filled []string, grow []int) {
	if !f.shapes.on() || f.spent() {
		return nil, nil
	}
	var tried map[shapedKey]bool // made when a job first gets here
	var tries map[int]int
	var least map[shapedKey]int // an adaptive job's smallest count per type (gpus 0)
	for _, c := range cands {
		if done[c.row] {
			continue
		}
		row := &f.m.Rows[c.row]
		e := &row.Entries[c.entry]
		t, g := e.Config.Type, e.Config.GPUs
		key := shapedKey{c.row, t, g}
		if g > f.typeIdle(t) || e.Replicas <= 0 || g%e.Replicas != 0 || tried[key] || tries[c.row] >= maxShapedTries {
			continue
		}
		if f.spent() {
			break
		}
		if tried == nil {
			tried, tries, least = map[shapedKey]bool{}, map[int]int{}, map[shapedKey]int{}
		}
		tried[key] = true
		if f.snap.Jobs[c.row].Kind != Rigid && g != smallestCount(row, t, least) {
			continue
		}
		parts := f.idleShape(t, g, g/e.Replicas)
		if parts == nil {
			continue
		}
		cfg, ok := f.shapeConfig(t, g, parts)
		if !ok {
			continue
		}
		ne := matrixEntry{Config: cfg, Charge: g}
		var uses []ilp.Option
		if len(f.quotasOf(c.row)) > 0 {
			uses = usesOf(&ne, true)
		}
		if !f.limitsHold(c.row, &ne, uses) {
			continue
		}
		if cfg == e.Config && c.entry != row.Current {
			// e's shape split another way: e's value (the job's current
			// entry is valued anew: on other GPUs the job restarts)
			ne = *e
			ne.Charge, ne.Shaped = g, true
		} else {
			tries[c.row]++
			if ne, ok = f.shapes.value(row, e, cfg); !ok || !better(ne.Value, row.Unallocated, f.m.Sense) {
				continue
			}
		}
		gs := f.takeParts(parts, g)
		f.take(c.row, &ne, uses, gs)
		n := len(row.Entries)
		row.Entries = append(row.Entries[:n:n], ne) // a copy: rows share their backing array
		lay.GPUs[c.row] = gs
		choice[c.row] = n
		done[c.row] = true
		filled = append(filled, f.snap.Jobs[c.row].ID)
		grow = append(grow, c.row)
	}
	return filled, grow
}

// smallestCount returns the smallest GPU count of row's valued entries on
// type t, cached in least (an adaptive job is shaped on its minimum only).
func smallestCount(row *matrixRow, t string, least map[shapedKey]int) int {
	key := shapedKey{row: row.Index, typ: t}
	if g, ok := least[key]; ok {
		return g
	}
	g := math.MaxInt
	for k := range row.Entries {
		if o := &row.Entries[k]; o.Config.Type == t && !o.Invalid && !o.Dropped {
			g = min(g, o.Config.GPUs)
		}
	}
	least[key] = g
	return g
}

// idleShape chooses idle GPUs of type t for g GPUs in replicas of p (each
// node's part a multiple of p): while no node's usable idle GPUs hold what
// is left, the node with the most of them gives all it has; then the node
// that holds the rest best (fewest usable idle GPUs that do, then node
// order) gives the rest. It returns the parts, or nil when the idle GPUs
// cannot hold g. Nothing is taken.
func (f *filler) idleShape(t string, g, p int) []fillPart {
	nodes := f.pools[fillPoolKey{t, 0}] // by idle GPUs, then node order
	usable := func(k int) int { return f.idle[k] / p * p }
	var out []fillPart
	hi := len(nodes) // nodes[hi:] are taken
	for need := g; need > 0; {
		at, _ := slices.BinarySearchFunc(nodes[:hi], need, func(k, need int) int { return cmp.Compare(usable(k), need) })
		if at < hi {
			return append(out, fillPart{node: nodes[at], gpus: need})
		}
		if hi == 0 || usable(nodes[hi-1]) == 0 {
			return nil
		}
		hi--
		u := usable(nodes[hi])
		out = append(out, fillPart{node: nodes[hi], gpus: u})
		need -= u
	}
	return out
}

// shapeConfig returns the configuration of g GPUs of type t on parts: one
// pool's shape (its node count, the pool named for a type with several
// pools) when the parts' nodes have one size, else the type's spanning
// configuration of them (configset.Set.Spanned).
func (f *filler) shapeConfig(t string, g int, parts []fillPart) (configset.Config, bool) {
	size := f.snap.Nodes[parts[0].node].GPUs
	one := true
	for _, p := range parts[1:] {
		one = one && f.snap.Nodes[p.node].GPUs == size
	}
	if one {
		c := configset.Config{Type: t, Nodes: len(parts), GPUs: g}
		if len(f.shapes.cl.poolList[t]) > 1 {
			c.NodeGPUs = size
		}
		return c, true
	}
	var ps []configset.Part
	for _, p := range parts {
		r := f.snap.Nodes[p.node].GPUs
		k := slices.IndexFunc(ps, func(q configset.Part) bool { return q.NodeGPUs == r })
		if k < 0 {
			ps = append(ps, configset.Part{NodeGPUs: r})
			k = len(ps) - 1
		}
		ps[k].Nodes++
		ps[k].GPUs += p.gpus
	}
	return f.shapes.cl.set.Spanned(t, ps)
}

// spent reports whether the fill's time is spent (its stop has passed).
func (f *filler) spent() bool { return !f.stop.IsZero() && time.Now().After(f.stop) }
