package uitest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Session is one page of a headless Chromium driven as a user drives it:
// mouse clicks at an element's place and typed text, over the DevTools
// protocol on a pipe (--remote-debugging-pipe: the browser reads commands
// on its fd 3 and answers on its fd 4, each message ended by a NUL), so
// no port is opened and no client library is needed.
type Session struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File // the browser's fd 3
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpReply
	session string
	ctx     context.Context
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Open starts Chromium with a blank page; it is stopped when the test
// ends. A generous deadline stops a hung browser; the test asserts no
// time.
func Open(t *testing.T, bin string) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmdIn, in, err := os.Pipe()
	require.NoError(t, err)
	out, cmdOut, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "--window-size=1280,900", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	cmdIn.Close()
	cmdOut.Close()
	s := &Session{t: t, cmd: cmd, in: in, waiting: map[int]chan cdpReply{}, ctx: ctx}
	go s.read(out)
	t.Cleanup(func() {
		in.Close()
		cancel()
		_ = cmd.Wait()
		out.Close()
		if t.Failed() {
			t.Logf("chromium: %s", stderr.String())
		}
	})
	var target struct {
		TargetID string `json:"targetId"`
	}
	s.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	s.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	s.session = attached.SessionID
	s.call("Page.enable", nil, nil)
	return s
}

// read hands each answer to the call waiting for it; events are dropped.
func (s *Session) read(out *os.File) {
	r := bufio.NewReader(out)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int `json:"id"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue
		}
		s.mu.Lock()
		ch := s.waiting[m.ID]
		delete(s.waiting, m.ID)
		s.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one command (to the page once attached) and decodes its
// result into out (nil: ignored).
func (s *Session) call(method string, params any, out any) {
	s.t.Helper()
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan cdpReply, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if s.session != "" {
		msg["sessionId"] = s.session
	}
	b, err := json.Marshal(msg)
	require.NoError(s.t, err)
	_, err = s.in.Write(append(b, 0))
	require.NoError(s.t, err, "%s", method)
	select {
	case reply := <-ch:
		require.Nil(s.t, reply.Error, "%s: %+v", method, reply.Error)
		if out != nil {
			require.NoError(s.t, json.Unmarshal(reply.Result, out), "%s", method)
		}
	case <-s.ctx.Done():
		s.t.Fatalf("chromium did not answer %s", method)
	}
}

// Navigate loads url.
func (s *Session) Navigate(url string) {
	s.t.Helper()
	s.call("Page.navigate", map[string]any{"url": url}, nil)
}

// Eval evaluates a JavaScript expression in the page (a promise is
// awaited) and decodes its value into out (nil: ignored).
func (s *Session) Eval(expr string, out any) {
	s.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	s.call("Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	require.Nil(s.t, res.Exception, "%s: %+v", expr, res.Exception)
	if out != nil {
		require.NoError(s.t, json.Unmarshal(res.Result.Value, out), "%s", expr)
	}
}

// WaitFor waits until the JavaScript condition holds in the page (the
// page asks it again every 25 ms; the session's deadline bounds the wait,
// the test asserts no time).
func (s *Session) WaitFor(cond string) {
	s.t.Helper()
	s.Eval(`new Promise((done) => { const check = () => { let ok = false; try { ok = !!(`+cond+
		`); } catch (e) {} if (ok) done(true); else setTimeout(check, 25); }; check(); })`, nil)
}

// Click clicks the middle of the first element matching selector with the
// mouse, as a user does (the element must be visible).
func (s *Session) Click(selector string) {
	s.t.Helper()
	var at struct{ X, Y float64 }
	sel, _ := json.Marshal(selector)
	s.Eval(fmt.Sprintf(`(() => { const el = document.querySelector(%s); el.scrollIntoView({block: 'center'});
		const r = el.getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, sel), &at)
	s.call("Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": at.X, "y": at.Y}, nil)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		s.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1}, nil)
	}
}

// Type types text into the focused element.
func (s *Session) Type(text string) {
	s.t.Helper()
	s.call("Input.insertText", map[string]any{"text": text}, nil)
}

// DOM is the page's document as it is now.
func (s *Session) DOM() string {
	s.t.Helper()
	var html string
	s.Eval(`document.documentElement.outerHTML`, &html)
	return html
}
