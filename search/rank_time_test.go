package search

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestTimeWindow(t *testing.T) {
	now := time.Date(2023, 4, 5, 19, 25, 0, 0, time.UTC) // a Wednesday
	d := func(m time.Month, day int) string {
		return time.Date(2023, m, day, 0, 0, 0, 0, time.UTC).Format("01-02")
	}
	for _, tc := range []struct {
		q        string
		from, to string // "" = no window
	}{
		{"What kitchen appliance did I buy 10 days ago?", d(3, 25), d(3, 28)},
		{"I mentioned a sports event two weeks ago. What was it?", d(3, 19), d(3, 26)},
		{"What charity event did I join a month ago?", d(2, 26), d(3, 13)},
		{"What is the artist I started to listen to last Friday?", d(3, 31), d(4, 1)},
		{"What did I cook last Wednesday?", d(3, 29), d(3, 30)},
		{"How many hours of yoga did I do last week?", d(3, 26), d(4, 4)},
		{"what did we break yesterday", d(4, 4), d(4, 5)},
		{"the flaky test we skipped a couple of weeks ago", d(3, 19), d(3, 26)},
		{"a few days ago I renamed the config loader", d(4, 1), d(4, 4)},
		{"How many weeks ago did I attend the sale?", "", ""},
		{"How many days had passed since I bought my shoes?", "", ""},
		{"the last commit of the deploy script", "", ""},
	} {
		from, to, ok := timeWindow(tc.q, now)
		got := [2]string{}
		if ok {
			got = [2]string{from.Format("01-02"), to.Format("01-02")}
		}
		if got != [2]string{tc.from, tc.to} {
			t.Errorf("%q: window %v, want [%s, %s)", tc.q, got, tc.from, tc.to)
		}
	}
}

func TestKthBest(t *testing.T) {
	scores := []float64{5, 1, 9, 3, 7, 2, 8}
	rows := []int32{0, 1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		k    int
		want float64
	}{{1, 9}, {2, 8}, {3, 7}, {7, 1}, {10, 1}} {
		if got := kthBest(scores, rows, tc.k); got != tc.want {
			t.Errorf("k=%d: %g, want %g", tc.k, got, tc.want)
		}
	}
}

// TestRowTime: the date read without decoding the record is the record's,
// for a reader (the document table) and a writer (records in memory).
func TestRowTime(t *testing.T) {
	dir := t.TempDir()
	docs := synthDocs(200, 7)
	ix := buildIndex(t, dir, docs)
	check := func(ix *Index, what string) {
		for row := int32(0); row < int32(len(docs)); row++ {
			got, err := ix.rowTime(row)
			if err != nil {
				t.Fatalf("%s row %d: %v", what, row, err)
			}
			rec, err := ix.rec(row)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(rec.Time) || rec.Time.IsZero() {
				t.Fatalf("%s row %d: %v, record %v", what, row, got, rec.Time)
			}
		}
	}
	check(ix, "writer")
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	check(ro, "reader")
}

