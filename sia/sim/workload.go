package sim

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sia-sched/sia/internal/csvtext"
	"github.com/sia-sched/sia/internal/numtext"
)

// Job categories of the optional workload column "category" (as in the published artifact).
const (
	CategoryAdaptive     = "adaptive"   // Sia picks type, GPU count and batch size
	CategoryStrongScaled = "scale-gpus" // batch size fixed; type and count chosen
	CategoryRigid        = "rigid"      // batch size and GPU count fixed; type chosen
)

// JobSpec is one row of a workload file: a job submitted at Submit seconds from
// the start of the trace. Replicas and Batch are the user's tuned rigid request
// (Gavel's TunedJobs configuration).
type JobSpec struct {
	Name     string
	Submit   float64
	App      string
	Replicas int
	Batch    int
	Category string // "", adaptive, scale-gpus or rigid
	Line     int    // line in the source file (1-based), 0 if generated
}

// Workload is a named list of jobs, sorted by submission time (stable in file
// order).
type Workload struct {
	Name string
	File string
	Jobs []JobSpec
}

// MaxReplicas bounds the num_replicas column; larger requests are rejected as
// malformed rather than simulated.
const MaxReplicas = 1 << 16

// MaxBatch bounds the batch_size column.
const MaxBatch = math.MaxInt32

// MaxSubmit bounds submission times: ten years of seconds. A later time is
// out of range (it cannot be simulated in a bounded number of rounds).
const MaxSubmit = 10 * 365 * 86400

// ReadWorkload parses a workload CSV with the header
// name,time,application,num_replicas,batch_size[,category] (columns in any
// order). A leading byte-order mark, CRLF or CR line ends, quoted fields and
// blank rows (also a spreadsheet's ",,,,") are accepted; numbers are
// decimal (no hexadecimal form or digit separators). file names the source
// in errors. Every error is an *InputError naming file:line, the job and the
// column.
func ReadWorkload(r io.Reader, file string) (*Workload, error) {
	cr := csv.NewReader(csvtext.Reader(r))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err == io.EOF {
		return nil, inputErr(file, 1, "", "", "empty file, want a header name,time,application,num_replicas,batch_size")
	}
	if err != nil {
		return nil, csvErr(file, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := col[h]; dup && h != "" {
			return nil, inputErr(file, 1, "", h, "duplicate column")
		}
		col[h] = i
	}
	for _, need := range []string{"name", "time", "application", "num_replicas", "batch_size"} {
		if _, ok := col[need]; !ok {
			return nil, inputErr(file, 1, "", need, "missing column (header %q)", strings.Join(header, ","))
		}
	}
	catCol, hasCat := col["category"]
	wl := &Workload{Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), File: file}
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvErr(file, err)
		}
		line, _ := cr.FieldPos(0)
		if csvtext.Blank(rec) {
			continue
		}
		if len(rec) != len(header) {
			return nil, inputErr(file, line, "", "", "%d fields, want %d as in the header", len(rec), len(header))
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		j := JobSpec{Name: get("name"), App: get("application"), Line: line}
		if j.Name == "" {
			return nil, inputErr(file, line, "", "name", "empty job name")
		}
		if prev, dup := seen[j.Name]; dup {
			return nil, inputErr(file, line, j.Name, "name", "duplicate job name (first on line %d)", prev)
		}
		seen[j.Name] = line
		if j.App == "" {
			return nil, inputErr(file, line, j.Name, "application", "empty application")
		}
		t, err := csvtext.ParseFloat(get("time"))
		if errors.Is(err, numtext.ErrUnderflow) {
			return nil, inputErr(file, line, j.Name, "time", "%q %v", get("time"), numtext.ErrUnderflow)
		}
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, inputErr(file, line, j.Name, "time", "%q is not a finite number", get("time"))
		}
		if t < 0 || t > MaxSubmit {
			return nil, inputErr(file, line, j.Name, "time", "%s is out of range, want 0..%d seconds", get("time"), MaxSubmit)
		}
		j.Submit = t
		if j.Replicas, err = positiveInt(get("num_replicas"), MaxReplicas); err != nil {
			return nil, inputErr(file, line, j.Name, "num_replicas", "%v", err)
		}
		if j.Batch, err = positiveInt(get("batch_size"), MaxBatch); err != nil {
			return nil, inputErr(file, line, j.Name, "batch_size", "%v", err)
		}
		if hasCat {
			j.Category = strings.TrimSpace(rec[catCol])
			switch j.Category {
			case "", CategoryAdaptive, CategoryStrongScaled, CategoryRigid:
			default:
				return nil, inputErr(file, line, j.Name, "category", "%q, want adaptive, scale-gpus or rigid", j.Category)
			}
		}
		wl.Jobs = append(wl.Jobs, j)
	}
	sort.SliceStable(wl.Jobs, func(a, b int) bool { return wl.Jobs[a].Submit < wl.Jobs[b].Submit })
	return wl, nil
}

