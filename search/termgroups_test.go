package search

import (
	"reflect"
	"testing"
)

func TestTermGroups(t *testing.T) {
	tests := []struct {
		name    string
		costs   []int
		workers int
		want    [][]int
	}{
		{"equal costs: even and odd positions", []int{5, 5, 5, 5, 5}, 2, [][]int{{0, 2, 4}, {1, 3}}},
		{"no costs known: even and odd positions", []int{0, 0, 0, 0}, 2, [][]int{{0, 2}, {1, 3}}},
		{"the two heaviest terms apart, loads 370 and 365", []int{300, 40, 120, 200, 20, 10, 15, 30}, 2, [][]int{{0, 1, 4, 5}, {2, 3, 6, 7}}},
		{"costliest first, least loaded group, query order within", []int{10, 1, 1, 1, 9}, 2, [][]int{{0, 2}, {1, 3, 4}}},
		{"one worker", []int{3, 1, 2}, 1, [][]int{{0, 1, 2}}},
		{"as many workers as terms", []int{1, 7}, 2, [][]int{{1}, {0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := termGroups(tt.costs, tt.workers)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("termGroups(%v, %d) = %v, want %v", tt.costs, tt.workers, got, tt.want)
			}
			for w, g := range got {
				if len(g) == 0 {
					t.Fatalf("group %d is empty: every worker must score a term", w)
				}
			}
		})
	}
}
