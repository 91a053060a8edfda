package exchange

import (
	"bufio"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// fastGen writes random records of the exchange format as JSON text. clean
// is false once it has written something parseFast is meant to decline.
type fastGen struct {
	r     *rand.Rand
	b     strings.Builder
	clean bool
}

func (g *fastGen) str() {
	parts := []string{"a", "Z", " ", "hello", "é", "日本", "😀", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`,
		`\u0000`, `\ud83d\ude00`, `\u2028`, "id", "turns", "role"}
	g.b.WriteByte('"')
	for n := g.r.Intn(6); n > 0; n-- {
		g.b.WriteString(parts[g.r.Intn(len(parts))])
	}
	if g.r.Intn(40) == 0 { // a lone surrogate: encoding/json writes U+FFFD
		g.b.WriteString(`\udc00x`)
		g.clean = false
	}
	g.b.WriteByte('"')
}

func (g *fastGen) ws() {
	if g.r.Intn(4) == 0 {
		g.b.WriteString([]string{" ", "\t", "\r\n", "  \n "}[g.r.Intn(4)])
	}
}

func (g *fastGen) value(depth int) {
	g.ws()
	k := g.r.Intn(9)
	if depth > 3 {
		k = g.r.Intn(6)
	}
	switch k {
	case 0, 1:
		g.str()
	case 2:
		g.b.WriteString([]string{"0", "-1", "1.50", "1e5", "-0.0", "12345678901234567890", "1E+400", "2.5e-3"}[g.r.Intn(8)])
	case 3:
		g.b.WriteString([]string{"true", "false"}[g.r.Intn(2)])
	case 4:
		g.b.WriteString("null")
	case 5:
		g.b.WriteString([]string{"[]", "{}"}[g.r.Intn(2)])
	case 6, 7:
		g.b.WriteByte('{')
		keys := []string{"a", "b", "c", "A", "x y", `\u0061`}
		for i, n := 0, g.r.Intn(4); i < n; i++ {
			if i > 0 {
				g.b.WriteByte(',')
			}
			g.b.WriteString(`"` + keys[i] + `":`) // distinct keys ("a" and `\u0061` are the same)
			if keys[i] == `\u0061` {
				g.clean = false
			}
			g.value(depth + 1)
		}
		g.b.WriteByte('}')
	default:
		g.b.WriteByte('[')
		for i, n := 0, g.r.Intn(4); i < n; i++ {
			if i > 0 {
				g.b.WriteByte(',')
			}
			g.value(depth + 1)
		}
		g.b.WriteByte(']')
	}
	g.ws()
}

// field writes name and a value: for the known string fields a string or
// null, now and then any other value (a type FromMap refuses).
func (g *fastGen) field(name string, known bool) {
	g.ws()
	g.b.WriteString(`"` + name + `":`)
	switch {
	case known && g.r.Intn(30) == 0:
		g.clean = false
		g.value(0)
	case known && g.r.Intn(10) == 0:
		g.b.WriteString("null")
	case known:
		g.ws()
		g.str()
	default:
		g.value(0)
	}
}

func (g *fastGen) turn() {
	if g.r.Intn(50) == 0 {
		g.clean = false
		g.value(2)
		return
	}
	g.b.WriteByte('{')
	names := []string{"role", "text", "name", "input", "meta", "Role", "TEXT"}
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	n := g.r.Intn(len(names) + 1)
	for i := 0; i < n; i++ {
		if i > 0 {
			g.b.WriteByte(',')
		}
		switch names[i] {
		case "role":
			g.ws()
			g.b.WriteString(`"role":"` + []string{"user", "assistant", "tool", "system", "robot", ""}[g.r.Intn(6)] + `"`)
		case "text", "name":
			g.field(names[i], true)
		default:
			g.field(names[i], false)
		}
	}
	if n > 0 && g.r.Intn(40) == 0 { // a duplicate: encoding/json keeps the last
		g.clean = false
		g.b.WriteByte(',')
		g.field(names[0], names[0] == "text" || names[0] == "name")
	}
	g.b.WriteByte('}')
}

func (g *fastGen) record() string {
	g.b.Reset()
	g.clean = true
	g.ws()
	g.b.WriteByte('{')
	names := []string{"id", "session", "time", "project", "agent", "turns", "extra", "ID", "Turns", "tags"}
	g.r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	n := g.r.Intn(len(names) + 1)
	hasTurns := false
	for i := 0; i < n; i++ {
		if i > 0 {
			g.b.WriteByte(',')
		}
		switch names[i] {
		case "turns":
			hasTurns = true
			g.ws()
			g.b.WriteString(`"turns":`)
			if g.r.Intn(30) == 0 {
				g.clean = false
				g.value(0)
				break
			}
			g.b.WriteByte('[')
			for j, m := 0, g.r.Intn(5); j < m; j++ {
				if j > 0 {
					g.b.WriteByte(',')
				}
				g.turn()
			}
			g.b.WriteByte(']')
		case "id", "session", "time", "project", "agent":
			g.field(names[i], true)
		default:
			g.field(names[i], false)
		}
	}
	if n > 0 && g.r.Intn(40) == 0 {
		g.clean = false
		g.b.WriteString(`,"` + names[0] + `":null`)
	}
	g.b.WriteByte('}')
	if !hasTurns {
		g.clean = false
	}
	switch g.r.Intn(30) {
	case 0:
		g.b.WriteString("}") // encoding/json's More takes this as the end
		g.clean = false
	case 1:
		g.b.WriteString(` {"turns":[]}`)
		g.clean = false
	case 2:
		s := g.b.String()
		g.b.Reset()
		g.b.WriteString(s[:g.r.Intn(len(s))])
		g.clean = false
	case 3:
		g.b.WriteString(" \r\n\t")
	}
	return g.b.String()
}

// checkFast holds parseFast to parseMap (encoding/json and FromMap) on one
// record, and Parse to parseMap then Validate.
func checkFast(t *testing.T, data []byte) (ok bool) {
	t.Helper()
	fast, ok := parseFast(data)
	slow, err := parseMap(data)
	if ok {
		if err != nil {
			t.Fatalf("parseFast took %q, which parseMap refuses: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("parseFast(%q) = %#v, parseMap %#v", data, fast, slow)
		}
	}
	got, gotErr := Parse(data)
	if !utf8.Valid(data) {
		err = errors.New("invalid UTF-8")
	}
	if err == nil {
		err = slow.Validate()
	} else {
		slow = nil
	}
	// FromMap checks a turn's fields in map order: with two of the wrong
	// type, either may be named. Ask the former way again for the other.
	for i := 0; i < 50 && err != nil && gotErr != nil && gotErr.Error() != err.Error(); i++ {
		if _, e := parseMap(data); e != nil {
			err = e
		}
	}
	if (gotErr == nil) != (err == nil) || (err != nil && gotErr.Error() != err.Error()) {
		t.Fatalf("Parse(%q): error %v, the former way %v", data, gotErr, err)
	}
	if err == nil && !reflect.DeepEqual(got, slow) {
		t.Fatalf("Parse(%q) = %#v, the former way %#v", data, got, slow)
	}
	return ok
}

// TestParseFastIsParse: what parseFast takes, it decodes as encoding/json
// into a map and FromMap do; it takes every record without a duplicate
// name, lone surrogate, wrong type or trailing value; and Parse's results
// and errors are the former ones. Generated records (seed logged) and the
// coding corpus's lines when present.
func TestParseFastIsParse(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	g := &fastGen{r: rand.New(rand.NewSource(seed))}
	taken, declined := 0, 0
	for i := 0; i < 20000; i++ {
		rec := g.record()
		if ok := checkFast(t, []byte(rec)); ok {
			taken++
		} else if g.clean {
			t.Fatalf("parseFast declined a plain record: %q", rec)
		} else {
			declined++
		}
	}
	t.Logf("generated: %d taken, %d declined", taken, declined)
	if taken < 4000 || declined < 1000 {
		t.Fatalf("generator off balance: %d taken, %d declined", taken, declined)
	}
	for _, rec := range []string{
		`{"turns":[{"role":"user","text":"a","text":"b"}]}`,
		`{"turns":[{"role":"user","text":"\ud800"}]}`,
		`{"turns":[{"role":"user","text":"hi"}]}}`,
		`{"turns":[{"role":"user","text":"hi"}]} x`,
		`{"turns":null}`,
		`{"id":null,"turns":[{"role":"user","text":"hi","input":null}]}`,
		`{"turns":[{"role":"user","text":"hi","input":{"n":[1.50,-0,1e400]}}]}`,
		`{"turns":[{"role":"user","text":"hi"}],"x":` + strings.Repeat("[", maxFastDepth+5) + strings.Repeat("]", maxFastDepth+5) + `}`,
	} {
		checkFast(t, []byte(rec))
	}

	files, _ := filepath.Glob("/work/shared/eval/coding/*/exchanges.jsonl")
	lines := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, MaxRecordBytes)
		for sc.Scan() {
			if !checkFast(t, sc.Bytes()) {
				t.Fatalf("%s: parseFast declined a line of the corpus", name)
			}
			lines++
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("corpus: %d lines", lines)
}

// BenchmarkParseCoding: the coding corpus's lines by parseFast and by
// parseMap (the former way), one pass per op.
func BenchmarkParseCoding(b *testing.B) {
	files, _ := filepath.Glob("/work/shared/eval/coding/*/exchanges.jsonl")
	var lines [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		for l := range strings.Lines(string(data)) {
			lines = append(lines, []byte(l))
		}
	}
	if len(lines) == 0 {
		b.Skip("no coding corpus here")
	}
	for _, f := range []struct {
		name string
		fn   func([]byte) bool
	}{
		{"fast", func(d []byte) bool { _, ok := parseFast(d); return ok }},
		{"map", func(d []byte) bool { _, err := parseMap(d); return err == nil }},
	} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				for _, l := range lines {
					if !f.fn(l) {
						b.Fatal("a line failed")
					}
				}
			}
		})
	}
}
