package search
import ("testing";"os";"time")
const profDir = "/tmp/gitmem-prof-15k"
func TestProfOpen(t *testing.T){
	if _, err := os.Stat(profDir); err != nil {
		ix := buildIndex(t, profDir, synthDocs(15000, 42))
		ix.Close()
	}
	var to, ts time.Duration
	for i := 0; i < 40; i++ {
		m := Modes[i%4]
		t1 := time.Now()
		ro, err := OpenReadOnly(profDir, Options{})
		if err != nil { t.Fatal(err) }
		t2 := time.Now()
		if _, err := ro.Search(Query{Text: benchQueries[i%5], Mode: m}); err != nil { t.Fatal(err) }
		t3 := time.Now()
		ro.Close()
		to += t2.Sub(t1); ts += t3.Sub(t2)
	}
	t.Logf("open %v search %v (avg)", to/40, ts/40)
}
