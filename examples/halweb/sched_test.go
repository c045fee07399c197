package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCPUsBesides(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		own  []int
		rt   [][]int
		want []int
	}{
		{"no real-time thread", []int{0, 1}, nil, nil},
		{"unpinned: cannot be kept off", []int{0, 1}, [][]int{{0, 1}, {0, 1}}, nil},
		{"both pinned to the last CPU", []int{0, 1, 2, 3}, [][]int{{3}, {3}}, []int{0, 1, 2}},
		{"pinned apart", []int{0, 1, 2, 3}, [][]int{{2}, {3}, {0, 1, 2, 3}}, []int{0, 1}},
		{"pinned to all of halweb's: stays", []int{1}, [][]int{{1}}, nil},
		{"pinned outside halweb's (isolcpus)", []int{0, 1, 2}, [][]int{{3}}, nil},
		{"host under taskset", []int{0, 1, 2, 3}, [][]int{{2, 3}}, []int{0, 1}},
	} {
		assert.Equal(t, tc.want, cpusBesides(tc.own, tc.rt), tc.name)
	}
}
