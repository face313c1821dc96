package sim

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// TraceTruth is the "trace" ground truth: the measured profiles of a profiles
// folder (placements-<type>.csv, scalability-<type>.csv, validation-<bsz>.csv), interpolated as the published simulator does.
type TraceTruth struct {
	dir  string
	apps map[string]*traceApp
}

type profRow struct {
	nodes, replicas int
	local           float64
	step, sync      float64
}

type bszPoint struct{ b, step, sync float64 }

type nrKey struct{ n, r int }

type traceType struct {
	placements map[string][]bszPoint // placement id (smallest rotation) → rows sorted by b
	placeMax   map[string]int        // max local per placement id
	rows       []profRow             // placements and scalability rows, for oracle profiles
	scal       []profRow             // scalability rows only
	grid       map[nrKey][]bszPoint  // per (n, r) mean of placements + scalability, sorted by b
	byN        map[int][]int         // n → sorted replicas with data
	ns         []int                 // sorted node counts with data
	minLocal   int
	maxLocal   int
	replMax    map[int]int // replicas → max local among placement rows
	xput1      float64
	seed       []goodput.Observation
}

type validation struct {
	bsz                      float64
	progress, iteration, sqr []float64
	variance                 []float64
}

type traceApp struct {
	app   App
	types map[string]*traceType // by simulator type name
	val   []validation          // sorted by bsz
}

// LoadTrace reads the profiles folder dir (one sub-folder per model with
// placements-<type>.csv, scalability-<type>.csv and validation-<bsz>.csv) for
// the given simulator GPU types (see ProfileTypes). Models without a folder are
// skipped; a type a model was not profiled on is unsupported for it.
//
// The files are read by the bootstrap package's readers (bootstrap.ReadModelDirWith),
// with their checks: a byte-order mark, duplicate or missing columns, counts
// that are not positive integers, times that are not finite, a zero step time
// and a sync time not below its step time are errors naming file, line and
// column. Only the files of the requested types are read; a file that exists
// but cannot be read is an error, never skipped. Every error is an
// *InputError; for malformed files it also wraps the *bootstrap.ParseError.
func LoadTrace(dir string, types []string) (*TraceTruth, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, inputErr(dir, 0, "", "", "%v", errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, inputErr(dir, 0, "", "", "not a folder")
	}
	suffixes := make([]string, 0, len(types))
	for _, typ := range types {
		suffix, ok := ProfileTypes[typ]
		if !ok {
			return nil, inputErr("", 0, "", "cluster", "GPU type %q has no profiles (known: t4, a100, rtx, quad, v100)", typ)
		}
		suffixes = append(suffixes, suffix)
	}
	t := &TraceTruth{dir: dir, apps: map[string]*traceApp{}}
	for _, name := range AppNames {
		adir := filepath.Join(dir, name)
		st, err := os.Stat(adir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, inputErr(adir, 0, "", "", "%v", errors.Unwrap(err))
		}
		if !st.IsDir() {
			return nil, inputErr(adir, 0, "", "", "not a folder (want the model's profiles)")
		}
		m, err := bootstrap.ReadModelDirWith(adir, &bootstrap.ReadOptions{SyncBelowStep: true, Types: suffixes})
		if err != nil {
			return nil, profileErr(err)
		}
		a, err := newTraceApp(adir, name, m, types)
		if err != nil {
			return nil, err
		}
		t.apps[name] = a
	}
	if err := t.loadHybrid(dir, types); err != nil {
		return nil, err
	}
	if len(t.apps) == 0 {
		return nil, inputErr(dir, 0, "", "", "no model folders (%s) found", strings.Join(AppNames, ", "))
	}
	return t, nil
}

// profileErr turns an error of the bootstrap readers into an *InputError
// that keeps its position and wraps it.
func profileErr(err error) error {
	var pe *bootstrap.ParseError
	if errors.As(err, &pe) {
		return &InputError{File: pe.File, Line: pe.Line, Field: pe.Column, Reason: pe.Reason, Err: err}
	}
	return &InputError{Reason: strings.TrimPrefix(err.Error(), "bootstrap: "), Err: err}
}

