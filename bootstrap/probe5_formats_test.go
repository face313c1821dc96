package bootstrap_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
)

// TestProbe5ProfileFormats: profile files as spreadsheets and data tools
// write them (every field quoted, a byte-order mark before a quoted header,
// CRLF, Excel's ",,," rows left where rows were deleted, a comma ending
// every line) read as the plain file does; numbers in forms the documented
// format does not have (hexadecimal, digit separators, words, units, decimal
// commas) are an error naming the file, line and column, never a value.
func TestProbe5ProfileFormats(t *testing.T) {
	const good = "placement,local_bsz,step_time,sync_time\n1,32,0.25,0.01\n22,64,0.5,0.2\n"
	want, err := bootstrap.ReadPlacements(strings.NewReader(good), "p.csv")
	require.NoError(t, err)
	require.Len(t, want, 2)
	quoted := "\"placement\",\"local_bsz\",\"step_time\",\"sync_time\"\n\"1\",\"32\",\"0.25\",\"0.01\"\n\"22\",\"64\",\"0.5\",\"0.2\"\n"
	for name, in := range map[string]string{
		"quoted":                quoted,
		"quoted with BOM":       "\ufeff" + quoted,
		"quoted with BOM, CRLF": "\ufeff" + strings.ReplaceAll(quoted, "\n", "\r\n"),
		"excel empty rows":      good + ",,,\n,,,\r\n",
		"trailing commas":       strings.ReplaceAll(good, "\n", ",\n"),
		"tabs around fields":    "placement,local_bsz,step_time,sync_time\n1,32,\t0.25,0.01\t\n22,64,0.5,0.2\n",
		"scientific notation":   "placement,local_bsz,step_time,sync_time\n1,3.2e1,2.5e-1,1e-2\n22,64,5E-1,2e-1\n",
		"no final newline":      strings.TrimSuffix(good, "\n"),
		"lines of white space":  good + "   \n\t\n \r\n",
		"mac CR line ends":      strings.ReplaceAll(good, "\n", "\r"),
		"mac CR, BOM, quoted":   "\ufeff" + strings.ReplaceAll(quoted, "\n", "\r"),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := bootstrap.ReadPlacements(strings.NewReader(in), "p.csv")
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	for _, c := range []struct{ name, in, where string }{
		{"tab separated", strings.ReplaceAll(good, ",", "\t"), "p.csv:1"},
		{"semicolon separated", strings.ReplaceAll(good, ",", ";"), "p.csv:1"},
		{"thousands separator", good + "1,\"1,024\",0.5,0.1\n", "p.csv:4"},
		{"decimal comma", good + "1,32,\"0,5\",0.1\n", "p.csv:4"},
		{"hex float time", good + "1,32,0x1p-2,0.1\n", `p.csv:4: column "step_time"`},
		{"hex float count", good + "1,0x1p5,0.5,0.1\n", `p.csv:4: column "local_bsz"`},
		{"underscore digits", good + "1,0x_20p0,0.5,0.1\n", `p.csv:4: column "local_bsz"`},
		{"infinity word", good + "1,32,infinity,0.1\n", `p.csv:4: column "step_time"`},
		{"time with unit", good + "1,32,0.5s,0.1\n", `p.csv:4: column "step_time"`},
		{"partly empty row", good + "1,,,\n", `p.csv:4: column "local_bsz"`},
		{"second header", good + "placement,local_bsz,step_time,sync_time\n", "p.csv:4"},
		{"short row", good + "1,32,0.5\n", "p.csv:4: wrong number of fields: 3, want 4"},
		{"long row", good + "1,32,0.5,0.1,7\n", "p.csv:4: wrong number of fields: 5, want 4"},
		{"mac CR, bad row", strings.ReplaceAll(good, "\n", "\r") + "1,32,x,0.1\r", `p.csv:4: column "step_time"`},
		{"quoted header, bad quote", "\ufeff" + quoted + "\"1\",\"32,0.5,0.1\n", "p.csv:4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, err := bootstrap.ReadPlacements(strings.NewReader(c.in), "p.csv")
			require.Error(t, err, "accepted %+v", rows)
			var pe *bootstrap.ParseError
			require.True(t, errors.As(err, &pe), "%T %v", err, err)
			assert.Contains(t, err.Error(), c.where)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
