package ilp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/sia-sched/sia/internal/errtext"
	"github.com/sia-sched/sia/internal/numtext"
)

// Meta holds the documented keys of the JSON format that are not part of the
// problem: recorded rounds carry a name and their proven optimum.
type Meta struct {
	Name    string   // "name", empty when absent
	Optimum *float64 // "optimum", nil when absent
}

// jsonProblem is the JSON format of examples/solve:
//
//	{"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},
//	 "jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0}]}
//
// plus optional "name", "optimum", "reserved" (map type → GPUs), "grid"
// (number) and "quotas" ([{"name","jobs":[ids],"all_jobs","type","types",
// "min_gpus","limit"}]; see Quota).
type jsonProblem struct {
	Name        string         `json:"name,omitempty"`
	Optimum     *float64       `json:"optimum,omitempty"`
	Sense       string         `json:"sense"`
	Unallocated *float64       `json:"unallocated"`
	Capacity    map[string]int `json:"capacity"`
	Reserved    map[string]int `json:"reserved,omitempty"`
	Grid        float64        `json:"grid,omitempty"`
	Jobs        []jsonJob      `json:"jobs"`
	Quotas      []jsonQuota    `json:"quotas,omitempty"`
}

type jsonJob struct {
	ID      string       `json:"id"`
	Options []jsonOption `json:"options"`
	Pin     *int         `json:"pin,omitempty"`
}

type jsonOption struct {
	Type  string  `json:"type"`
	GPUs  int     `json:"gpus"`
	Value float64 `json:"value"`
}

type jsonQuota struct {
	Name    string   `json:"name"`
	Jobs    []string `json:"jobs"`
	AllJobs bool     `json:"all_jobs,omitempty"`
	Type    string   `json:"type,omitempty"`
	Types   []string `json:"types,omitempty"`
	MinGPUs int      `json:"min_gpus,omitempty"`
	Limit   int      `json:"limit"`
}

// ReadJSON reads one problem in the JSON format of examples/solve (see the
// package documentation) and validates it. Unknown keys, keys given twice
// in one object and keys spelled in another case are rejected (encoding/json
// alone would take the last value, and match keys case-insensitively), except
// the documented "name" and "optimum" of recorded rounds, returned in Meta.
// An option needs all of "type", "gpus" and "value", and a quota its
// "limit", none of them null, and no capacity or reservation may be null: a
// missing number is an error, not 0. A nonzero number that underflows to 0
// ("1e-400") is an error too; subnormal numbers read as themselves.
// Errors wrap ErrInvalidInput (or ErrInfeasible for pins that cannot hold)
// and name the line, job or field.
func ReadJSON(r io.Reader) (*Problem, Meta, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("%w: reading: %v", ErrInvalidInput, err)
	}
	return ParseJSON(data)
}

// ParseJSON is ReadJSON on a byte slice.
func ParseJSON(data []byte) (*Problem, Meta, error) {
	jp, ok := fastDecode(data)
	if !ok {
		var err error
		if jp, err = decodeJSON(data); err != nil {
			return nil, Meta{}, err
		}
	}
	meta := Meta{Name: jp.Name, Optimum: jp.Optimum}
	if jp.Optimum != nil && (math.IsNaN(*jp.Optimum) || math.IsInf(*jp.Optimum, 0)) {
		return nil, meta, invalid("optimum", "must be finite")
	}
	p := &Problem{Capacity: jp.Capacity, Reserved: jp.Reserved, Grid: jp.Grid}
	switch jp.Sense {
	case "min":
		p.Sense = Minimize
	case "max":
		p.Sense = Maximize
	case "":
		return nil, meta, invalid("sense", "missing (want \"min\" or \"max\")")
	default:
		return nil, meta, invalid("sense", "want \"min\" or \"max\", got %q", jp.Sense)
	}
	if jp.Unallocated == nil {
		return nil, meta, invalid("unallocated", "missing")
	}
	if jp.Capacity == nil {
		return nil, meta, invalid("capacity", "missing")
	}
	ids := make(map[string]int, len(jp.Jobs))
	p.Jobs = make([]Job, len(jp.Jobs))
	for i, jj := range jp.Jobs {
		job := Job{ID: jj.ID, Unallocated: *jp.Unallocated, Pin: -1}
		if len(jj.Options) > 0 {
			job.Options = make([]Option, len(jj.Options))
			for k, o := range jj.Options {
				job.Options[k] = Option(o)
			}
		}
		if jj.Pin != nil {
			if *jj.Pin < 0 {
				return nil, meta, invalid(jobField(i, jj.ID)+".pin", "must be a non-negative option index, got %d", *jj.Pin)
			}
			job.Pin = *jj.Pin
		}
		if _, dup := ids[jj.ID]; !dup {
			ids[jj.ID] = i
		}
		p.Jobs[i] = job
	}
	for qi, q := range jp.Quotas {
		qq := Quota{Name: q.Name, Type: q.Type, Types: q.Types, Limit: q.Limit, MinGPUs: q.MinGPUs, AllJobs: q.AllJobs}
		for _, id := range q.Jobs {
			ji, ok := ids[id]
			if !ok {
				return nil, meta, invalid(fmt.Sprintf("quotas[%d] %q.jobs", qi, q.Name), "unknown job %q", id)
			}
			qq.Jobs = append(qq.Jobs, ji)
		}
		p.Quotas = append(p.Quotas, qq)
	}
	if err := p.Validate(); err != nil {
		return nil, meta, err
	}
	return p, meta, nil
}

