package bootstrap

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/csvtext"
	"github.com/sia-sched/sia/internal/errtext"
	"github.com/sia-sched/sia/internal/numtext"
)

// ErrMalformed is wrapped by every error the profile readers return for a
// file that does not follow its format. Use errors.Is(err,
// bootstrap.ErrMalformed); errors.As with *ParseError gives the position.
var ErrMalformed = errors.New("bootstrap: malformed profile")

// ParseError locates a malformed profile file, row or field. It wraps
// ErrMalformed.
type ParseError struct {
	// File is the name the reader was given (usually the file's path).
	File string
	// Line is the 1-based line of the offending row (1 = the header); 0 when
	// the problem concerns the whole file.
	Line int
	// Column names the offending column, if any.
	Column string
	// Reason says what is wrong.
	Reason string
}

// Error implements error as "file:line: column "c": reason". A file name
// with control characters or invalid UTF-8 is quoted, so that the message
// stays on one line, and a reason longer than 1000 bytes is cut.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(printable(e.File))
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q: ", e.Column)
	}
	b.WriteString(errtext.Clip(e.Reason, 1000))
	return b.String()
}

// Unwrap returns ErrMalformed.
func (e *ParseError) Unwrap() []error { return []error{ErrMalformed} }

// PlacementRow is one row of placements-<type>.csv: the step and sync times
// measured with a concrete placement.
type PlacementRow struct {
	// Placement has one digit (1-9) per node: the GPUs used on that node.
	Placement string
	// LocalBatch is the per-GPU batch size.
	LocalBatch int
	// StepTime is the seconds per optimizer step including synchronisation;
	// SyncTime the seconds of gradient all-reduce.
	StepTime, SyncTime float64
}

// Nodes returns the number of nodes of the placement (its number of digits).
func (r PlacementRow) Nodes() int { return len(r.Placement) }

// Replicas returns the number of GPUs of the placement (its digit sum).
func (r PlacementRow) Replicas() int {
	n := 0
	for i := 0; i < len(r.Placement); i++ {
		n += int(r.Placement[i] - '0')
	}
	return n
}

// Observation converts the row for goodput.Fit.
func (r PlacementRow) Observation() goodput.Observation {
	return goodput.Observation{Nodes: r.Nodes(), Replicas: r.Replicas(), LocalBatch: r.LocalBatch, StepTime: r.StepTime, SyncTime: r.SyncTime}
}

// ScalabilityRow is one row of scalability-<type>.csv: step and sync times of
// larger configurations, given by node and replica counts.
type ScalabilityRow struct {
	Nodes, Replicas, LocalBatch int
	StepTime, SyncTime          float64
}

// Observation converts the row for goodput.Fit.
func (r ScalabilityRow) Observation() goodput.Observation {
	return goodput.Observation{Nodes: r.Nodes, Replicas: r.Replicas, LocalBatch: r.LocalBatch, StepTime: r.StepTime, SyncTime: r.SyncTime}
}

// ValidationRow is one row (one epoch) of validation-<bsz>.csv.
type ValidationRow struct {
	// Progress is the cumulative progress at the end of the epoch, in
	// iterations at the initial batch size.
	Progress float64
	// Iteration is the number of real iterations at this batch size.
	Iteration int
	// Metric is the validation metric.
	Metric float64
	// GradSqr and GradVar are the gradient statistics during the epoch.
	GradSqr, GradVar float64
}

// Grad returns the row's gradient statistics.
func (r ValidationRow) Grad() goodput.GradStats {
	return goodput.GradStats{Sqr: r.GradSqr, Var: r.GradVar}
}

// SeedRow is one row of a seed profile (seed-profiles/<model>.csv): a 1-GPU
// (or small) measurement of one GPU type collected at job submission.
type SeedRow struct {
	GPUType string
	PlacementRow
}

// Column sets of the formats (see ReadPlacements and ReadScalability). Columns are found by header
// name, in any order; extra columns are ignored. A leading byte-order mark, CR
// or CRLF line ends, quoted fields and blank rows (also a spreadsheet's ",,,")
// are accepted; numbers are decimal (no hexadecimal form or digit
// separators).
var (
	placementColumns   = []string{"placement", "local_bsz", "step_time", "sync_time"}
	scalabilityColumns = []string{"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"}
	validationColumns  = []string{"progress", "iteration", "metric", "grad_sqr", "grad_var"}
	seedColumns        = []string{"gpu_type", "local_bsz", "placement", "step_time", "sync_time"}
)

