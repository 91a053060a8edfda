// Command pbench times whole processes for docs/BENCHMARKS.md: the commands
// given run in turn (paired, so a change of load hits all of them alike),
// and for each it prints the median and p95 wall time, the median user+sys
// CPU time and the median peak RSS (ru_maxrss). hyperfine reports no RSS and
// is not on every machine, hence this.
//
//	go run ./scripts/pbench -n 31 -- 'git-mem version' 'git-mem search auth middleware'
//
// Each command is split on spaces (no quoting); a last word "<FILE" gives
// the command FILE as its stdin (a hook's payload). A command that fails
// stops the run: a failing command would be timed as fast.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 15, "timed runs per command")
	warm := flag.Int("w", 2, "untimed warm-up runs per command")
	prep := flag.String("prep", "", "shell command run, untimed, before each timed run (e.g. to evict the page cache)")
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: pbench [-n runs] [-w warm-ups] [-prep cmd] -- 'cmd args' ...")
		os.Exit(2)
	}
	wall := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	rss := make([][]float64, len(cmds))
	for r := -*warm; r < *n; r++ {
		for i, c := range cmds {
			if *prep != "" && r >= 0 {
				if out, err := exec.Command("sh", "-c", *prep).CombinedOutput(); err != nil {
					fmt.Fprintf(os.Stderr, "pbench: -prep: %v: %s\n", err, out)
					os.Exit(1)
				}
			}
			args := strings.Fields(c)
			var stdin *os.File
			if n := len(args); n > 1 && strings.HasPrefix(args[n-1], "<") {
				f, err := os.Open(args[n-1][1:])
				if err != nil {
					fmt.Fprintf(os.Stderr, "pbench: %s: %v\n", c, err)
					os.Exit(1)
				}
				stdin, args = f, args[:n-1]
			}
			cmd := exec.Command(args[0], args[1:]...)
			if stdin != nil {
				cmd.Stdin = stdin
			}
			t := time.Now()
			out, err := cmd.CombinedOutput()
			d := time.Since(t)
			if stdin != nil {
				stdin.Close()
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "pbench: %s: %v: %s\n", c, err, out)
				os.Exit(1)
			}
			if r < 0 {
				continue
			}
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			wall[i] = append(wall[i], ms(d))
			cpu[i] = append(cpu[i], ms(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()))
			rss[i] = append(rss[i], float64(ru.Maxrss)/1024) // KiB on Linux
		}
	}
	for i, c := range cmds {
		fmt.Printf("%-60s wall p50 %7.1f ms  p95 %7.1f ms  min %7.1f ms  cpu p50 %6.1f ms  rss p50 %6.1f MB\n",
			c, quantile(wall[i], .5), quantile(wall[i], .95), quantile(wall[i], 0), quantile(cpu[i], .5), quantile(rss[i], .5))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quantile is the nearest-rank quantile q of v.
func quantile(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
