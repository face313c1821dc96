package sim

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/sia-sched/sia/internal/errtext"
)

// ErrInvalidInput is wrapped by every error this package returns for bad caller
// data: malformed workload files, unknown GPU types or applications, bad cluster
// specifications, policies that return impossible allocations.
var ErrInvalidInput = errors.New("sim: invalid input")

// InputError describes one piece of bad input. File and Line locate it in a
// file when it came from one; Job, Field and Type name what was wrong. It wraps
// ErrInvalidInput.
type InputError struct {
	File   string // file name, if any
	Line   int    // 1-based line number, if any
	Job    string // job name, if known
	Field  string // column or field name, if known
	Reason string
	// Err is the underlying error, if any (for example the
	// *bootstrap.ParseError of a malformed profile file).
	Err error
}

// Error formats the error as "sim: file:line: job "x": field "f": message".
func (e *InputError) Error() string {
	s := "sim: "
	if e.File != "" {
		s += e.File
		if e.Line > 0 {
			s += fmt.Sprintf(":%d", e.Line)
		}
		s += ": "
	}
	if e.Job != "" {
		s += fmt.Sprintf("job %s: ", errtext.Clip(strconv.Quote(e.Job), 200))
	}
	if e.Field != "" {
		s += fmt.Sprintf("field %q: ", e.Field)
	}
	return s + errtext.Clip(e.Reason, 1000)
}

// Unwrap returns ErrInvalidInput and the underlying error, if any.
func (e *InputError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidInput, e.Err}
	}
	return []error{ErrInvalidInput}
}

func inputErr(file string, line int, job, field, format string, args ...any) error {
	return &InputError{File: file, Line: line, Job: job, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// PolicyError reports a policy's failure during Run: Schedule returned an
// error, or allocations that break the cluster's constraints (then Err is an
// *InputError naming the job and errors.Is(err, ErrInvalidInput) holds).
type PolicyError struct {
	// Policy is the policy's name and Now the simulated time in seconds.
	Policy string
	Now    float64
	Err    error
}

// Error implements error.
func (e *PolicyError) Error() string {
	return fmt.Sprintf("sim: policy %s at t=%.0fs: %v", e.Policy, e.Now, e.Err)
}

// Unwrap returns the underlying error.
func (e *PolicyError) Unwrap() []error { return []error{e.Err} }