// ReadOptions tightens the profile readers. A nil *ReadOptions (and the
// zero value) reads as ReadModelDir does.
type ReadOptions struct {
	// SyncBelowStep rejects a placement or scalability row whose sync_time is
	// not below its step_time (file, line and column sync_time in the error).
	// A ground truth that splits a step into compute (step − sync) and
	// all-reduce needs it, as does every row given to goodput.Fit; gpt_pmp's
	// per-micro-batch files break it, so it is off by default.
	SyncBelowStep bool
	// Types, when not empty, restricts ReadModelDirWith and ReadModelFSWith
	// to the GPU types listed (profile file suffixes such as "aws"): the
	// placements and scalability files of other types are not read, so a
	// malformed file of an unused type does not fail the read.
	Types []string
}

func (o *ReadOptions) wants(typ string) bool {
	return o == nil || len(o.Types) == 0 || slices.Contains(o.Types, typ)
}

// profTable is a CSV file with a checked header.
type profTable struct {
	name string
	r    *csv.Reader
	col  map[string]int
	rec  []string
	opt  ReadOptions
	// fields is the header's field count, which every row must have
	fields int
}

func profOpen(r io.Reader, name string, required []string, opt *ReadOptions) (*profTable, error) {
	cr := csv.NewReader(csvtext.Reader(r))
	cr.FieldsPerRecord = -1 // checked in next, after blank rows are skipped
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &ParseError{File: name, Reason: "empty file, want a header " + strings.Join(required, ",")}
	}
	if err != nil {
		return nil, profCSVError(name, err)
	}
	t := &profTable{name: name, r: cr, col: make(map[string]int, len(header)), fields: len(header)}
	if opt != nil {
		t.opt = *opt
	}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := t.col[h]; dup && h != "" {
			return nil, &ParseError{File: name, Line: 1, Column: h, Reason: "duplicate column"}
		}
		t.col[h] = i
	}
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			return nil, &ParseError{File: name, Line: 1, Column: c, Reason: "missing column (header: " + quoteHeader(header) + ")"}
		}
	}
	return t, nil
}

// printable returns s, or s quoted as a Go string when it holds characters
// that are not printable (newlines, control bytes) or invalid UTF-8.
func printable(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// quoteHeader formats a header for an error message on one line: fields
// joined by commas, with control characters and invalid UTF-8 escaped, and
// cut after 200 bytes.
func quoteHeader(header []string) string {
	q := strconv.Quote(strings.Join(header, ","))
	q = q[1 : len(q)-1]
	if len(q) > 200 {
		q = q[:200] + "…"
	}
	return q
}

func profCSVError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{File: name, Line: pe.Line, Reason: pe.Err.Error()}
	}
	return &ParseError{File: name, Reason: err.Error()}
}

// next reads the next record that is not blank (a spreadsheet's ",,," row
// or a line of spaces reads as an empty line), with as many fields as the
// header; false at the end of the file.
func (t *profTable) next() (bool, error) {
	for {
		rec, err := t.r.Read()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, profCSVError(t.name, err)
		}
		if csvtext.Blank(rec) {
			continue
		}
		t.rec = rec
		if len(rec) != t.fields {
			return false, t.errorf("", "wrong number of fields: %d, want %d as in the header", len(rec), t.fields)
		}
		return true, nil
	}
}

func (t *profTable) line() int {
	line, _ := t.r.FieldPos(0)
	return line
}

func (t *profTable) errorf(column, format string, args ...any) error {
	return &ParseError{File: t.name, Line: t.line(), Column: column, Reason: fmt.Sprintf(format, args...)}
}

func (t *profTable) field(c string) string { return strings.TrimSpace(t.rec[t.col[c]]) }

