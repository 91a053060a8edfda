package search

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gitmem/git-mem/search/embed"
)

// TimeBoost multiplies by 1+TimeBoost the session score of an exchange
// whose date falls in the window a relative time expression of the query
// names ("10 days ago", "two weeks ago", "last Friday", "last week",
// "yesterday"), read against the time of asking (WithNow, else the
// clock); 0 off. A person asks "what did I
// buy 10 days ago": the words say what, the date says which. The index
// already holds each exchange's month and year as words (dateTerms); a
// window of days is finer than a month, and a question that names only a
// relative time has no month word to meet. docs/bench/eval.md measures it.
var TimeBoost = 1.0

// TimeSlack scales the window's slack around the day named (a day for
// "10 days ago", three for "two weeks ago", a week for "a month ago").
var TimeSlack = 1.0

type nowKey struct{}

// WithNow returns ctx carrying the time that relative expressions in a
// query ("two weeks ago") are read against: the time of asking.
func WithNow(ctx context.Context, now time.Time) context.Context {
	return context.WithValue(ctx, nowKey{}, now)
}

// nowOf returns the reference time: the one WithNow set (none when it set
// the zero time), else the clock.
func nowOf(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(nowKey{}).(time.Time)
	if !ok {
		return time.Now(), true
	}
	return t, !t.IsZero()
}

var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

// timeWindow returns the days [from, to) that the first relative time
// expression of text names, read against now, and false when it names none.
func timeWindow(text string, now time.Time) (from, to time.Time, ok bool) {
	var ws []string
	embed.Words(strings.ToLower(text), func(w string, part bool) {
		if !part {
			ws = append(ws, w)
		}
	})
	day := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location()) }
	today := day(now)
	span := func(center time.Time, tol int) (time.Time, time.Time, bool) {
		tol = int(math.Round(float64(tol) * TimeSlack))
		return center.AddDate(0, 0, -tol), center.AddDate(0, 0, tol+1), true
	}
	for i, w := range ws {
		switch {
		case w == "yesterday":
			return span(today.AddDate(0, 0, -1), 0)
		case w == "ago" && i >= 2:
			unit := strings.TrimSuffix(ws[i-1], "s")
			num := ws[i-2]
			if num == "of" && i >= 3 { // "a couple of weeks ago"
				num = ws[i-3]
			}
			n, isNum := numberWords[num]
			if !isNum {
				n = atoiSmall(num)
			}
			if n <= 0 {
				continue // "how many weeks ago": asks for the time, names none
			}
			switch unit {
			case "day":
				return span(today.AddDate(0, 0, -n), max(1, n/7))
			case "week":
				return span(today.AddDate(0, 0, -7*n), 3)
			case "month":
				return span(today.AddDate(0, -n, 0), 7)
			case "year":
				return span(today.AddDate(-n, 0, 0), 31)
			}
		case w == "last" && i+1 < len(ws):
			next := ws[i+1]
			if wd, isDay := weekdays[next]; isDay {
				back := (int(today.Weekday()) - int(wd) + 7) % 7
				if back == 0 {
					back = 7
				}
				return span(today.AddDate(0, 0, -back), 0)
			}
			switch next {
			case "week":
				monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
				return monday.AddDate(0, 0, -8), monday.AddDate(0, 0, 1), true
			case "weekend":
				sat := today.AddDate(0, 0, -((int(today.Weekday())+1)%7 + 1))
				if today.Weekday() == time.Saturday {
					sat = today.AddDate(0, 0, -7)
				}
				return sat.AddDate(0, 0, -1), sat.AddDate(0, 0, 3), true
			case "month":
				first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, today.Location())
				return first.AddDate(0, -1, -3), first.AddDate(0, 0, 3), true
			}
		}
	}
	return time.Time{}, time.Time{}, false
}

