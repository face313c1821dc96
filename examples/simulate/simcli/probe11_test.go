package simcli

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe11FlagUnderflow: -p 1e-400 was read as 0, which means the
// default p = -0.5 (another objective sense than the tiny positive p
// asked for), and -lambda, -hours, -rate likewise: each is a usage error
// naming the flag, before any work.
func TestProbe11FlagUnderflow(t *testing.T) {
	for _, f := range []string{"-p", "-lambda", "-hours", "-rate"} {
		var out, errb bytes.Buffer
		err := Run(context.Background(), []string{f, "1e-400"}, &out, &errb)
		require.Error(t, err, f)
		assert.Contains(t, err.Error()+errb.String(), f, f)
		assert.Contains(t, err.Error()+errb.String(), "underflows", f)
		assert.Empty(t, out.String(), f)
	}
}
