package csvtext

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReader(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"\ufeff":          "",
		"\ufeff\"a\",b\n": "\"a\",b\n",
		"a,b":             "a,b",
		"\xef\xbb":        "\xef\xbb",
		"x\ufeff":         "x\ufeff",
		"a\rb\rc\r":       "a\nb\nc\n",
		"a\r\nb\r\n":      "a\r\nb\r\n",
		"a\r\rb":          "a\n\nb",
		"\r":              "\n",
		"\ufeffa\rb":      "a\nb",
	} {
		b, err := io.ReadAll(Reader(strings.NewReader(in)))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "%q", in)
		// one byte at a time: a CR at the end of a read still sees its LF
		b, err = io.ReadAll(Reader(iotest.OneByteReader(strings.NewReader(in))))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "%q one byte at a time", in)
	}
}

func TestBlank(t *testing.T) {
	assert.True(t, Blank(nil))
	assert.True(t, Blank([]string{"", " ", "\t"}))
	assert.False(t, Blank([]string{"", "0"}))
}

func TestParseFloat(t *testing.T) {
	for s, want := range map[string]float64{"1": 1, "-2.5": -2.5, "1e3": 1000, "3.05E1": 30.5, "+0.5": 0.5} {
		v, err := ParseFloat(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"0x1p4", "0X10p0", "0x_80p0", "1_000", "", "1,5", "abc"} {
		_, err := ParseFloat(s)
		assert.Error(t, err, s)
	}
}
