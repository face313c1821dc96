package errtext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLineCol(t *testing.T) {
	data := []byte("ab\ncd\n")
	for _, tc := range []struct {
		off  int64
		want string
	}{
		{-5, "line 1:1"},
		{0, "line 1:1"},
		{2, "line 1:3"},
		{3, "line 2:1"},
		{5, "line 2:3"},
		{6, "line 3:1"},
		{100, "line 3:1"},
	} {
		assert.Equal(t, tc.want, LineCol(data, tc.off), "offset %d", tc.off)
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes: cut before it, not inside
		{"é", 1, "…"},
		{"", 0, ""},
	} {
		assert.Equal(t, tc.want, Clip(tc.s, tc.n), "Clip(%q, %d)", tc.s, tc.n)
	}
}
