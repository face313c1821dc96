package ilp

import (
	"slices"
	"strconv"

	"github.com/sia-sched/sia/internal/numtext"
)

// fastDecode decodes data into a jsonProblem without reflection, for the
// plain JSON that WriteJSON and the recorded rounds use. It reports false
// whenever it is not certain that encoding/json (with DisallowUnknownFields)
// would decode data to the same value without error: strings with escapes,
// control characters or non-ASCII bytes, keys that do not match a field name
// exactly (encoding/json also matches them case-insensitively), duplicate
// keys, null, numbers that are not plain integers in int fields, numbers out
// of range, unexpected value types or nesting, malformed JSON and trailing
// data. The caller then decodes with encoding/json, which produces the
// result or the error message.
//
// The strings of the result are substrings of one copy of data, so they keep
// that copy alive as long as any of them is referenced.
func fastDecode(data []byte) (jsonProblem, bool) {
	d := &fastDecoder{s: string(data)}
	jp := d.problem()
	d.space()
	if d.bad || d.pos != len(d.s) {
		return jsonProblem{}, false
	}
	return jp, true
}

// fastDecoder is the state of fastDecode: the input, the read position and
// a sticky flag set at the first input it does not accept. Once bad is set
// every method returns zero values, and the loops over object members and
// array elements stop.
type fastDecoder struct {
	s    string
	pos  int
	bad  bool
	opts []jsonOption // scratch for the options of one job
}

// fail marks the input as not accepted.
func (d *fastDecoder) fail() { d.bad = true }