func atoiSmall(s string) int {
	if len(s) == 0 || len(s) > 3 {
		return 0
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// timeCandidates is how many of the best rows bound the rows timeBoost
// looks at: a row whose boosted score stays below the timeCandidates-th best
// unboosted score cannot reach the top (at least that many rows score
// above it after the boost), so only the others' dates are read (a few
// table records instead of every row's: 15,000 exchanges, all rows cost
// 12 ms per search).
const timeCandidates = 64

var timeRowsRead atomic.Int64 // rows whose date timeBoost read (benchmarks)

// timeBoost applies TimeBoost to the scored rows (session-bm25).
func (ix *Index) timeBoost(ctx context.Context, text string, scores []float64, touched []int32) error {
	if TimeBoost <= 0 && DateBoost <= 0 {
		return nil
	}
	now, haveNow := nowOf(ctx)
	var from, to time.Time
	boost := 0.0
	if DateBoost > 0 {
		if f, t, ok := dateWindow(text, now, haveNow); ok {
			from, to, boost = f, t, DateBoost
		}
	}
	if boost == 0 && TimeBoost > 0 && haveNow {
		if f, t, ok := timeWindow(text, now); ok {
			from, to, boost = f, t, TimeBoost
		}
	}
	if boost == 0 {
		return nil
	}
	floor := kthBest(scores, touched, timeCandidates) / (1 + boost)
	for _, row := range touched {
		if scores[row] < floor {
			continue
		}
		timeRowsRead.Add(1)
		t, err := ix.rowTime(row)
		if err != nil {
			return err
		}
		t = t.In(now.Location())
		if !t.Before(from) && t.Before(to) {
			scores[row] *= 1 + boost
		}
	}
	return nil
}

// kthBest returns the k-th best score of the rows (the worst when fewer).
func kthBest(scores []float64, rows []int32, k int) float64 {
	h := make([]float64, 0, k) // a min-heap of the best k
	for _, row := range rows {
		v := scores[row]
		if len(h) < k {
			h = append(h, v)
			for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
			continue
		}
		if v <= h[0] {
			continue
		}
		h[0] = v
		for i := 0; ; {
			l, r, m := 2*i+1, 2*i+2, i
			if l < len(h) && h[l] < h[m] {
				m = l
			}
			if r < len(h) && h[r] < h[m] {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	if len(h) == 0 {
		return 0
	}
	return h[0]
}

// rowTime returns row's date, from the document table without decoding
// the rest of its record (the time is the record's first field).
func (ix *Index) rowTime(row int32) (time.Time, error) {
	ix.mu.Lock()
	recs, tab := ix.recs, ix.tab
	ix.mu.Unlock()
	if recs != nil || tab == nil {
		r, err := ix.rec(row)
		return r.Time, err
	}
	b := tab.recBytes(int(row))
	l, n := binary.Uvarint(b)
	ok := n > 0 && uint64(len(b)-n) >= l
	var t time.Time
	if ok {
		ok = t.UnmarshalBinary(b[n:n+int(l)]) == nil
	}
	if !ok {
		r, err := ix.rec(row) // the full decoder names the damage
		if err == nil {
			err = fmt.Errorf("%s: document table record %d: damaged time: %w", ix.dir, row, ErrCorrupt)
		}
		return r.Time, err
	}
	return t, nil
}

// DateBoost multiplies by 1+DateBoost the session score of an exchange
// dated on a calendar day the query names ("on October 13, 2023", "on 3
// June, 2023"; a day with no year is the last such day before the time of
// asking), or in the window a relative time anchored on it names ("two
// weeks before August 11, 2023", "last weekend before April 10, 2023",
// "the week before August 3, 2023"); 0 off. It needs no time of asking
// when the year is named. The index's date words hold an exchange's month
// and year, not its day (a bare number would meet versions and counts):
// "what did we decide on March 3" met every exchange of March alike.
// Measured on every set (docs/bench/eval.md, session 30): 0.5 / 1 / 2 move
// LoCoMo dev +0.006 / +0.008 / +0.008 (6 of its 17 dated questions up,
// none down; single-hop +0.016 [+0.003, +0.031] at 1), slack 0 / 1 / 2
// days the same; no other set's question names a date (their ranks are
// unchanged).
var DateBoost = 1.0

// DateSlack is the slack in days around a named day (DateBoost).
var DateSlack = 1

var monthNames = map[string]time.Month{
	"january": time.January, "february": time.February, "march": time.March, "april": time.April,
	"may": time.May, "june": time.June, "july": time.July, "august": time.August,
	"september": time.September, "october": time.October, "november": time.November, "december": time.December,
}

// dayNumber is w as a day of the month ("13", "13th", "1st"), else 0.
func dayNumber(w string) int {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if s, ok := strings.CutSuffix(w, suf); ok {
			w = s
			break
		}
	}
	if len(w) > 2 {
		return 0
	}
	if d := atoiSmall(w); d >= 1 && d <= 31 {
		return d
	}
	return 0
}

// dateWindow returns the days [from, to) of the first calendar date text
// names (a month name next to a day number, a year after them when
// given), or of a relative time anchored on it by "before", and false
// when it names none. now is the time of asking (for a date without a
// year; haveNow false: such a date is skipped); the days are in now's
// location.
func dateWindow(text string, now time.Time, haveNow bool) (from, to time.Time, ok bool) {
	var ws []string
	embed.Words(strings.ToLower(text), func(w string, part bool) {
		if !part {
			ws = append(ws, w)
		}
	})
	loc := now.Location()
	for i, w := range ws {
		m, isMonth := monthNames[w]
		if !isMonth {
			continue
		}
		start, end, day := i, i, 0
		if i+1 < len(ws) {
			if d := dayNumber(ws[i+1]); d > 0 {
				day, end = d, i+1
			}
		}
		if day == 0 && i > 0 {
			if d := dayNumber(ws[i-1]); d > 0 {
				day, start = d, i-1
			}
		}
		if day == 0 {
			continue // "may" the verb, "in April": a month, which the date words already meet
		}
		year := 0
		if end+1 < len(ws) && len(ws[end+1]) == 4 {
			year = atoi4(ws[end+1])
		}
		if year == 0 {
			if !haveNow || m == time.May {
				// "may" with a number and no year is as often the verb
				continue
			}
			year = now.Year()
			if time.Date(year, m, day, 0, 0, 0, 0, loc).After(now) {
				year--
			}
		}
		anchor := time.Date(year, m, day, 0, 0, 0, 0, loc)
		if anchor.Day() != day {
			continue // 31 June
		}
		if start > 0 && ws[start-1] == "before" {
			// "two weeks before D", "last weekend before D": the relative
			// expression read against D; "the week before D": the 7
			// days before it.
			rel := append(append([]string(nil), ws[:start-1]...), "ago")
			if f, t, ok := timeWindow(strings.Join(rel, " "), anchor); ok {
				return f, t, true
			}
			if start > 1 && ws[start-2] == "week" {
				return anchor.AddDate(0, 0, -7-DateSlack), anchor.AddDate(0, 0, 1), true
			}
		}
		return anchor.AddDate(0, 0, -DateSlack), anchor.AddDate(0, 0, DateSlack+1), true
	}
	return time.Time{}, time.Time{}, false
}

// atoi4 is a four-digit year, else 0.
func atoi4(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	if n < 1000 {
		return 0
	}
	return n
}