// newTraceApp builds one model's ground truth from its profiles.
func newTraceApp(adir, name string, m *bootstrap.ModelProfile, types []string) (*traceApp, error) {
	a := &traceApp{types: map[string]*traceType{}}
	for _, c := range m.Validation {
		if len(c.Rows) == 0 {
			return nil, inputErr(adir, 0, "", "", "the validation file of batch size %d has no epochs", c.Batch)
		}
		v := validation{bsz: float64(c.Batch)}
		for _, r := range c.Rows {
			v.progress = append(v.progress, r.Progress)
			v.iteration = append(v.iteration, float64(r.Iteration))
			v.sqr = append(v.sqr, r.GradSqr)
			v.variance = append(v.variance, r.GradVar)
		}
		a.val = append(a.val, v)
	}
	if len(a.val) == 0 {
		return nil, inputErr(adir, 0, "", "", "no validation-<bsz>.csv files")
	}
	a.app = appConstants[name]
	a.app.InitBatch = int(a.val[0].bsz)
	a.app.MaxBatch = int(a.val[len(a.val)-1].bsz)
	for _, v := range a.val {
		if len(v.progress) < a.app.MaxEpochs {
			a.app.MaxEpochs = len(v.progress)
		}
	}
	for _, typ := range types {
		suffix := ProfileTypes[typ]
		tp, ok := m.Type(suffix)
		if !ok {
			continue
		}
		if len(tp.Placements) == 0 {
			return nil, inputErr(filepath.Join(adir, "placements-"+suffix+".csv"), 0, "", "", "no rows")
		}
		tt := newTraceType(tp)
		if name == "deepspeech2" && suffix == "rtx" {
			tt.maxLocal = 57 // the published simulator's override
		}
		a.types[typ] = tt
	}
	return a, nil
}

// newTraceType indexes the placement and scalability rows of one GPU type.
func newTraceType(tp bootstrap.TypeProfile) *traceType {
	tt := &traceType{placements: map[string][]bszPoint{}, placeMax: map[string]int{}, grid: map[nrKey][]bszPoint{}, byN: map[int][]int{}, replMax: map[int]int{}, minLocal: math.MaxInt}
	type acc struct{ s, y, n float64 }
	mean := map[nrKey]map[float64]*acc{}
	add := func(k nrKey, b, step, sync float64) {
		m := mean[k]
		if m == nil {
			m = map[float64]*acc{}
			mean[k] = m
		}
		x := m[b]
		if x == nil {
			x = &acc{}
			m[b] = x
		}
		x.s += step
		x.y += sync
		x.n++
	}
	var one1Max, step1Max float64
	for _, r := range tp.Placements {
		shape := placementShape(r.Placement)
		id := placementID(shape)
		b := float64(r.LocalBatch)
		tt.placements[id] = append(tt.placements[id], bszPoint{b, r.StepTime, r.SyncTime})
		if r.LocalBatch > tt.placeMax[id] {
			tt.placeMax[id] = r.LocalBatch
		}
		n, rep := len(shape), sum(shape)
		tt.rows = append(tt.rows, profRow{n, rep, b, r.StepTime, r.SyncTime})
		add(nrKey{n, rep}, b, r.StepTime, r.SyncTime)
		tt.minLocal = min(tt.minLocal, r.LocalBatch)
		tt.maxLocal = max(tt.maxLocal, r.LocalBatch)
		if r.LocalBatch > tt.replMax[rep] {
			tt.replMax[rep] = r.LocalBatch
		}
		if rep == 1 {
			one1Max = math.Max(one1Max, b)
			step1Max = math.Max(step1Max, r.StepTime)
			tt.seed = append(tt.seed, r.Observation())
		}
	}
	if step1Max > 0 {
		tt.xput1 = one1Max / step1Max
	}
	for _, r := range tp.Scalability {
		row := profRow{r.Nodes, r.Replicas, float64(r.LocalBatch), r.StepTime, r.SyncTime}
		tt.rows = append(tt.rows, row)
		tt.scal = append(tt.scal, row)
		add(nrKey{r.Nodes, r.Replicas}, row.local, r.StepTime, r.SyncTime)
	}
	for id := range tt.placements {
		pts := tt.placements[id]
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].b < pts[j].b })
		tt.placements[id] = dedupPoints(pts)
	}
	for k, m := range mean {
		pts := make([]bszPoint, 0, len(m))
		for b, x := range m {
			pts = append(pts, bszPoint{b, x.s / x.n, x.y / x.n})
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].b < pts[j].b })
		tt.grid[k] = pts
		tt.byN[k.n] = append(tt.byN[k.n], k.r)
	}
	for n := range tt.byN {
		sort.Ints(tt.byN[n])
		tt.ns = append(tt.ns, n)
	}
	sort.Ints(tt.ns)
	return tt
}