// float parses a finite number; nonNegative also rejects values below 0.
func (t *profTable) float(c string, nonNegative bool) (float64, error) {
	s := t.field(c)
	v, err := csvtext.ParseFloat(s)
	if errors.Is(err, numtext.ErrUnderflow) {
		return 0, t.errorf(c, "%q %v", s, numtext.ErrUnderflow)
	}
	if err != nil {
		return 0, t.errorf(c, "%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, t.errorf(c, "%q is not finite", s)
	}
	if nonNegative && v < 0 {
		return 0, t.errorf(c, "%v is negative", v)
	}
	return v, nil
}

// MaxCount bounds the integer columns of the profile formats (local_bsz,
// num_nodes, num_replicas, iteration): goodput.MaxBatchSize, far above any
// real count, so that sums and products of counts cannot overflow.
const MaxCount = goodput.MaxBatchSize

// count parses a positive integer, also written as an integral decimal
// ("20.0" appears in the published scalability files).
func (t *profTable) count(c string, min int) (int, error) {
	s := t.field(c)
	if n, err := strconv.Atoi(s); err == nil {
		if n < min {
			return 0, t.errorf(c, "%d is below %d", n, min)
		}
		if n > MaxCount {
			return 0, t.errorf(c, "%d is above %d", n, MaxCount)
		}
		return n, nil
	}
	v, err := csvtext.ParseFloat(s)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) {
		return 0, t.errorf(c, "%q is not an integer", s)
	}
	if v > MaxCount {
		return 0, t.errorf(c, "%q is above %d", s, MaxCount)
	}
	if int(v) < min {
		return 0, t.errorf(c, "%v is below %d", v, min)
	}
	return int(v), nil
}