// space skips JSON whitespace.
func (d *fastDecoder) space() {
	for d.pos < len(d.s) {
		switch d.s[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (d *fastDecoder) peek() byte {
	d.space()
	if d.pos < len(d.s) {
		return d.s[d.pos]
	}
	return 0
}

// expect consumes byte c after whitespace, or fails.
func (d *fastDecoder) expect(c byte) {
	if d.bad || d.peek() != c {
		d.fail()
		return
	}
	d.pos++
}

// next reports whether the object or array opened by expect('{') or
// expect('[') has a further member, consuming the separating comma or the
// closing byte close; n is the number of members read so far.
func (d *fastDecoder) next(n int, close byte) bool {
	if d.bad {
		return false
	}
	switch c := d.peek(); {
	case c == close:
		d.pos++
		return false
	case n == 0:
		return true
	case c == ',':
		d.pos++
		return true
	}
	d.fail()
	return false
}

// key reads an object key and the colon after it.
func (d *fastDecoder) key() string {
	k := d.str()
	d.expect(':')
	return k
}

// fields reads an object of a struct type: member reads the value of each
// key and reports false for a key the struct does not have. A repeated key
// fails (encoding/json would keep the last value; the slow path decides).
func (d *fastDecoder) fields(member func(key string) bool) {
	var seen [16]string // more keys than any struct has: some repeat
	d.expect('{')
	for n := 0; d.next(n, '}'); n++ {
		k := d.key()
		if n == len(seen) || slices.Contains(seen[:n], k) || !member(k) {
			d.fail()
			return
		}
		seen[n] = k
	}
}

// array reads an array, calling elem for each element.
func (d *fastDecoder) array(elem func()) {
	d.expect('[')
	for n := 0; d.next(n, ']'); n++ {
		elem()
	}
}

// str reads a string of printable ASCII without escapes.
func (d *fastDecoder) str() string {
	if d.bad || d.peek() != '"' {
		d.fail()
		return ""
	}
	start := d.pos + 1
	for i := start; i < len(d.s); i++ {
		switch c := d.s[i]; {
		case c == '"':
			d.pos = i + 1
			return d.s[start:i]
		case c < 0x20 || c >= 0x80 || c == '\\':
			d.fail()
			return ""
		}
	}
	d.fail()
	return ""
}

// digits skips decimal digits and reports whether there was at least one.
func (d *fastDecoder) digits() bool {
	start := d.pos
	for d.pos < len(d.s) && d.s[d.pos] >= '0' && d.s[d.pos] <= '9' {
		d.pos++
	}
	return d.pos > start
}

// number reads a number in JSON syntax and returns its text; integer says
// whether it has neither fraction nor exponent.
func (d *fastDecoder) number() (text string, integer bool) {
	if d.bad {
		return "", false
	}
	d.space()
	start := d.pos
	if d.pos < len(d.s) && d.s[d.pos] == '-' {
		d.pos++
	}
	switch {
	case d.pos < len(d.s) && d.s[d.pos] == '0':
		d.pos++
	case !d.digits():
		d.fail()
		return "", false
	}
	integer = true
	if d.pos < len(d.s) && d.s[d.pos] == '.' {
		d.pos++
		integer = false
		if !d.digits() {
			d.fail()
			return "", false
		}
	}
	if d.pos < len(d.s) && (d.s[d.pos] == 'e' || d.s[d.pos] == 'E') {
		d.pos++
		integer = false
		if d.pos < len(d.s) && (d.s[d.pos] == '+' || d.s[d.pos] == '-') {
			d.pos++
		}
		if !d.digits() {
			d.fail()
			return "", false
		}
	}
	return d.s[start:d.pos], integer
}

// float reads a number as encoding/json does for a float64 field.
func (d *fastDecoder) float() float64 {
	text, _ := d.number()
	if d.bad {
		return 0
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || numtext.Underflows(text, v) {
		d.fail() // decodeJSON reports it
	}
	return v
}

// int reads a plain integer in the range of int; "-0" is left to
// encoding/json too.
func (d *fastDecoder) int() int {
	text, integer := d.number()
	if d.bad || !integer || text == "-0" {
		d.fail()
		return 0
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		d.fail()
	}
	return v
}

// bool reads true or false.
func (d *fastDecoder) bool() bool {
	if d.bad {
		return false
	}
	d.space()
	rest := d.s[d.pos:]
	switch {
	case len(rest) >= 4 && rest[:4] == "true":
		d.pos += 4
		return true
	case len(rest) >= 5 && rest[:5] == "false":
		d.pos += 5
		return false
	}
	d.fail()
	return false
}

// intMap reads an object of integers into a new map.
func (d *fastDecoder) intMap() map[string]int {
	m := map[string]int{}
	d.expect('{')
	for n := 0; d.next(n, '}'); n++ {
		k := d.key()
		if _, dup := m[k]; dup {
			d.fail()
		}
		m[k] = d.int()
	}
	return m
}

// strings reads an array of strings into a new, non-nil slice.
func (d *fastDecoder) strings() []string {
	a := []string{}
	d.array(func() { a = append(a, d.str()) })
	return a
}

// problem reads the top-level object.
func (d *fastDecoder) problem() jsonProblem {
	var jp jsonProblem
	d.fields(func(key string) bool {
		switch key {
		case "name":
			jp.Name = d.str()
		case "optimum":
			v := d.float()
			jp.Optimum = &v
		case "sense":
			jp.Sense = d.str()
		case "unallocated":
			v := d.float()
			jp.Unallocated = &v
		case "capacity":
			jp.Capacity = d.intMap()
		case "reserved":
			jp.Reserved = d.intMap()
		case "grid":
			jp.Grid = d.float()
		case "jobs":
			jp.Jobs = []jsonJob{}
			d.array(func() { jp.Jobs = append(jp.Jobs, d.job()) })
		case "quotas":
			jp.Quotas = []jsonQuota{}
			d.array(func() { jp.Quotas = append(jp.Quotas, d.quota()) })
		default:
			return false
		}
		return true
	})
	return jp
}

// job reads one element of "jobs".
func (d *fastDecoder) job() jsonJob {
	var jj jsonJob
	d.fields(func(key string) bool {
		switch key {
		case "id":
			jj.ID = d.str()
		case "options":
			// collect in the scratch slice, then copy into one exact-size
			// (and, like encoding/json's, non-nil) slice
			d.opts = d.opts[:0]
			d.array(func() { d.opts = append(d.opts, d.option()) })
			jj.Options = make([]jsonOption, len(d.opts))
			copy(jj.Options, d.opts)
		case "pin":
			v := d.int()
			jj.Pin = &v
		default:
			return false
		}
		return true
	})
	return jj
}

// option reads one element of a job's "options".
func (d *fastDecoder) option() jsonOption {
	var o jsonOption
	has := 0 // required keys read (duplicates make fields fail)
	d.fields(func(key string) bool {
		switch key {
		case "type":
			o.Type = d.str()
		case "gpus":
			o.GPUs = d.int()
		case "value":
			o.Value = d.float()
		default:
			return false
		}
		has++
		return true
	})
	if has < 3 {
		d.fail() // checkKeys reports the missing key
	}
	return o
}

// quota reads one element of "quotas".
func (d *fastDecoder) quota() jsonQuota {
	var q jsonQuota
	has := 0 // "limit" read
	d.fields(func(key string) bool {
		switch key {
		case "name":
			q.Name = d.str()
		case "jobs":
			q.Jobs = d.strings()
		case "all_jobs":
			q.AllJobs = d.bool()
		case "type":
			q.Type = d.str()
		case "types":
			q.Types = d.strings()
		case "min_gpus":
			q.MinGPUs = d.int()
		case "limit":
			q.Limit = d.int()
			has++
		default:
			return false
		}
		return true
	})
	if has == 0 {
		d.fail() // checkKeys reports the missing key
	}
	return q
}