// dedupPoints averages rows with the same batch size (sorted input).
func dedupPoints(pts []bszPoint) []bszPoint {
	out := pts[:0:0]
	for i := 0; i < len(pts); {
		j, s, y := i, 0.0, 0.0
		for ; j < len(pts) && pts[j].b == pts[i].b; j++ {
			s += pts[j].step
			y += pts[j].sync
		}
		c := float64(j - i)
		out = append(out, bszPoint{pts[i].b, s / c, y / c})
		i = j
	}
	return out
}

// placementShape turns a placement of the profile files (one digit 1-9 per
// node, checked by the bootstrap reader) into GPUs per node.
func placementShape(p string) []int {
	out := make([]int, len(p))
	for i := 0; i < len(p); i++ {
		out[i] = int(p[i] - '0')
	}
	return out
}

// placementID normalises a shape to its lexicographically smallest rotation,
// as a digit string (the artifact's lookup key).
func placementID(shape []int) string {
	best := ""
	n := len(shape)
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for j := 0; j < n; j++ {
			v := shape[(i+j)%n]
			if v > 9 {
				sb.WriteString("|")
			}
			sb.WriteString(strconv.Itoa(v))
		}
		s := sb.String()
		if i == 0 || s < best {
			best = s
		}
	}
	return best
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// Name implements Truth.
func (t *TraceTruth) Name() string { return "trace:" + t.dir }

// App implements Truth.
func (t *TraceTruth) App(name string) (*App, bool) {
	a, ok := t.apps[name]
	if !ok {
		return nil, false
	}
	return &a.app, true
}

func (t *TraceTruth) typ(app, typ string) *traceType {
	a, ok := t.apps[app]
	if !ok {
		return nil
	}
	return a.types[typ]
}

// Supports implements Truth.
func (t *TraceTruth) Supports(app, typ string) bool { return t.typ(app, typ) != nil }

// LocalRange implements Truth.
func (t *TraceTruth) LocalRange(app, typ string) (int, int) {
	tt := t.typ(app, typ)
	if tt == nil {
		return 0, 0
	}
	return tt.minLocal, tt.maxLocal
}

// PlacementMaxLocal implements Truth: the max batch among rows of exactly this
// placement, else among scalability rows with at least as many nodes and
// replicas, else the type's limit.
func (t *TraceTruth) PlacementMaxLocal(app, typ string, shape []int) int {
	tt := t.typ(app, typ)
	if tt == nil {
		return 0
	}
	if m, ok := tt.placeMax[placementID(shape)]; ok {
		return m
	}
	n, r := len(shape), sum(shape)
	best := 0
	for _, row := range tt.scal {
		if row.nodes >= n && row.replicas >= r && int(row.local) > best {
			best = int(row.local)
		}
	}
	if best == 0 {
		return tt.maxLocal
	}
	return best
}

// ReplicaMaxLocal implements Truth.
func (t *TraceTruth) ReplicaMaxLocal(app, typ string, replicas int) (int, bool) {
	tt := t.typ(app, typ)
	if tt == nil {
		return 0, false
	}
	m, ok := tt.replMax[replicas]
	return m, ok
}

// StepTime implements Truth. A measured placement is interpolated linearly in
// the per-GPU batch size (clamped at the measured range). Other placements are
// interpolated over (nodes ≤ 16, replicas, batch) on the per-key means of the
// placement and scalability rows: first in batch size within each (nodes,
// replicas) key, then linearly between the nearest replica counts with the same
// node count, then between the nearest node counts. This separable scheme
// replaces the artifact's Delaunay (LinearNDInterpolator); both are exact at
// measured points and linear between neighbours along each axis.
func (t *TraceTruth) StepTime(app, typ string, shape []int, local int) (float64, float64, bool) {
	tt := t.typ(app, typ)
	if tt == nil || len(shape) == 0 || local <= 0 {
		return 0, 0, false
	}
	b := float64(local)
	if pts, ok := tt.placements[placementID(shape)]; ok {
		s, y := interpB(pts, b)
		return s, y, true
	}
	n, r := len(shape), sum(shape)
	if n > 16 {
		n = 16
	}
	s, y, ok := tt.interpNR(n, r, b)
	return s, y, ok
}

