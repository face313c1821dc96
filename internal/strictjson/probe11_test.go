package strictjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/numtext"
)

// TestProbe11Underflow: Decode and CheckNumbers reject a nonzero number
// that underflows to 0, naming its line, column and path; zero and
// subnormals pass, and malformed JSON is left to the decoder.
func TestProbe11Underflow(t *testing.T) {
	var v struct {
		A struct{ B []float64 }
	}
	err := Decode([]byte(`{"A":{"B":[1,`+"\n"+` 1e-400]}}`), &v)
	require.ErrorIs(t, err, numtext.ErrUnderflow)
	assert.Contains(t, err.Error(), "line 2:2, A.B[1]")
	require.NoError(t, Decode([]byte(`{"A":{"B":[0e-400,5e-324]}}`), &v))
	err = CheckNumbers([]byte(`{"x":[{"y":{"z":-3e-999}}]}`))
	require.ErrorIs(t, err, numtext.ErrUnderflow)
	assert.Contains(t, err.Error(), "x[0].y.z")
	assert.NoError(t, CheckNumbers([]byte(`{"x":[0, 1e-320, "1e-400"]}`)))
	assert.NoError(t, CheckNumbers([]byte(`{"x":[}1e-400]}`)), "malformed before the number")
}
