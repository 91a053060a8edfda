package eval

import (
	"testing"
	"time"
)

func TestQuestionDate(t *testing.T) {
	for _, tc := range []struct {
		line string
		want time.Time
		err  bool
	}{
		{`{"qid":"a","query":"x","relevant":["e"],"question_date":"2023/05/30 (Tue) 23:08"}`, time.Date(2023, 5, 30, 23, 8, 0, 0, time.UTC), false},
		{`{"qid":"a","query":"x","relevant":["e"],"question_date":"2024-02-01T10:00:00+01:00"}`, time.Date(2024, 2, 1, 9, 0, 0, 0, time.UTC), false},
		{`{"qid":"a","query":"x","relevant":["e"]}`, time.Time{}, false},
		{`{"qid":"a","query":"x","relevant":["e"],"question_date":"last Tuesday"}`, time.Time{}, true},
	} {
		q, err := parseQuery([]byte(tc.line))
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want error %v", tc.line, err, tc.err)
			continue
		}
		if !tc.err && !q.Now.Equal(tc.want) {
			t.Errorf("%s: now %v, want %v", tc.line, q.Now, tc.want)
		}
	}
}
