package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe5WorkloadFormats: workload files as spreadsheets and data tools
// write them (R's write.csv and pandas' QUOTE_ALL quote every field, Excel's
// "CSV UTF-8" starts with a byte-order mark, ends lines with CRLF and keeps
// rows it once held as ",,,,"; some tools end every line with a comma) read
// as the plain file does; formats that are not CSV with these columns are an
// error naming the file and line, never rows read from the wrong columns.
func TestProbe5WorkloadFormats(t *testing.T) {
	const good = "name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\nj2,30.5,bert,4,64\n"
	want, err := ReadWorkload(strings.NewReader(good), "w.csv")
	require.NoError(t, err)
	quoted := "\"name\",\"time\",\"application\",\"num_replicas\",\"batch_size\"\n\"j1\",\"0\",\"cifar10\",\"1\",\"128\"\n\"j2\",\"30.5\",\"bert\",\"4\",\"64\"\n"
	for name, in := range map[string]string{
		"quoted":                 quoted,
		"quoted with BOM":        "\ufeff" + quoted,
		"quoted with BOM, CRLF":  "\ufeff" + strings.ReplaceAll(quoted, "\n", "\r\n"),
		"excel empty rows":       good + ",,,,\n,,,,\r\n",
		"excel empty rows, CRLF": strings.ReplaceAll(good, "\n", "\r\n") + ",,,,\r\n , , ,,\r\n",
		"trailing commas":        strings.ReplaceAll(good, "\n", ",\n"),
		"no final newline":       strings.TrimSuffix(good, "\n"),
		"quoted newline in name": "name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\nj2,30.5,bert,4,64\n",
		"spaces around quotes":   "name,time,application,num_replicas,batch_size\nj1,0,cifar10,1,128\nj2, 30.5 ,bert,4, 64\n",
		"mac CR line ends":       strings.ReplaceAll(good, "\n", "\r"),
		"mac CR, BOM, quoted":    "\ufeff" + strings.ReplaceAll(quoted, "\n", "\r"),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadWorkload(strings.NewReader(in), "w.csv")
			require.NoError(t, err)
			require.Len(t, got.Jobs, len(want.Jobs))
			for i := range got.Jobs {
				got.Jobs[i].Line = want.Jobs[i].Line
			}
			assert.Equal(t, want.Jobs, got.Jobs)
		})
	}
	for _, c := range []struct{ name, in, where string }{
		{"tab separated", strings.ReplaceAll(good, ",", "\t"), "w.csv:1"},
		{"semicolon separated", strings.ReplaceAll(good, ",", ";"), "w.csv:1"},
		{"thousands separator", good + "j3,\"1,200\",bert,4,64\n", "w.csv:4"},
		{"thousands separator in batch", good + "j3,0,bert,4,\"1,024\"\n", "w.csv:4"},
		{"decimal comma", good + "j3,\"30,5\",bert,4,64\n", "w.csv:4"},
		{"hex float time", good + "j3,0x1p4,bert,4,64\n", "w.csv:4"},
		{"hex float batch", good + "j3,0,bert,4,0x1p7\n", "w.csv:4"},
		{"underscore digits", good + "j3,0,bert,4,0x_80p0\n", "w.csv:4"},
		{"infinity word", good + "j3,infinity,bert,4,64\n", "w.csv:4"},
		{"time with unit", good + "j3,30s,bert,4,64\n", "w.csv:4"},
		{"date", good + "j3,2026-12-01 10:00,bert,4,64\n", "w.csv:4"},
		{"partly empty row", good + "j3,,,,\n", "w.csv:4"},
		{"row of one name", good + "j3\n", "w.csv:4"},
		{"quoted header, bad quote", "\ufeff\"name\",\"time\",\"application\",\"num_replicas\",\"batch_size\"\n\"j1\",\"0,cifar10,1,128\n", "w.csv:2"},
		{"second header", good + "name,time,application,num_replicas,batch_size\n", "w.csv:4"},
		{"mac CR, bad row", strings.ReplaceAll(good, "\n", "\r") + "j3,x,bert,4,64\r", "w.csv:4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wl, err := ReadWorkload(strings.NewReader(c.in), "w.csv")
			require.Error(t, err, "accepted %+v", wl)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Contains(t, err.Error(), c.where)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
