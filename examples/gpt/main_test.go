package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckFlags: the flags are bounded before any work (-phase 0 or NaN
// made the allocation table loop for ever, an unknown -variant was found
// only after loading the profiles, and arguments were ignored).
func TestCheckFlags(t *testing.T) {
	assert.NoError(t, checkFlags(1, 0, "artifact", "heterogeneous", nil))
	assert.NoError(t, checkFlags(0.25, 3600, "paper", "t4:2x4", nil))
	for name, err := range map[string]error{
		"phase 0":      checkFlags(0, 0, "artifact", "heterogeneous", nil),
		"phase NaN":    checkFlags(math.NaN(), 0, "artifact", "heterogeneous", nil),
		"phase -1":     checkFlags(-1, 0, "artifact", "heterogeneous", nil),
		"phase +Inf":   checkFlags(math.Inf(1), 0, "artifact", "heterogeneous", nil),
		"submit -1":    checkFlags(1, -1, "artifact", "heterogeneous", nil),
		"submit 1e308": checkFlags(1, 1e308, "artifact", "heterogeneous", nil),
		"submit NaN":   checkFlags(1, math.NaN(), "artifact", "heterogeneous", nil),
		"variant":      checkFlags(1, 0, "nope", "heterogeneous", nil),
		"cluster":      checkFlags(1, 0, "artifact", "t4:0x4", nil),
		"extra":        checkFlags(1, 0, "artifact", "heterogeneous", []string{"x"}),
	} {
		assert.Error(t, err, name)
	}
}
