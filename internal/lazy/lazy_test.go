package lazy

import "testing"

func TestRegexpCompilesOnceOnFirstUse(t *testing.T) {
	re := Regexp(`^a+$`)
	first := re()
	if !first.MatchString("aaa") || first.MatchString("ab") {
		t.Fatalf("compiled %q does not match as written", first)
	}
	if re() != first {
		t.Fatal("a second call compiled the expression again")
	}
}

func TestRegexpInvalidPanicsOnFirstUseOnly(t *testing.T) {
	re := Regexp(`(`) // must not panic here
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid expression did not panic on first use")
		}
	}()
	re()
}
