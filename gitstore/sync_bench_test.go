package gitstore

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
)

// syncBenchEntries makes n exchanges of about the size of a real one (a
// verbatim of ~2 KB) with the prefix in their ids.
func syncBenchEntries(prefix string, n int) []Entry {
	es := make([]Entry, n)
	body := make([]byte, 0, 2048)
	for len(body) < 2000 {
		body = append(body, "the user asked about retry_timeout in internal/ratelimit/limiter.go and the agent changed it "...)
	}
	for i := range es {
		id := fmt.Sprintf("%s-%06d", prefix, i)
		sum := fmt.Sprintf("%x", []byte(id))
		es[i] = Entry{
			Path:    "ex/" + sum[len(sum)-1:] + "/" + sum[len(sum)-2:len(sum)-1] + "/" + sum[len(sum)-3:len(sum)-2] + "/" + sum + ".json",
			Blob:    append([]byte(`{"id":"`+id+`","text":"`), append(body, `"}`...)...),
			Message: "stored " + id + "\n\nfixed retry_timeout\n\nExchange: " + id + "\nProject: bench\n",
			When:    time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
		}
	}
	return es
}

func benchBase() int {
	if n, err := strconv.Atoi(os.Getenv("GITSTORE_BENCH_BASE")); err == nil {
		return n
	}
	return 1000
}

// syncSetup: a remote and two memories sharing a synced history of base
// exchanges, then 1,000 new exchanges on each side, offline.
func syncSetup(b *testing.B, base int) (remote string, a, c *Repo) {
	dir := b.TempDir()
	remote = bareRemote(b, dir, "remote.git")
	a = memWith(b, remote)
	c = memWith(b, remote)
	for i := 0; i < base; i += 1000 {
		if _, err := a.Append(syncBenchEntries(fmt.Sprintf("base%03d", i/1000), min(1000, base-i)), 0); err != nil {
			b.Fatal(err)
		}
	}
	mustSync(b, a)
	mustSync(b, c)
	if _, err := a.Append(syncBenchEntries("a", 1000), 0); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Append(syncBenchEntries("c", 1000), 0); err != nil {
		b.Fatal(err)
	}
	return remote, a, c
}

// BenchmarkSync1000: both machines add 1,000 exchanges offline; a syncs
// (push 1,000), c syncs (fetch 1,000, union merge, push 1,001), a syncs
// again (fetch and fast-forward). Reported per step: time and bytes.
func BenchmarkSync1000(b *testing.B) {
	base := benchBase()
	var tA, tC, tA2 time.Duration
	var sentA, gotC, sentC, gotA2 int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, a, c := syncSetup(b, base)
		b.StartTimer()
		t0 := time.Now()
		ra := mustSync(b, a)
		t1 := time.Now()
		rc := mustSync(b, c)
		t2 := time.Now()
		ra2 := mustSync(b, a)
		t3 := time.Now()
		b.StopTimer()
		if ra.Pushed != 1000 || rc.Fetched != 1000 || rc.Merged != 1000 || rc.Pushed != 1000 || ra2.Merged != 1000 || !ra2.FastForward {
			b.Fatalf("unexpected: %+v %+v %+v", ra, rc, ra2)
		}
		tA += t1.Sub(t0)
		tC += t2.Sub(t1)
		tA2 += t3.Sub(t2)
		sentA += ra.BytesSent
		gotC += rc.BytesReceived
		sentC += rc.BytesSent
		gotA2 += ra2.BytesReceived
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(tA.Seconds()/n, "s-push1000")
	b.ReportMetric(tC.Seconds()/n, "s-fetch-merge-push")
	b.ReportMetric(tA2.Seconds()/n, "s-fetch-ff")
	b.ReportMetric(float64(sentA)/n/1e6, "MB-sent-a")
	b.ReportMetric(float64(gotC)/n/1e6, "MB-recv-c")
	b.ReportMetric(float64(sentC)/n/1e6, "MB-sent-c")
	b.ReportMetric(float64(gotA2)/n/1e6, "MB-recv-a")
}

// BenchmarkPush1000GoGit is the comparison for the push step: go-git's own
// Remote.Push of the same 1,000 new exchanges.
func BenchmarkPush1000GoGit(b *testing.B) {
	base := benchBase()
	var d time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		remote, a, _ := syncSetup(b, base)
		b.StartTimer()
		t0 := time.Now()
		err := a.Git().Push(&git.PushOptions{RemoteName: "origin", RemoteURL: remote,
			RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}})
		d += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		gitOut(b, "--git-dir", remote, "fsck", "--strict", "--no-dangling")
		b.StartTimer()
	}
	b.ReportMetric(d.Seconds()/float64(b.N), "s-push1000")
}

// BenchmarkPush1000GitCLI is the other comparison: `git push`.
func BenchmarkPush1000GitCLI(b *testing.B) {
	base := benchBase()
	var d time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		remote, a, _ := syncSetup(b, base)
		b.StartTimer()
		t0 := time.Now()
		gitOut(b, "--git-dir", a.Dir(), "push", "-q", remote, "main")
		d += time.Since(t0)
	}
	b.ReportMetric(d.Seconds()/float64(b.N), "s-push1000")
}
