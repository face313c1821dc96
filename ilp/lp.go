package ilp

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// WriteLP writes p in CPLEX LP format, so that an independent solver can
// check a round (`cbc FILE.lp -solve`, `glpsol --lp FILE.lp`). Variable
// x<i>_<k> is 1 when job i takes option k and u<i> is 1 when job i stays
// unallocated; each job has the row x<i>_0 + ... + u<i> = 1, so the LP's
// objective equals Problem.Objective exactly (no constant term). Capacity rows
// are named cap<r> in sorted type order (capacity minus reservation) and
// quota rows quota<q>; comments map indices to job IDs and type names. Pins
// fix x<i>_<pin> to 1. p must be valid.
func WriteLP(w io.Writer, p *Problem) error {
	if err := p.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	line := &lineWriter{w: bw}
	fmt.Fprintf(bw, "\\ sia allocation problem: %d jobs, sense %s\n", len(p.Jobs), p.Sense)
	for i, j := range p.Jobs {
		fmt.Fprintf(bw, "\\ job %d = %q\n", i, sanitizeComment(j.ID))
	}
	types := slices.Sorted(maps.Keys(p.Capacity))
	for r, t := range types {
		fmt.Fprintf(bw, "\\ type %d = %q\n", r, sanitizeComment(t))
	}
	if p.Sense == Maximize {
		bw.WriteString("Maximize\n")
	} else {
		bw.WriteString("Minimize\n")
	}
	line.start(" obj:")
	for i, j := range p.Jobs {
		for k, o := range j.Options {
			line.term(num(o.Value), fmt.Sprintf("x%d_%d", i, k))
		}
		line.term(num(j.Unallocated), fmt.Sprintf("u%d", i))
	}
	if len(p.Jobs) == 0 {
		line.term("0", "zero")
	}
	line.end("")
	bw.WriteString("Subject To\n")
	for i, j := range p.Jobs {
		line.start(fmt.Sprintf(" one%d:", i))
		for k := range j.Options {
			line.term("1", fmt.Sprintf("x%d_%d", i, k))
		}
		line.term("1", fmt.Sprintf("u%d", i))
		line.end(" = 1")
	}
	for r, t := range types {
		line.start(fmt.Sprintf(" cap%d:", r))
		n := 0
		for i, j := range p.Jobs {
			for k, o := range j.Options {
				if o.Type == t {
					line.term(strconv.Itoa(o.GPUs), fmt.Sprintf("x%d_%d", i, k))
					n++
				}
			}
		}
		if n == 0 {
			line.reset()
			continue
		}
		line.end(" <= " + strconv.Itoa(p.Capacity[t]-p.Reserved[t]))
	}
	for q := range p.Quotas {
		qu := &p.Quotas[q]
		fmt.Fprintf(bw, "\\ quota %d = %q type %q min_gpus %d\n", q, sanitizeComment(qu.Name), sanitizeComment(quotaTypes(qu)), qu.MinGPUs)
		line.start(fmt.Sprintf(" quota%d:", q))
		n := 0
		for _, i := range qu.members(len(p.Jobs)) {
			for k, o := range p.Jobs[i].Options {
				if qu.Counts(o) {
					line.term(strconv.Itoa(o.GPUs), fmt.Sprintf("x%d_%d", i, k))
					n++
				}
			}
		}
		if n == 0 {
			line.reset()
			continue
		}
		line.end(" <= " + strconv.Itoa(qu.Limit))
	}
	bw.WriteString("Bounds\n")
	if len(p.Jobs) == 0 {
		bw.WriteString(" zero = 0\n")
	}
	for i, j := range p.Jobs {
		if j.Pin >= 0 {
			fmt.Fprintf(bw, " x%d_%d = 1\n", i, j.Pin)
		}
	}
	bw.WriteString("Binaries\n")
	for i, j := range p.Jobs {
		line.start("")
		for k := range j.Options {
			line.name(fmt.Sprintf("x%d_%d", i, k))
		}
		line.name(fmt.Sprintf("u%d", i))
		line.end("")
	}
	bw.WriteString("End\n")
	return bw.Flush()
}

// sanitizeComment keeps a name on one comment line.
func sanitizeComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// lineWriter wraps long LP expressions over several lines (LP readers limit
// line length).
type lineWriter struct {
	w     *bufio.Writer
	buf   strings.Builder
	width int
	first bool
}

func (l *lineWriter) start(label string) {
	l.buf.Reset()
	l.buf.WriteString(label)
	l.width = len(label)
	l.first = true
}

func (l *lineWriter) reset() { l.buf.Reset() }

func (l *lineWriter) wrap() {
	if l.width > 200 {
		l.buf.WriteString("\n  ")
		l.width = 2
	}
}

func (l *lineWriter) term(coef, name string) {
	l.wrap()
	var s string
	switch {
	case strings.HasPrefix(coef, "-"):
		s = " - " + coef[1:] + " " + name
	case l.first:
		s = " " + coef + " " + name
	default:
		s = " + " + coef + " " + name
	}
	l.first = false
	l.buf.WriteString(s)
	l.width += len(s)
}

func (l *lineWriter) name(n string) {
	l.wrap()
	l.buf.WriteString(" " + n)
	l.width += 1 + len(n)
}

func (l *lineWriter) end(suffix string) {
	l.buf.WriteString(suffix)
	l.buf.WriteString("\n")
	l.w.WriteString(l.buf.String())
	l.buf.Reset()
}

// quotaTypes names the types a quota row covers for the LP file's comment:
// Type, or Types joined with commas ("" for every type).
func quotaTypes(q *Quota) string {
	if q.Type != "" {
		return q.Type
	}
	return strings.Join(q.Types, ",")
}