// decodeJSON decodes data with encoding/json, rejecting unknown keys and
// trailing data. It accepts every input fastDecode accepts, with the same
// result, and produces the error messages for the others.
func decodeJSON(data []byte) (jsonProblem, error) {
	if err := checkKeys(data); err != nil {
		return jsonProblem{}, err
	}
	var jp jsonProblem
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&jp); err != nil {
		return jsonProblem{}, jsonError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return jsonProblem{}, invalid(errtext.LineCol(data, dec.InputOffset()), "unexpected data after the JSON object")
	}
	return jp, nil
}

// keySchema describes an object of the format for checkKeys: the exact
// keys of a struct object (nil for a map, whose keys are data) and the
// schemas of the values under them.
type keySchema struct {
	keys  []string              // nil: a map (type → GPUs)
	child map[string]*keySchema // value schema per key (arrays: of their elements)
	// required are the keys that must be present and not null: numbers
	// whose zero value encoding/json would otherwise take silently (an
	// option worth 0, a quota of limit 0).
	required []string
	// values, for a map, requires every value to be present and not null
	// (encoding/json decodes {"t4":null} as a capacity of 0).
	values bool
}

var (
	mapSchema    = &keySchema{values: true}
	optionSchema = &keySchema{keys: []string{"type", "gpus", "value"}, required: []string{"type", "gpus", "value"}}
	jobSchema    = &keySchema{keys: []string{"id", "options", "pin"}, child: map[string]*keySchema{"options": optionSchema}}
	quotaSchema  = &keySchema{keys: []string{"name", "jobs", "all_jobs", "type", "types", "min_gpus", "limit"}, required: []string{"limit"}}
	topSchema    = &keySchema{
		keys:  []string{"name", "optimum", "sense", "unallocated", "capacity", "reserved", "grid", "jobs", "quotas"},
		child: map[string]*keySchema{"capacity": mapSchema, "reserved": mapSchema, "jobs": jobSchema, "quotas": quotaSchema},
	}
)