func (t *profTable) placement() (string, error) {
	s := t.field("placement")
	if s == "" {
		return "", t.errorf("placement", "empty placement")
	}
	if len(s) > 64 {
		return "", t.errorf("placement", "%d nodes is more than 64", len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '1' || s[i] > '9' {
			return "", t.errorf("placement", "%q is not a string of digits 1-9 (one digit per node)", s)
		}
	}
	return s, nil
}

func (t *profTable) times() (step, sync float64, err error) {
	if step, err = t.float("step_time", true); err != nil {
		return 0, 0, err
	}
	if step == 0 {
		return 0, 0, t.errorf("step_time", "zero step time")
	}
	if sync, err = t.float("sync_time", true); err != nil {
		return 0, 0, err
	}
	if t.opt.SyncBelowStep && sync >= step {
		return 0, 0, t.errorf("sync_time", "%v is not below step_time %v", sync, step)
	}
	return step, sync, nil
}

func (t *profTable) placementRow() (PlacementRow, error) {
	var r PlacementRow
	var err error
	if r.Placement, err = t.placement(); err != nil {
		return r, err
	}
	if r.LocalBatch, err = t.count("local_bsz", 1); err != nil {
		return r, err
	}
	r.StepTime, r.SyncTime, err = t.times()
	return r, err
}

// readRows reads every data row of a profile file with the given columns,
// converting each with row; the first error stops the read.
func readRows[T any](r io.Reader, name string, cols []string, opt *ReadOptions, row func(*profTable) (T, error)) ([]T, error) {
	t, err := profOpen(r, name, cols, opt)
	if err != nil {
		return nil, err
	}
	var out []T
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		v, err := row(t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
}

// ReadPlacements reads a placements-<type>.csv file (columns placement,
// local_bsz, step_time, sync_time in any order; gpt_pmp's files put placement
// last). name is used in errors. Placements must be strings of digits 1-9,
// local_bsz a positive integer up to MaxCount, times finite, non-negative,
// step_time > 0.
// The sync time may exceed the step time (gpt_pmp's files record a
// per-micro-batch step time); goodput.Fit rejects such observations.
func ReadPlacements(r io.Reader, name string) ([]PlacementRow, error) {
	return ReadPlacementsWith(r, name, nil)
}

// ReadPlacementsWith is ReadPlacements with the checks of opt (nil = none
// beyond ReadPlacements').
func ReadPlacementsWith(r io.Reader, name string, opt *ReadOptions) ([]PlacementRow, error) {
	return readRows(r, name, placementColumns, opt, (*profTable).placementRow)
}

// ReadScalability reads a scalability-<type>.csv file (columns num_nodes,
// num_replicas, local_bsz, step_time, sync_time in any order). name is used in
// errors. Counts must be positive integers up to MaxCount with num_replicas ≥
// num_nodes.
func ReadScalability(r io.Reader, name string) ([]ScalabilityRow, error) {
	return ReadScalabilityWith(r, name, nil)
}

// ReadScalabilityWith is ReadScalability with the checks of opt (nil = none
// beyond ReadScalability's).
func ReadScalabilityWith(r io.Reader, name string, opt *ReadOptions) ([]ScalabilityRow, error) {
	return readRows(r, name, scalabilityColumns, opt, func(t *profTable) (row ScalabilityRow, err error) {
		if row.Nodes, err = t.count("num_nodes", 1); err != nil {
			return row, err
		}
		if row.Replicas, err = t.count("num_replicas", 1); err != nil {
			return row, err
		}
		if row.Replicas < row.Nodes {
			return row, t.errorf("num_replicas", "%d replicas on %d nodes: want at least one GPU per node", row.Replicas, row.Nodes)
		}
		if row.LocalBatch, err = t.count("local_bsz", 1); err != nil {
			return row, err
		}
		if row.StepTime, row.SyncTime, err = t.times(); err != nil {
			return row, err
		}
		return row, nil
	})
}

// ReadValidation reads a validation-<bsz>.csv file (columns progress,
// iteration, metric, grad_sqr, grad_var in any order). name is used in errors.
// Progress, iteration and the gradient statistics must be non-negative,
// metric finite.
func ReadValidation(r io.Reader, name string) ([]ValidationRow, error) {
	return readRows(r, name, validationColumns, nil, func(t *profTable) (row ValidationRow, err error) {
		if row.Progress, err = t.float("progress", true); err != nil {
			return row, err
		}
		if row.Iteration, err = t.count("iteration", 0); err != nil {
			return row, err
		}
		if row.Metric, err = t.float("metric", false); err != nil {
			return row, err
		}
		if row.GradSqr, err = t.float("grad_sqr", true); err != nil {
			return row, err
		}
		if row.GradVar, err = t.float("grad_var", true); err != nil {
			return row, err
		}
		return row, nil
	})
}

// ReadSeed reads a seed profile (columns gpu_type, local_bsz, placement,
// step_time, sync_time in any order). name is used in errors.
func ReadSeed(r io.Reader, name string) ([]SeedRow, error) {
	return readRows(r, name, seedColumns, nil, func(t *profTable) (row SeedRow, err error) {
		if row.GPUType = t.field("gpu_type"); row.GPUType == "" {
			return row, t.errorf("gpu_type", "empty GPU type")
		}
		if row.PlacementRow, err = t.placementRow(); err != nil {
			return row, err
		}
		return row, nil
	})
}

// LimitsFromPlacements returns the per-GPU batch limits of a GPU type as the
// published simulator derives them: the smallest and largest local_bsz in the
// type's placements file. It fails on an empty slice.
func LimitsFromPlacements(rows []PlacementRow) (goodput.Limits, error) {
	if len(rows) == 0 {
		return goodput.Limits{}, fmt.Errorf("%w: no placement rows to take batch limits from", ErrMalformed)
	}
	l := goodput.Limits{MinLocalBatch: rows[0].LocalBatch, MaxLocalBatch: rows[0].LocalBatch}
	for _, r := range rows[1:] {
		l.MinLocalBatch = min(l.MinLocalBatch, r.LocalBatch)
		l.MaxLocalBatch = max(l.MaxLocalBatch, r.LocalBatch)
	}
	return l, nil
}

// TypeProfile holds the measured profiles of one model on one GPU type.
type TypeProfile struct {
	// Type is the GPU type name taken from the file names.
	Type string
	// Placements and Scalability are the rows of placements-<type>.csv and
	// scalability-<type>.csv (empty if that file is absent).
	Placements  []PlacementRow
	Scalability []ScalabilityRow
}

// Observations returns the placement rows followed by the scalability rows
// as goodput observations.
func (t TypeProfile) Observations() []goodput.Observation {
	out := make([]goodput.Observation, 0, len(t.Placements)+len(t.Scalability))
	for _, r := range t.Placements {
		out = append(out, r.Observation())
	}
	for _, r := range t.Scalability {
		out = append(out, r.Observation())
	}
	return out
}

// Limits returns the type's per-GPU batch limits (see LimitsFromPlacements).
func (t TypeProfile) Limits() (goodput.Limits, error) {
	l, err := LimitsFromPlacements(t.Placements)
	if err != nil {
		return l, fmt.Errorf("type %s: %w", t.Type, err)
	}
	return l, nil
}

// ValidationCurve is the content of one validation-<bsz>.csv file.
type ValidationCurve struct {
	// Batch is the global batch size from the file name.
	Batch int
	// Rows holds one row per epoch.
	Rows []ValidationRow
}

// ModelProfile holds everything measured for one model: the profiles of each
// GPU type and the validation curves of each batch size.
type ModelProfile struct {
	// Name is the model's folder name.
	Name string
	// Types are sorted by name.
	Types []TypeProfile
	// Validation curves are sorted by batch size.
	Validation []ValidationCurve
}

// Type returns the profile of GPU type name.
func (m *ModelProfile) Type(name string) (TypeProfile, bool) {
	i := sort.Search(len(m.Types), func(i int) bool { return m.Types[i].Type >= name })
	if i < len(m.Types) && m.Types[i].Type == name {
		return m.Types[i], true
	}
	return TypeProfile{}, false
}

// TypeNames returns the GPU type names in sorted order.
func (m *ModelProfile) TypeNames() []string {
	out := make([]string, len(m.Types))
	for i, t := range m.Types {
		out[i] = t.Type
	}
	return out
}

// BatchRange returns the initial batch size M0 (the smallest validated batch)
// and the maximum batch size (the largest); false without validation files.
func (m *ModelProfile) BatchRange() (initBatch, maxBatch int, ok bool) {
	if len(m.Validation) == 0 {
		return 0, 0, false
	}
	return m.Validation[0].Batch, m.Validation[len(m.Validation)-1].Batch, true
}

// ReadModelDir reads a model folder of the published profile layout (for
// example profiles/bert): every placements-<type>.csv with its optional
// scalability-<type>.csv, and every validation-<bsz>.csv. The unsuffixed
// placements.csv and scalability.csv (copies of the aws files) and files of
// other names are skipped. Two validation files for one batch size
// (validation-64.csv and validation-064.csv) are an error. The model's Name
// is the folder's base name. Errors name the file (dir/file) and line; a
// missing folder gives an error
// satisfying errors.Is(err, fs.ErrNotExist).
func ReadModelDir(dir string) (*ModelProfile, error) {
	return ReadModelDirWith(dir, nil)
}

// ReadModelDirWith is ReadModelDir with the checks and the type filter of
// opt (nil = ReadModelDir).
func ReadModelDirWith(dir string, opt *ReadOptions) (*ModelProfile, error) {
	m, err := readModel(os.DirFS(dir), ".", dir, opt)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(dir); err == nil {
		m.Name = filepath.Base(abs)
	}
	return m, nil
}

// ReadModelFS is ReadModelDir on a file system; dir is a slash-separated path
// inside fsys ("." for its root). Errors name files as dir/file.
func ReadModelFS(fsys fs.FS, dir string) (*ModelProfile, error) {
	return readModel(fsys, dir, dir, nil)
}

// ReadModelFSWith is ReadModelFS with the checks and the type filter of opt
// (nil = ReadModelFS).
func ReadModelFSWith(fsys fs.FS, dir string, opt *ReadOptions) (*ModelProfile, error) {
	return readModel(fsys, dir, dir, opt)
}

// readModel reads folder dir of fsys; display is the folder's name in errors.
func readModel(fsys fs.FS, dir, display string, opt *ReadOptions) (*ModelProfile, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: reading profile folder %s: %w", display, err)
	}
	m := &ModelProfile{Name: path.Base(dir)}
	shown := func(name string) string { return filepath.Join(display, name) }
	scal := map[string]string{}
	valFile := map[int]string{} // batch size -> validation file name
	types := map[string]*TypeProfile{}
	var typeOrder []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if profileFile(name, opt) {
				return nil, &ParseError{File: shown(name), Reason: "a folder, want a profile CSV file"}
			}
			continue
		}
		file := path.Join(dir, name)
		switch {
		case strings.HasPrefix(name, "placements-") && strings.HasSuffix(name, ".csv"):
			typ := strings.TrimSuffix(strings.TrimPrefix(name, "placements-"), ".csv")
			if typ == "" || !opt.wants(typ) {
				continue
			}
			rows, err := profReadFile(fsys, file, shown(name), func(r io.Reader, name string) ([]PlacementRow, error) {
				return ReadPlacementsWith(r, name, opt)
			})
			if err != nil {
				return nil, err
			}
			types[typ] = &TypeProfile{Type: typ, Placements: rows}
			typeOrder = append(typeOrder, typ)
		case strings.HasPrefix(name, "scalability-") && strings.HasSuffix(name, ".csv"):
			typ := strings.TrimSuffix(strings.TrimPrefix(name, "scalability-"), ".csv")
			if typ != "" && opt.wants(typ) {
				scal[typ] = name
			}
		case strings.HasPrefix(name, "validation-") && strings.HasSuffix(name, ".csv"):
			s := strings.TrimSuffix(strings.TrimPrefix(name, "validation-"), ".csv")
			bsz, err := strconv.Atoi(s)
			if err != nil || bsz < 1 || bsz > MaxCount {
				return nil, &ParseError{File: shown(name), Reason: fmt.Sprintf("batch size %q in the file name is not a positive integer up to %d", s, MaxCount)}
			}
			if other, dup := valFile[bsz]; dup {
				return nil, &ParseError{File: shown(name), Reason: fmt.Sprintf("batch size %d also given by %s", bsz, printable(shown(other)))}
			}
			valFile[bsz] = name
			rows, err := profReadFile(fsys, file, shown(name), ReadValidation)
			if err != nil {
				return nil, err
			}
			m.Validation = append(m.Validation, ValidationCurve{Batch: bsz, Rows: rows})
		}
	}
	scalTypes := make([]string, 0, len(scal))
	for typ := range scal {
		scalTypes = append(scalTypes, typ)
	}
	sort.Strings(scalTypes)
	for _, typ := range scalTypes {
		name := scal[typ]
		tp, ok := types[typ]
		if !ok {
			return nil, &ParseError{File: shown(name), Reason: "no " + printable("placements-"+typ+".csv") + " beside it"}
		}
		rows, err := profReadFile(fsys, path.Join(dir, name), shown(name), func(r io.Reader, name string) ([]ScalabilityRow, error) {
			return ReadScalabilityWith(r, name, opt)
		})
		if err != nil {
			return nil, err
		}
		tp.Scalability = rows
	}
	sort.Strings(typeOrder)
	for _, typ := range typeOrder {
		m.Types = append(m.Types, *types[typ])
	}
	sort.Slice(m.Validation, func(i, j int) bool { return m.Validation[i].Batch < m.Validation[j].Batch })
	return m, nil
}