// TestTimeBoostRanks: of two exchanges alike in words, the one dated in
// the window the query names ranks first, read against WithNow's time;
// without a relative expression, or with the zero time, the words decide.
func TestTimeBoostRanks(t *testing.T) {
	now := time.Date(2023, 3, 25, 18, 0, 0, 0, time.UTC)
	docs := []Doc{
		{Seq: 0, Commit: fmt.Sprintf("%040x", 1), ID: "old", Time: now.AddDate(0, 0, -40), Session: "a",
			Verbatim: "user: I bought a new kitchen appliance, a slow cooker and a kitchen scale\n\nassistant: nice"},
		{Seq: 1, Commit: fmt.Sprintf("%040x", 2), ID: "tendays", Time: now.AddDate(0, 0, -10), Session: "b",
			Verbatim: "user: I bought a kitchen appliance today\n\nassistant: which one?"},
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	for _, tc := range []struct {
		q     string
		now   time.Time
		first string
	}{
		{"what kitchen appliance did I buy 10 days ago", now, "tendays"},
		{"what kitchen appliance did I buy 40 days ago", now, "old"},
		{"what kitchen appliance did I buy", now, "old"},
		{"what kitchen appliance did I buy 10 days ago", time.Time{}, "old"},
	} {
		hs, err := ix.SearchContext(WithNow(context.Background(), tc.now), Query{Text: tc.q, Mode: ModeSessionBM25, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 2 || hs[0].Doc.ID != tc.first {
			t.Errorf("%q (now %v): %v, want %s first", tc.q, tc.now, ids(hs), tc.first)
		}
	}
}

func TestDateWindow(t *testing.T) {
	now := time.Date(2023, 4, 5, 19, 25, 0, 0, time.UTC) // a Wednesday
	d := func(y int, m time.Month, day int) string {
		return time.Date(y, m, day, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
	}
	for _, tc := range []struct {
		q        string
		now      time.Time // zero: no time of asking
		from, to string    // "" = no window
	}{
		{"What painting did Melanie show to Caroline on October 13, 2023?", time.Time{}, d(2023, 10, 12), d(2023, 10, 15)},
		{"What new activity did Maria start recently, as mentioned on 3 June, 2023?", time.Time{}, d(2023, 6, 2), d(2023, 6, 5)},
		{"what changed on the 1st of february 2022", time.Time{}, "", ""}, // "of" between: no day next to the month
		{"what changed on February 1st, 2022", time.Time{}, d(2022, 1, 31), d(2022, 2, 3)},
		{"What did Maria participate in last weekend before April 10, 2023?", time.Time{}, d(2023, 4, 6), d(2023, 4, 10)},
		{"the name of the puppy she got two weeks before August 11, 2023", time.Time{}, d(2023, 7, 25), d(2023, 8, 1)},
		{"What did John do the week before August 3, 2023 involving his kids?", time.Time{}, d(2023, 7, 26), d(2023, 8, 4)},
		{"what did we decide on March 3", now, d(2023, 3, 2), d(2023, 3, 5)},
		{"what did we decide on December 3", now, d(2022, 12, 2), d(2022, 12, 5)}, // the last December 3 before now
		{"what did we decide on March 3", time.Time{}, "", ""},                    // no year, no time of asking
		{"it may 3 times fail", now, "", ""},                                      // "may" needs a year
		{"the release of May 3, 2023", time.Time{}, d(2023, 5, 2), d(2023, 5, 5)},
		{"what did we change in April", now, "", ""}, // a month: the date words meet it
		{"on 31 June 2023", time.Time{}, "", ""},     // no such day
		{"upgrade to Node 18 in march", now, "", ""}, // a number not next to the month
		{"dotnet test hangs after I delete the repo", now, "", ""},
	} {
		from, to, ok := dateWindow(tc.q, tc.now, !tc.now.IsZero())
		got := [2]string{}
		if ok {
			got = [2]string{from.Format("2006-01-02"), to.Format("2006-01-02")}
		}
		if got != [2]string{tc.from, tc.to} {
			t.Errorf("%q: window %v, want [%s, %s)", tc.q, got, tc.from, tc.to)
		}
	}
}

// TestDateBoostRanks: an exchange dated on the day the query names ranks
// first, with and without a time of asking, and not when DateBoost is 0.
func TestDateBoostRanks(t *testing.T) {
	day := time.Date(2023, 6, 3, 15, 0, 0, 0, time.UTC)
	docs := []Doc{
		{Seq: 0, Commit: fmt.Sprintf("%040x", 1), ID: "other", Time: day.AddDate(0, 0, 17), Session: "a", // the same month: its date words
			Verbatim: "user: I started a new activity, a new class, an activity I started with friends\n\nassistant: nice"},
		{Seq: 1, Commit: fmt.Sprintf("%040x", 2), ID: "onday", Time: day, Session: "b",
			Verbatim: "user: I started a new activity today\n\nassistant: which one?"},
	}
	ix := buildIndex(t, t.TempDir(), docs)
	defer ix.Close()
	for _, tc := range []struct {
		q     string
		now   time.Time
		boost float64
		first string
	}{
		{"what new activity did Maria start, as mentioned on 3 June, 2023", time.Time{}, 1, "onday"},
		{"what new activity did Maria start, as mentioned on 3 June, 2023", day.AddDate(0, 2, 0), 1, "onday"},
		{"what new activity did I start on June 3", day.AddDate(0, 2, 0), 1, "onday"},
		{"what new activity did Maria start, as mentioned on 3 June, 2023", time.Time{}, 0, "other"},
		{"what new activity did Maria start, as mentioned on 23 June, 2023", time.Time{}, 1, "other"},
		{"what new activity did Maria start", time.Time{}, 1, "other"},
	} {
		old := DateBoost
		DateBoost = tc.boost
		hs, err := ix.SearchContext(WithNow(context.Background(), tc.now), Query{Text: tc.q, Mode: ModeSessionBM25, K: 2})
		DateBoost = old
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 2 || hs[0].Doc.ID != tc.first {
			t.Errorf("%q (now %v, boost %g): %v, want %s first", tc.q, tc.now, tc.boost, ids(hs), tc.first)
		}
	}
}
