package sim

import (
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sia-sched/sia/goodput"
)

// TraceTruth is the "trace" ground truth: the measured profiles of a profiles
// folder (design.md §9), interpolated as the published simulator does.
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
func LoadTrace(dir string, types []string) (*TraceTruth, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, inputErr(dir, 0, "", "", "%v", errors.Unwrap(err))
	}
	if !st.IsDir() {
		return nil, inputErr(dir, 0, "", "", "not a folder")
	}
	t := &TraceTruth{dir: dir, apps: map[string]*traceApp{}}
	for _, name := range AppNames {
		adir := filepath.Join(dir, name)
		if st, err := os.Stat(adir); err != nil || !st.IsDir() {
			continue
		}
		a, err := loadTraceApp(adir, name, types)
		if err != nil {
			return nil, err
		}
		t.apps[name] = a
	}
	if len(t.apps) == 0 {
		return nil, inputErr(dir, 0, "", "", "no model folders (%s) found", strings.Join(AppNames, ", "))
	}
	return t, nil
}

func loadTraceApp(adir, name string, types []string) (*traceApp, error) {
	a := &traceApp{types: map[string]*traceType{}}
	vals, _ := filepath.Glob(filepath.Join(adir, "validation-*.csv"))
	for _, f := range vals {
		bs := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "validation-"), ".csv")
		b, err := strconv.Atoi(bs)
		if err != nil || b <= 0 {
			return nil, inputErr(f, 0, "", "", "batch size %q in the file name is not a positive integer", bs)
		}
		recs, err := readTable(f, "progress", "iteration", "grad_sqr", "grad_var")
		if err != nil {
			return nil, err
		}
		v := validation{bsz: float64(b)}
		for _, r := range recs {
			v.progress = append(v.progress, r[0])
			v.iteration = append(v.iteration, r[1])
			v.sqr = append(v.sqr, r[2])
			v.variance = append(v.variance, r[3])
		}
		if len(v.progress) == 0 {
			return nil, inputErr(f, 0, "", "", "no epochs")
		}
		a.val = append(a.val, v)
	}
	if len(a.val) == 0 {
		return nil, inputErr(adir, 0, "", "", "no validation-<bsz>.csv files")
	}
	sort.Slice(a.val, func(i, j int) bool { return a.val[i].bsz < a.val[j].bsz })
	a.app = appConstants[name]
	a.app.InitBatch = int(a.val[0].bsz)
	a.app.MaxBatch = int(a.val[len(a.val)-1].bsz)
	for _, v := range a.val {
		if len(v.progress) < a.app.MaxEpochs {
			a.app.MaxEpochs = len(v.progress)
		}
	}
	for _, typ := range types {
		suffix, ok := ProfileTypes[typ]
		if !ok {
			return nil, inputErr("", 0, "", "cluster", "GPU type %q has no profiles (known: t4, a100, rtx, quad, v100)", typ)
		}
		pf := filepath.Join(adir, "placements-"+suffix+".csv")
		if _, err := os.Stat(pf); err != nil {
			continue
		}
		tt, err := loadTraceType(pf, filepath.Join(adir, "scalability-"+suffix+".csv"))
		if err != nil {
			return nil, err
		}
		if name == "deepspeech2" && suffix == "rtx" {
			tt.maxLocal = 57 // the published simulator's override
		}
		a.types[typ] = tt
	}
	return a, nil
}