func interpB(pts []bszPoint, b float64) (float64, float64) {
	if b <= pts[0].b {
		return pts[0].step, pts[0].sync
	}
	last := pts[len(pts)-1]
	if b >= last.b {
		return last.step, last.sync
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i].b >= b })
	lo, hi := pts[i-1], pts[i]
	w := (b - lo.b) / (hi.b - lo.b)
	return lo.step + w*(hi.step-lo.step), lo.sync + w*(hi.sync-lo.sync)
}

// interpR interpolates along replicas within node count n.
func (tt *traceType) interpR(n, r int, b float64) (float64, float64, bool) {
	rs := tt.byN[n]
	if len(rs) == 0 {
		return 0, 0, false
	}
	i := sort.SearchInts(rs, r)
	if i < len(rs) && rs[i] == r {
		s, y := interpB(tt.grid[nrKey{n, r}], b)
		return s, y, true
	}
	if i == 0 || i == len(rs) {
		// outside the measured replica range for this node count: nearest key
		j := 0
		if i == len(rs) {
			j = len(rs) - 1
		}
		s, y := interpB(tt.grid[nrKey{n, rs[j]}], b)
		return s, y, false
	}
	s0, y0 := interpB(tt.grid[nrKey{n, rs[i-1]}], b)
	s1, y1 := interpB(tt.grid[nrKey{n, rs[i]}], b)
	w := float64(r-rs[i-1]) / float64(rs[i]-rs[i-1])
	return s0 + w*(s1-s0), y0 + w*(y1-y0), true
}

