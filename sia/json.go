package sia

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/internal/numtext"
	"github.com/sia-sched/sia/internal/strictjson"
)

// jobJSON is Job on the wire: Models as one of the library's two
// implementations.
type jobJSON struct {
	jobFields
	Models *modelsJSON `json:"Models,omitempty"`
}

// jobFields is Job without its methods (so that encoding/json does not
// recurse into MarshalJSON).
type jobFields Job

// modelsJSON names the Models implementation of a job. Static is a pointer
// so that empty Static models (no model for any type) encode as
// {"static":{}} and decode as such, not as no Models.
type modelsJSON struct {
	Tracker *bootstrap.Tracker `json:"tracker,omitempty"`
	Static  *bootstrap.Static  `json:"static,omitempty"`
}

// MarshalJSON encodes the job, its Models included when they are a
// *bootstrap.Tracker or bootstrap.Static (nil Models encode as none); other
// Models are an error naming the job: a host with its own Models persists
// them itself and sets them again after decoding.
func (j Job) MarshalJSON() ([]byte, error) {
	w := jobJSON{jobFields: jobFields(j)}
	w.jobFields.Models = nil
	switch m := j.Models.(type) {
	case nil:
	case *bootstrap.Tracker:
		w.Models = &modelsJSON{Tracker: m}
	case bootstrap.Static:
		w.Models = &modelsJSON{Static: &m}
	default:
		return nil, &InputError{Job: j.ID, Field: "Models", Reason: fmt.Sprintf("%T cannot be encoded: only *bootstrap.Tracker and bootstrap.Static are (encode other Models yourself and set them after decoding)", j.Models)}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a job written by MarshalJSON. A nonzero number that
// underflows to 0 (1e-400) is an *InputError naming its line and path.
func (j *Job) UnmarshalJSON(data []byte) error {
	var w jobJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := strictjson.CheckNumbers(data); err != nil {
		return &InputError{Job: w.ID, Field: "JSON", Reason: err.Error()}
	}
	*j = Job(w.jobFields)
	j.Models = nil
	switch {
	case w.Models == nil:
	case w.Models.Tracker != nil && w.Models.Static != nil:
		return &InputError{Job: j.ID, Field: "Models", Reason: "both a tracker and static models"}
	case w.Models.Tracker != nil:
		j.Models = w.Models.Tracker
	case w.Models.Static != nil:
		j.Models = *w.Models.Static
	}
	return nil
}

// float is a float64 that encodes ±Inf and NaN as the strings "+Inf",
// "-Inf" and "NaN" (a partial matrix's bound is infinite).
type float float64

// MarshalJSON implements json.Marshaler.
func (f float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *float) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		if numtext.Underflows(s, v) {
			return fmt.Errorf("%q %w", s, numtext.ErrUnderflow)
		}
		*f = float(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*f = float(v)
	return nil
}

// planJSON is Plan on the wire: Objective and Bound may be infinite, and
// the round's matrix is not encoded (it is rebuilt by replaying the round).
type planJSON struct {
	planFields
	Objective, Bound float
}

type planFields Plan

// MarshalJSON encodes the plan (Objective and Bound may be "+Inf", "-Inf" or
// "NaN").
func (p Plan) MarshalJSON() ([]byte, error) {
	w := planJSON{planFields: planFields(p), Objective: float(p.Objective), Bound: float(p.Bound)}
	w.planFields.matrix, w.planFields.entries = nil, nil
	return json.Marshal(w)
}

// UnmarshalJSON decodes a plan written by MarshalJSON. A nonzero number that
// underflows to 0 (1e-400, also as a string) is an error.
func (p *Plan) UnmarshalJSON(data []byte) error {
	var w planJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if err := strictjson.CheckNumbers(data); err != nil {
		return &InputError{Field: "Plan", Reason: err.Error()}
	}
	*p = Plan(w.planFields)
	p.matrix, p.entries = nil, nil
	p.Objective, p.Bound = float64(w.Objective), float64(w.Bound)
	return nil
}
