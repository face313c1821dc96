// Package numtext tells when the decimal text of a number loses its meaning
// as a float64, for the library's JSON and CSV readers: a nonzero number
// whose magnitude is below the smallest float64 (4.9e-324) is rounded to 0
// by strconv and encoding/json without an error, so "1e-400" would read as
// 0. The readers reject it; subnormal numbers (down to 4.9e-324) read as
// themselves, and so does any spelling of zero ("0e-400").
package numtext

import (
	"errors"
	"flag"
	"strconv"
)

// ErrUnderflow is the reason the readers give for such a number.
var ErrUnderflow = errors.New("underflows to 0 (a nonzero magnitude below the smallest float64, 4.9e-324)")

// Underflows reports whether s, the text of a number that parsed as v,
// is nonzero while v is 0.
func Underflows(s string, v float64) bool {
	if v != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'e' || c == 'E' || c == 'p' || c == 'P':
			return false // the exponent of a zero mantissa
		case c >= '1' && c <= '9':
			return true
		}
	}
	return false
}

// Check returns ErrUnderflow when the number text s underflows (whatever
// it parses as otherwise: syntax is the caller's check), else nil.
func Check(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && Underflows(s, v) {
		return ErrUnderflow
	}
	return nil
}

// Float is a float64 flag.Value that rejects what flag.Float64 reads
// silently as 0: a nonzero number that underflows ("-p 1e-400" would
// otherwise mean the default p). Hexadecimal and other strconv syntax are
// read as flag.Float64 reads them.
type Float struct{ P *float64 }

// String implements flag.Value.
func (f Float) String() string {
	if f.P == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.P, 'g', -1, 64)
}

// Set implements flag.Value.
func (f Float) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("parse error")
	}
	if Underflows(s, v) {
		return ErrUnderflow
	}
	*f.P = v
	return nil
}

// FloatVar defines a float64 flag on fs as fs.Float64Var does, read by
// Float.
func FloatVar(fs *flag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	fs.Var(Float{p}, name, usage)
}

// FloatFlag is fs.Float64 read by Float.
func FloatFlag(fs *flag.FlagSet, name string, value float64, usage string) *float64 {
	p := new(float64)
	FloatVar(fs, p, name, value, usage)
	return p
}
