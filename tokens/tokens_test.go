package tokens

import (
	"strings"
	"sync"
	"testing"
)

func TestCount(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
		// Reference values from tiktoken's cl100k_base.
		{"tiktoken is great!", 6},
		{"func main() {}", 4},
	}
	for _, c := range cases {
		if got := Count(c.in); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestCountInvalidUTF8(t *testing.T) {
	if got := Count("ab\xffcd"); got <= 0 {
		t.Fatalf("Count of invalid UTF-8 = %d, want > 0", got)
	}
}

func TestCountConcurrent(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 50)
	want := Count(text)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := Count(text); got != want {
				t.Errorf("concurrent Count = %d, want %d", got, want)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.\n", 100)
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		Count(text)
	}
}