// profileFile reports whether readModel reads a file of this name (with
// opt's type filter): a folder of that name is an error, not skipped.
func profileFile(name string, opt *ReadOptions) bool {
	if !strings.HasSuffix(name, ".csv") {
		return false
	}
	for _, prefix := range []string{"placements-", "scalability-"} {
		if typ, ok := strings.CutPrefix(strings.TrimSuffix(name, ".csv"), prefix); ok {
			return typ != "" && opt.wants(typ)
		}
	}
	return strings.HasPrefix(name, "validation-")
}

func profReadFile[T any](fsys fs.FS, file, shown string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	f, err := fsys.Open(file)
	if err != nil {
		// Name the file as the caller knows it (fs.PathError holds the path
		// inside fsys); keep the cause for errors.Is (fs.ErrNotExist,
		// fs.ErrPermission).
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("bootstrap: %s: %w", printable(shown), err)
	}
	defer f.Close()
	return read(f, shown)
}

// ReadProfilesDir reads every model folder under dir (for example
// ../shared/data/profiles) with ReadModelDir, sorted by model name. Errors
// name the file and line.
func ReadProfilesDir(dir string) ([]*ModelProfile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: reading profiles folder: %w", err)
	}
	var out []*ModelProfile
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		m, err := readModel(os.DirFS(dir), e.Name(), filepath.Join(dir, e.Name()), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// ReadSeedFile reads a seed profile from a file path.
func ReadSeedFile(file string) ([]SeedRow, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	defer f.Close()
	return ReadSeed(f, file)
}