func (tt *traceType) interpNR(n, r int, b float64) (float64, float64, bool) {
	if s, y, ok := tt.interpR(n, r, b); ok {
		return s, y, true
	}
	// Between node counts whose replica range covers r.
	var lo, hi = -1, -1
	for _, m := range tt.ns {
		if _, _, ok := tt.interpR(m, r, b); !ok {
			continue
		}
		if m < n {
			lo = m
		}
		if m > n && hi < 0 {
			hi = m
		}
	}
	switch {
	case lo > 0 && hi > 0:
		s0, y0, _ := tt.interpR(lo, r, b)
		s1, y1, _ := tt.interpR(hi, r, b)
		w := float64(n-lo) / float64(hi-lo)
		return s0 + w*(s1-s0), y0 + w*(y1-y0), true
	case lo > 0:
		s, y, _ := tt.interpR(lo, r, b)
		return s, y, true
	case hi > 0:
		s, y, _ := tt.interpR(hi, r, b)
		return s, y, true
	}
	// Nothing covers r: the nearest key overall.
	best, bd := nrKey{}, math.MaxInt
	for k := range tt.grid {
		d := 4*abs(k.n-n) + abs(k.r-r)
		if d < bd || (d == bd && (k.n < best.n || (k.n == best.n && k.r < best.r))) {
			best, bd = k, d
		}
	}
	if bd == math.MaxInt {
		return 0, 0, false
	}
	s, y := interpB(tt.grid[best], b)
	return s, y, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// validatedBounds returns the indices of the validated batch sizes around b.
func (a *traceApp) validatedBounds(b float64) (int, int, float64) {
	v := a.val
	if b <= v[0].bsz {
		return 0, 0, 0
	}
	if b >= v[len(v)-1].bsz {
		return len(v) - 1, len(v) - 1, 0
	}
	i := sort.Search(len(v), func(i int) bool { return v[i].bsz >= b })
	if v[i].bsz == b {
		return i, i, 0
	}
	return i - 1, i, (b - v[i-1].bsz) / (v[i].bsz - v[i-1].bsz)
}

func clampEpoch(e, n int) int {
	if e < 0 {
		return 0
	}
	if e >= n {
		return n - 1
	}
	return e
}

// GradStats implements Truth: the validation files' statistics at the epoch,
// linearly interpolated between the neighbouring validated batch sizes.
func (t *TraceTruth) GradStats(app string, batch float64, epoch int) goodput.GradStats {
	a, ok := t.apps[app]
	if !ok {
		return goodput.GradStats{}
	}
	lo, hi, w := a.validatedBounds(batch)
	el := clampEpoch(epoch, len(a.val[lo].sqr))
	eh := clampEpoch(epoch, len(a.val[hi].sqr))
	return goodput.GradStats{
		Sqr: a.val[lo].sqr[el] + w*(a.val[hi].sqr[eh]-a.val[lo].sqr[el]),
		Var: a.val[lo].variance[el] + w*(a.val[hi].variance[eh]-a.val[lo].variance[el]),
	}
}

// Progress implements Truth: the smallest cumulative progress over validated
// batch sizes at the end of epoch−1.
func (t *TraceTruth) Progress(app string, epoch int) float64 {
	a, ok := t.apps[app]
	if !ok || epoch <= 0 {
		return 0
	}
	best := math.Inf(1)
	for _, v := range a.val {
		best = math.Min(best, v.progress[clampEpoch(epoch-1, len(v.progress))])
	}
	return best
}

// Iterations implements Truth.
func (t *TraceTruth) Iterations(app string, batch float64, epoch int) float64 {
	a, ok := t.apps[app]
	if !ok {
		return 0
	}
	lo, hi, w := a.validatedBounds(batch)
	l := a.val[lo].iteration[clampEpoch(epoch, len(a.val[lo].iteration))]
	h := a.val[hi].iteration[clampEpoch(epoch, len(a.val[hi].iteration))]
	return l + w*(h-l)
}

// Xput1 implements Truth.
func (t *TraceTruth) Xput1(app, typ string) float64 {
	if tt := t.typ(app, typ); tt != nil {
		return tt.xput1
	}
	return 0
}

// Profile implements Truth. For a hybrid-parallel application (App.Stages)
// the rows are in the library's units of a pipeline job: Replicas counts
// pipelines (maxReplicas too) and StepTime is the per-stage micro-batch time
// plus the all-reduce.
func (t *TraceTruth) Profile(app, typ string, maxNodes, maxReplicas int) []goodput.Observation {
	tt := t.typ(app, typ)
	if tt == nil {
		return nil
	}
	if s, ok := t.stagesOf(app, typ); ok {
		return hybridProfile(tt.rows, s, maxNodes, maxReplicas)
	}
	seen := map[[3]int]bool{}
	var out []goodput.Observation
	for _, r := range tt.rows {
		if (maxNodes > 0 && r.nodes > maxNodes) || (maxReplicas > 0 && r.replicas > maxReplicas) {
			continue
		}
		k := [3]int{r.nodes, r.replicas, int(r.local)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, goodput.Observation{Nodes: r.nodes, Replicas: r.replicas, LocalBatch: int(r.local), StepTime: r.step, SyncTime: r.sync})
	}
	return out
}

// SeedProfile implements Truth. For a hybrid-parallel application it is
// the profile of one pipeline replica on one node, in the units of Profile.
func (t *TraceTruth) SeedProfile(app, typ string) []goodput.Observation {
	if s, ok := t.stagesOf(app, typ); ok {
		return hybridSeed(t.typ(app, typ).rows, s)
	}
	if tt := t.typ(app, typ); tt != nil {
		return append([]goodput.Observation(nil), tt.seed...)
	}
	return nil
}

// Curve is one validation file: per-epoch progress, iterations and gradient
// statistics at one validated batch size.
type Curve struct {
	Batch                         float64
	Progress, Iteration, Sqr, Var []float64
}

// Curves returns the validation curves of an application, by batch size.
func (t *TraceTruth) Curves(app string) []Curve {
	a, ok := t.apps[app]
	if !ok {
		return nil
	}
	out := make([]Curve, len(a.val))
	for i, v := range a.val {
		out[i] = Curve{Batch: v.bsz, Progress: v.progress, Iteration: v.iteration, Sqr: v.sqr, Var: v.variance}
	}
	return out
}
