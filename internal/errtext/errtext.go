// Package errtext holds the small helpers the library's error messages
// share: naming a position in an input file and cutting a quoted field
// short.
package errtext

import (
	"fmt"
	"unicode/utf8"
)

// LineCol names the 1-based line:column of byte offset off in data, as
// "line L:C". An offset outside data is clamped to its ends.
func LineCol(data []byte, off int64) string {
	off = max(0, min(off, int64(len(data))))
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d:%d", line, col)
}

// Clip cuts s after n bytes (at a rune boundary) with "…", so that a
// message quoting a megabyte-long field stays readable. A string of at
// most n bytes is returned whole.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
