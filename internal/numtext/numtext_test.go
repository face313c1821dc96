package numtext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheck(t *testing.T) {
	for _, s := range []string{"1e-400", "-1E-400", "2.4e-324", "0.0001e-320", "00001e-999"} {
		assert.ErrorIs(t, Check(s), ErrUnderflow, s)
	}
	for _, s := range []string{"0", "-0", "0e-400", "0.000e+5", "5e-324", "1e-320", "1", "1e308", "1e400", "abc", ""} {
		assert.NoError(t, Check(s), s)
	}
}