func loadTraceType(pfile, sfile string) (*traceType, error) {
	tt := &traceType{placements: map[string][]bszPoint{}, placeMax: map[string]int{}, grid: map[nrKey][]bszPoint{}, byN: map[int][]int{}, replMax: map[int]int{}, minLocal: math.MaxInt}
	f, err := os.Open(pfile)
	if err != nil {
		return nil, inputErr(pfile, 0, "", "", "%v", errors.Unwrap(err))
	}
	defer f.Close()
	recs, places, err := readCSV(f, pfile, []string{"local_bsz", "step_time", "sync_time"}, "placement")
	if err != nil {
		return nil, err
	}
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
	for i, r := range recs {
		shape, err := parsePlacement(places[i].val)
		if err != nil {
			return nil, inputErr(pfile, places[i].line, "", "placement", "%v", err)
		}
		id := placementID(shape)
		b := r[0]
		tt.placements[id] = append(tt.placements[id], bszPoint{b, r[1], r[2]})
		if int(b) > tt.placeMax[id] {
			tt.placeMax[id] = int(b)
		}
		n, rep := len(shape), sum(shape)
		tt.rows = append(tt.rows, profRow{n, rep, b, r[1], r[2]})
		add(nrKey{n, rep}, b, r[1], r[2])
		if int(b) < tt.minLocal {
			tt.minLocal = int(b)
		}
		if int(b) > tt.maxLocal {
			tt.maxLocal = int(b)
		}
		if int(b) > tt.replMax[rep] {
			tt.replMax[rep] = int(b)
		}
		if rep == 1 {
			one1Max = math.Max(one1Max, b)
			step1Max = math.Max(step1Max, r[1])
			tt.seed = append(tt.seed, goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: int(b), StepTime: r[1], SyncTime: r[2]})
		}
	}
	if len(recs) == 0 {
		return nil, inputErr(pfile, 0, "", "", "no rows")
	}
	if step1Max > 0 {
		tt.xput1 = one1Max / step1Max
	}
	if sf, err := os.Open(sfile); err == nil {
		defer sf.Close()
		srecs, _, err := readCSV(sf, sfile, []string{"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}, "")
		if err != nil {
			return nil, err
		}
		for _, r := range srecs {
			n, rep := int(r[0]), int(r[1])
			if n < 1 || rep < 1 {
				return nil, inputErr(sfile, 0, "", "num_nodes", "non-positive node or replica count")
			}
			row := profRow{n, rep, r[2], r[3], r[4]}
			tt.rows = append(tt.rows, row)
			tt.scal = append(tt.scal, row)
			add(nrKey{n, rep}, r[2], r[3], r[4])
		}
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
	return tt, nil
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

type strCell struct {
	val  string
	line int
}

// readCSV reads numeric columns cols (and optionally one string column) by
// header name, returning rows of floats. Errors name file:line and the column.
func readCSV(r io.Reader, file string, cols []string, strCol string) ([][]float64, []strCell, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, nil, inputErr(file, 1, "", "", "empty file")
		}
		return nil, nil, csvErr(file, err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(h)] = i
	}
	want := append([]string(nil), cols...)
	if strCol != "" {
		want = append(want, strCol)
	}
	for _, c := range want {
		if _, ok := idx[c]; !ok {
			return nil, nil, inputErr(file, 1, "", c, "missing column")
		}
	}
	var out [][]float64
	var strs []strCell
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, csvErr(file, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			return nil, nil, inputErr(file, line, "", "", "%d fields, want %d", len(rec), len(header))
		}
		row := make([]float64, len(cols))
		for i, c := range cols {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[idx[c]]), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, nil, inputErr(file, line, "", c, "%q is not a finite number >= 0", rec[idx[c]])
			}
			row[i] = v
		}
		out = append(out, row)
		if strCol != "" {
			strs = append(strs, strCell{strings.TrimSpace(rec[idx[strCol]]), line})
		}
	}
	return out, strs, nil
}

func readTable(file string, cols ...string) ([][]float64, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, inputErr(file, 0, "", "", "%v", errors.Unwrap(err))
	}
	defer f.Close()
	rows, _, err := readCSV(f, file, cols, "")
	return rows, err
}

func parsePlacement(s string) ([]int, error) {
	if s == "" || len(s) > 64 {
		return nil, errors.New("want a digit string, one digit per node")
	}
	out := make([]int, 0, len(s))
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil, errors.New("want a digit string, one digit per node")
		}
		if c != '0' {
			out = append(out, int(c-'0'))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no GPUs in placement")
	}
	return out, nil
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

// Profile implements Truth.
func (t *TraceTruth) Profile(app, typ string, maxNodes, maxReplicas int) []goodput.Observation {
	tt := t.typ(app, typ)
	if tt == nil {
		return nil
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

// SeedProfile implements Truth.
func (t *TraceTruth) SeedProfile(app, typ string) []goodput.Observation {
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