// checkKeys rejects what encoding/json would silently accept: a key given
// twice in one object (it keeps the last value) and a key of a struct
// object whose case differs from the documented name (it matches keys
// case-insensitively), and a required key (keySchema.required) that is
// missing or null (it would decode as 0). The error names the line and the
// key. Malformed JSON is left to the decoder, which reports it.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(sc *keySchema, depth int) (bool, error)
	// walk reads one value; sc is its schema when it is an object (or an
	// array of such objects), nil when its keys are not checked. The
	// format nests four levels deep: deeper input is left to the decoder.
	walk = func(sc *keySchema, depth int) (bool, error) {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil || depth > 8 {
			return false, nil
		}
		if n, ok := tok.(json.Number); ok {
			if err := numtext.Check(string(n)); err != nil {
				for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
					off++
				}
				return true, invalid(errtext.LineCol(data, off), "number %s %v", n, err)
			}
		}
		switch tok {
		case json.Delim('['):
			for dec.More() {
				if ok, err := walk(sc, depth+1); !ok || err != nil {
					return ok, err
				}
			}
			_, err := dec.Token()
			return err == nil, nil
		case json.Delim('{'):
			open := dec.InputOffset()
			seen := map[string]bool{}
			for dec.More() {
				off := dec.InputOffset()
				// the key itself, past the comma and spaces before it
				for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
					off++
				}
				kt, err := dec.Token()
				if err != nil {
					return false, nil
				}
				k, _ := kt.(string)
				if seen[k] {
					return true, invalid(errtext.LineCol(data, off), "duplicate key %q", k)
				}
				seen[k] = true
				var child *keySchema
				if sc != nil && sc.keys != nil {
					if !slices.Contains(sc.keys, k) {
						for _, want := range sc.keys {
							if strings.EqualFold(want, k) {
								return true, invalid(errtext.LineCol(data, off), "key %q must be spelled %q (keys are case-sensitive)", k, want)
							}
						}
					}
					child = sc.child[k]
				}
				if sc != nil && (sc.values || slices.Contains(sc.required, k)) && nullNext(data, dec.InputOffset()) {
					return true, invalid(errtext.LineCol(data, off), "key %q is null (want a value)", k)
				}
				if ok, err := walk(child, depth+1); !ok || err != nil {
					return ok, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return false, nil
			}
			if sc != nil {
				for _, k := range sc.required {
					if !seen[k] {
						return true, invalid(errtext.LineCol(data, open), "object without the required key %q", k)
					}
				}
			}
			return true, nil
		}
		return true, nil
	}
	_, err := walk(topSchema, 0)
	return err
}

// nullNext reports whether the next value after off in data (past
// whitespace and the key's colon) is the literal null.
func nullNext(data []byte, off int64) bool {
	rest := bytes.TrimLeft(data[min(off, int64(len(data))):], " \t\r\n:")
	return bytes.HasPrefix(rest, []byte("null"))
}

// jsonError turns a decoding error into an InputError naming the line.
func jsonError(data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return invalid(errtext.LineCol(data, se.Offset), "malformed JSON: %v", se)
	case errors.As(err, &te):
		f := te.Field
		if f == "" {
			f = "top level"
		}
		return invalid(errtext.LineCol(data, te.Offset)+" "+f, "cannot use JSON %s as %v", te.Value, te.Type)
	case errors.Is(err, io.EOF):
		return invalid("input", "empty (want a JSON object)")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("input", "truncated JSON")
	}
	return invalid(errtext.LineCol(data, dec.InputOffset()), "%v", err)
}

// WriteJSON writes p in the JSON format ReadJSON reads, with the given Meta.
// Every job must share one Unallocated value (the format has a single one);
// otherwise WriteJSON returns an error wrapping ErrInvalidInput.
func WriteJSON(w io.Writer, p *Problem, meta Meta) error {
	if err := p.Validate(); err != nil {
		return err
	}
	jp := jsonProblem{Name: meta.Name, Optimum: meta.Optimum, Capacity: p.Capacity, Grid: p.Grid, Sense: p.Sense.String()}
	if len(p.Reserved) > 0 {
		jp.Reserved = p.Reserved
	}
	u := 0.0
	if len(p.Jobs) > 0 {
		u = p.Jobs[0].Unallocated
	}
	jp.Unallocated = &u
	jp.Jobs = make([]jsonJob, len(p.Jobs))
	for i, j := range p.Jobs {
		if j.Unallocated != u {
			return invalid(jobField(i, j.ID)+".unallocated", "%v differs from the first job's %v; the JSON format has one value", j.Unallocated, u)
		}
		jj := jsonJob{ID: j.ID, Options: make([]jsonOption, len(j.Options))}
		for k, o := range j.Options {
			jj.Options[k] = jsonOption(o)
		}
		if j.Pin >= 0 {
			pin := j.Pin
			jj.Pin = &pin
		}
		jp.Jobs[i] = jj
	}
	for _, q := range p.Quotas {
		jq := jsonQuota{Name: q.Name, Type: q.Type, Types: q.Types, Limit: q.Limit, MinGPUs: q.MinGPUs, AllJobs: q.AllJobs, Jobs: []string{}}
		idx := append([]int(nil), q.Jobs...)
		sort.Ints(idx)
		for _, ji := range idx {
			jq.Jobs = append(jq.Jobs, p.Jobs[ji].ID)
		}
		jp.Quotas = append(jp.Quotas, jq)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(&jp); err != nil {
		return err
	}
	return bw.Flush()
}
