package hooks

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gitmem/git-mem/exchange"
)

// ReadAider reads Aider's .aider.chat.history.md. Aider writes user input as
// "#### " lines and its own output as "> " lines, both ending in two spaces;
// the model's reply is the plain Markdown between them. Each "# aider chat
// started at" line starts a session, which ends the previous one.
func ReadAider(path string, opt Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("read aider history %s: %w", path, err)
	}
	defer f.Close()
	abs, _ := filepath.Abs(path)
	project := ProjectFromCwd(filepath.Dir(abs))
	res, err := readAider(f, path, project, time.Local, opt)
	if err != nil {
		return res, fmt.Errorf("read aider history %s: %w", path, err)
	}
	return res, nil
}

const aiderStart = "# aider chat started at "

type aiderKind int

const (
	aiderText   aiderKind = iota // the model's reply
	aiderInput                   // a "#### " user line
	aiderOutput                  // a "> " line of aider's own output
)

func readAider(r io.Reader, name, project string, loc *time.Location, opt Options) (Result, error) {
	var res Result
	var bs []*builder
	var cur *builder
	session, sessionTime := "", ""
	n := 0
	var prompt []string // pending "#### " lines
	var buf []string    // pending lines of the current kind
	kind := aiderText   // kind of buf
	inOutput := false   // inside a multi-line "> " output item
	flush := func() {
		text := strings.Trim(strings.Join(buf, "\n"), "\n")
		buf = buf[:0]
		if cur == nil || strings.TrimSpace(text) == "" {
			return
		}
		switch kind {
		case aiderText:
			cur.text(exchange.RoleAssistant, clip(text), nil)
		case aiderOutput:
			cur.text(exchange.RoleSystem, clip(text), nil)
		}
	}
	endPrompt := func() {
		if prompt == nil {
			return
		}
		text := strings.TrimSpace(cutGitMemContext(strings.Join(prompt, "\n")))
		prompt = nil
		if cur != nil {
			cur.closed = true
		}
		cur = nil
		if text == "" || session == "" {
			return
		}
		n++
		ex := &exchange.Exchange{
			ID:      session + "/" + strconv.Itoa(n),
			Session: session,
			Time:    sessionTime,
			Project: project,
			Agent:   AgentAider,
		}
		cur = newBuilder(ex)
		cur.command = strings.HasPrefix(text, "/") || strings.HasPrefix(text, "!")
		cur.text(exchange.RoleUser, clip(text), nil)
		bs = append(bs, cur)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), exchange.MaxRecordBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		raw := validUTF8(sc.Text())
		ln := strings.TrimRight(raw, "\r")
		switch {
		case strings.HasPrefix(ln, aiderStart):
			flush()
			endPrompt()
			if cur != nil {
				cur.closed = true
			}
			cur = nil
			inOutput = false
			stamp := strings.TrimSpace(strings.TrimPrefix(ln, aiderStart))
			t, err := time.ParseInLocation("2006-01-02 15:04:05", stamp, loc)
			if err != nil {
				res.Problems = append(res.Problems, Problem{name, lineNo, fmt.Sprintf("session start %q is not a date; its exchanges are skipped", stamp)})
				session, sessionTime = "", ""
				continue
			}
			sessionTime = t.Format(time.RFC3339)
			session = "aider:" + project + ":" + t.Format("2006-01-02T15:04:05")
			n = 0
			continue
		case isAiderInput(ln):
			inOutput = false
			text := strings.TrimSuffix(strings.TrimPrefix(ln, "####"), "  ")
			text = strings.TrimPrefix(text, " ")
			if isAiderAnswer(text) {
				// An answer to aider's own question: part of its output.
				if kind != aiderOutput {
					flush()
					kind = aiderOutput
				}
				buf = append(buf, text)
				continue
			}
			if prompt == nil {
				flush()
				endPrompt()
				prompt = []string{}
			}
			prompt = append(prompt, text)
			continue
		}
		endPrompt()
		if inOutput || strings.HasPrefix(ln, ">") {
			if kind != aiderOutput {
				flush()
				kind = aiderOutput
			}
			text := strings.TrimPrefix(strings.TrimPrefix(ln, ">"), " ")
			// An output item ends with aider's two-space line break; until
			// then its lines continue it.
			inOutput = !strings.HasSuffix(ln, "  ")
			text = strings.TrimRight(text, " ")
			if text != "" && !strings.HasPrefix(text, "Tokens: ") && !strings.HasPrefix(text, "^C") {
				buf = append(buf, text)
			}
			continue
		}
		if kind != aiderText {
			flush()
			kind = aiderText
		}
		buf = append(buf, ln)
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	flush()
	if prompt != nil {
		// The file ends in a prompt: exchange has begun but has no reply yet.
		endPrompt()
	}
	res.Exchanges = finish(bs, opt)
	return res, nil
}

// isAiderInput: user lines are "#### text" plus aider's two-space line
// break, which sets them apart from a "#### " heading in a reply.
func isAiderInput(ln string) bool {
	return strings.HasPrefix(ln, "#### ") && strings.HasSuffix(ln, "  ") || ln == "####  " || ln == "#### "
}

// isAiderAnswer recognises a yes/no answer logged as input, e.g.
// "Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: skip".
func isAiderAnswer(text string) bool {
	return strings.Contains(text, "(Y)es/(N)o")
}
