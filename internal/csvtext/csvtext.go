// Package csvtext holds what the library's CSV readers (bootstrap's profile
// files, the simulator's workload files) share about the files users write:
// a byte-order mark before the header, old Macintosh line ends, rows left
// blank by a spreadsheet, and decimal numbers only.
package csvtext

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/sia-sched/sia/internal/numtext"
)

// Reader returns r as the CSV readers want it: without a leading UTF-8
// byte-order mark (Excel's "CSV UTF-8" and R's "UTF-8-BOM" start with one),
// which must be removed before the CSV parser sees it (a BOM followed by a
// quoted header field is a bare quote in a field to encoding/csv), and with
// each carriage return not followed by a line feed read as a line feed
// (the line ends of Excel's "CSV (Macintosh)", which encoding/csv reads as
// one line). CRLF line ends are left as they are.
func Reader(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	return &crReader{br: br}
}

// crReader reads a lone carriage return as a line feed.
type crReader struct{ br *bufio.Reader }

// Read implements io.Reader.
func (c *crReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if n > 0 && c.br.Buffered() == 0 {
			break // what is read so far, without waiting for more
		}
		b, err := c.br.ReadByte()
		if err != nil {
			if n > 0 {
				break
			}
			return 0, err
		}
		if b == '\r' {
			if next, err := c.br.Peek(1); err != nil || next[0] != '\n' {
				b = '\n'
			}
		}
		p[n] = b
		n++
	}
	return n, nil
}

// Blank reports whether every field of a record is empty or white space: a
// row a spreadsheet keeps as ",,,," where rows were deleted, read as a
// blank line.
func Blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// ParseFloat is strconv.ParseFloat on decimal text only: it also rejects
// the hexadecimal form ("0x1p4") and digit separators ("0x_80p0"), which
// strconv accepts and no profile or workload file means (a mistyped or
// mis-exported cell, not a number), and a nonzero number that underflows
// to 0 ("1e-400"; the error wraps numtext.ErrUnderflow).
func ParseFloat(s string) (float64, error) {
	if strings.ContainsAny(s, "xX_") {
		return 0, &strconv.NumError{Func: "ParseFloat", Num: s, Err: strconv.ErrSyntax}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && numtext.Underflows(s, v) {
		return 0, &strconv.NumError{Func: "ParseFloat", Num: s, Err: numtext.ErrUnderflow}
	}
	return v, err
}