// Validate checks a workload built in code as ReadWorkload checks a file:
// non-empty unique job names and applications, submission times in
// 0..MaxSubmit, replicas in 1..MaxReplicas, batch sizes in 1..MaxBatch and a
// known category. Errors are *InputError naming the job and field.
func (wl *Workload) Validate() error {
	if wl == nil {
		return inputErr("", 0, "", "Workload", "nil workload")
	}
	seen := make(map[string]bool, len(wl.Jobs))
	for i, j := range wl.Jobs {
		bad := func(field, format string, args ...any) error {
			return inputErr(wl.File, j.Line, j.Name, fmt.Sprintf("Jobs[%d].%s", i, field), format, args...)
		}
		switch {
		case j.Name == "":
			return bad("Name", "empty job name")
		case seen[j.Name]:
			return bad("Name", "duplicate job name")
		case j.App == "":
			return bad("App", "empty application")
		case !(j.Submit >= 0 && j.Submit <= MaxSubmit):
			return bad("Submit", "%v, want 0..%d seconds", j.Submit, MaxSubmit)
		case j.Replicas < 1 || j.Replicas > MaxReplicas:
			return bad("Replicas", "%d, want 1..%d", j.Replicas, MaxReplicas)
		case j.Batch < 1 || j.Batch > MaxBatch:
			return bad("Batch", "%d, want 1..%d", j.Batch, MaxBatch)
		}
		switch j.Category {
		case "", CategoryAdaptive, CategoryStrongScaled, CategoryRigid:
		default:
			return bad("Category", "%q, want adaptive, scale-gpus or rigid", j.Category)
		}
		seen[j.Name] = true
	}
	return nil
}

func positiveInt(s string, max int) (int, error) {
	v, err := csvtext.ParseFloat(s)
	if err != nil || math.IsNaN(v) || v != math.Trunc(v) {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	if v <= 0 || v > float64(max) {
		return 0, fmt.Errorf("%s is out of range, want 1..%d", s, max)
	}
	return int(v), nil
}

func csvErr(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return inputErr(file, pe.Line, "", "", "malformed CSV: %v", pe.Err)
	}
	return inputErr(file, 0, "", "", "reading: %v", err)
}

// LoadWorkload reads one workload CSV file.
func LoadWorkload(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, inputErr(path, 0, "", "", "%v", errors.Unwrap(err))
	}
	defer f.Close()
	return ReadWorkload(f, path)
}

// LoadWorkloads reads a workload file, or every workload-*.csv in a folder
// (sorted by the number in the name, then by name).
func LoadWorkloads(path string) ([]*Workload, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, inputErr(path, 0, "", "", "%v", errors.Unwrap(err))
	}
	if !st.IsDir() {
		wl, err := LoadWorkload(path)
		if err != nil {
			return nil, err
		}
		return []*Workload{wl}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "workload-*.csv"))
	if err != nil {
		return nil, inputErr(path, 0, "", "", "%v", err)
	}
	if len(files) == 0 {
		return nil, inputErr(path, 0, "", "", "no workload-*.csv files in folder")
	}
	num := func(f string) int {
		s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "workload-"), ".csv")
		n, err := strconv.Atoi(s)
		if err != nil {
			return math.MaxInt
		}
		return n
	}
	sort.Slice(files, func(a, b int) bool {
		na, nb := num(files[a]), num(files[b])
		if na != nb {
			return na < nb
		}
		return files[a] < files[b]
	})
	var out []*Workload
	for _, f := range files {
		wl, err := LoadWorkload(f)
		if err != nil {
			return nil, err
		}
		out = append(out, wl)
	}
	return out, nil
}

// AppOf returns the application prefix of a job name ("cifar10-12" → "cifar10").
func AppOf(name string) string {
	if i := strings.IndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}
