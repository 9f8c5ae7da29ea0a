// Command serve load-tests `deepagents serve`: N clients at once each
// create a thread and stream a scripted run on it (replay:inline, so every
// thread carries its own script), as the Deep Agents UI does, and the
// program reports:
//
//   - runs/s: N over the wall time from the first request to the last
//     run's end;
//   - time to first event (the metadata event, from the stream request)
//     and to completion (from creating the thread), p50 and p99, as each
//     client saw them;
//   - memory per idle thread: the server's RSS growth over creating M
//     threads (with one short run each), divided by M;
//   - memory per running run: the server's RSS with N runs held open at
//     once (their model waits), less its RSS before, divided by N.
//
// The server is the real binary, its database a SQLite file in a temporary
// directory, with its defaults but --model replay:inline, --db and --addr
// (so runs beyond --max-runs, 64 by default, wait as pending: that is part
// of what is measured).
//
// Against LangGraph's own server (bench/serve/js: deepagents from npm served
// by @langchain/langgraph-api, a model that plays the same inline scripts):
//
//	(cd bench/serve/js && npm ci && npx langgraphjs dev --port 2024 --no-browser) &
//	go run ./bench/serve -url http://127.0.0.1:2024 -pid $(pgrep -f langgraph-api | head -1)
//
// Usage, from the repository root (Linux: RSS is read from /proc):
//
//	go run ./bench/serve [-n 1000] [-idle 1000] [-turns 5] [-keep] [-protocol langgraph|a2a|mcp]
//
// -protocol sets what the load's clients speak: the LangGraph API (a thread
// and a streamed run), A2A (message/stream of a task in a new context, at
// /a2a/deepagent; a2a-context: in a context the client names, whose tasks
// the server changes under the context's lock), or MCP (a tools/call of
// the assistant's tool at /mcp, whose answer is the first event). The idle
// threads and held runs are the LangGraph API's either way.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "concurrent clients, one streaming run each")
	idle := flag.Int("idle", 1000, "threads created (with one short run each) to measure memory per idle thread")
	turns := flag.Int("turns", 5, "model turns per run (tool calls: write_file, ls, read_file)")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	bin := flag.String("bin", "", "deepagents binary (default: built from ./cmd/deepagents)")
	url := flag.String("url", "", "load another server instead, already running at this URL (LangGraph's, say: see bench/serve/js)")
	pid := flag.Int("pid", 0, "with -url: the server's process, whose memory is read")
	proto := flag.String("protocol", "langgraph", "what the load's clients speak: langgraph, a2a, a2a-context or mcp")
	flag.Parse()
	switch *proto {
	case "langgraph":
	case "a2a":
		each = func(c *http.Client, url string, turns int) (time.Duration, error) {
			return streamA2A(c, url, turns, false)
		}
	case "a2a-context":
		each = func(c *http.Client, url string, turns int) (time.Duration, error) {
			return streamA2A(c, url, turns, true)
		}
	case "mcp":
		each = callMCP
	default:
		fmt.Fprintln(os.Stderr, "serve: -protocol is langgraph, a2a, a2a-context or mcp")
		os.Exit(2)
	}
	if err := run(*n, *idle, *turns, *keep, *bin, *url, *pid); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run(n, idle, turns int, keep bool, bin, url string, pid int) error {
	dir, err := os.MkdirTemp("", "bench-serve")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	if url == "" {
		var stop func()
		if url, pid, stop, err = start(dir, bin); err != nil {
			return err
		}
		defer stop()
	}
	return load(url, pid, n, idle, turns)
}

// start builds (unless given) and starts `deepagents serve`, and returns
// its URL, its process ID and how to stop it.
func start(dir, bin string) (string, int, func(), error) {
	if bin == "" {
		bin = filepath.Join(dir, "deepagents")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/deepagents").CombinedOutput(); err != nil {
			return "", 0, nil, fmt.Errorf("building: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, "serve", "--model", "replay:inline", "--db", filepath.Join(dir, "threads.db"), "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	url := regexp.MustCompile(`http://[0-9.:]+`).FindString(line)
	if err != nil || url == "" {
		cmd.Process.Kill()
		return "", 0, nil, fmt.Errorf("the server did not start: %q", line)
	}
	go io.Copy(io.Discard, stderr)
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	return url, cmd.Process.Pid, stop, nil
}

// load measures the server at url (process pid).
func load(url string, pid, n, idle, turns int) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n + 10}}

	base := rss(pid)
	fmt.Fprintf(os.Stderr, "server up, RSS %.1f MB\n", mb(base))

	// Idle threads: each created and given one short run, then left.
	start := time.Now()
	if err := parallel(idle, 32, func(i int) error {
		tid, err := createThread(client, url)
		if err != nil {
			return err
		}
		_, _, err = streamRun(client, url, tid, script(1, 0))
		return err
	}); err != nil {
		return fmt.Errorf("idle threads: %w", err)
	}
	afterIdle := rss(pid)
	fmt.Fprintf(os.Stderr, "%d idle threads in %v, RSS %.1f MB\n", idle, time.Since(start).Round(time.Millisecond), mb(afterIdle))

	// Running runs held open: every run's model waits until cancelled.
	held := make([]string, 0, n)
	var mu sync.Mutex
	if err := parallel(n, 64, func(i int) error {
		tid, err := createThread(client, url)
		if err != nil {
			return err
		}
		rid, err := createRun(client, url, tid, script(1, 600_000))
		if err != nil {
			return err
		}
		mu.Lock()
		held = append(held, tid+"/runs/"+rid)
		mu.Unlock()
		return nil
	}); err != nil {
		return fmt.Errorf("held runs: %w", err)
	}
	time.Sleep(2 * time.Second) // let the pool take up what it will
	withRuns := rss(pid)
	fmt.Fprintf(os.Stderr, "%d runs held (at most --max-runs of them running), RSS %.1f MB\n", n, mb(withRuns))
	if err := parallel(len(held), 64, func(i int) error {
		return post(client, url+"/threads/"+held[i]+"/cancel?wait=1", nil, http.StatusNoContent, nil)
	}); err != nil {
		return fmt.Errorf("cancelling: %w", err)
	}

	// The load: n clients at once, each a thread and a streamed run.
	before := rss(pid)
	first := make([]time.Duration, n)
	total := make([]time.Duration, n)
	start = time.Now()
	err := parallel(n, n, func(i int) error {
		t0 := time.Now()
		f, err := each(client, url, turns)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		first[i], total[i] = f, time.Since(t0)
		return nil
	})
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	peak := hwm(pid)
	fmt.Printf("| clients | turns per run | runs/s | first event p50 | p99 | completion p50 | p99 | RSS idle server | per idle thread | per held run | peak RSS under load |\n")
	fmt.Printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Printf("| %d | %d | %.0f | %s | %s | %s | %s | %.1f MB | %.1f KB | %.1f KB | %.1f MB |\n",
		n, turns, float64(n)/wall.Seconds(), pct(first, 50), pct(first, 99), pct(total, 50), pct(total, 99),
		mb(base), kb(afterIdle-base)/float64(idle), kb(withRuns-afterIdle)/float64(n), mb(max(peak, before)))
	return nil
}

// script is a replay:inline script of turns turns: files written, listed
// and read (tools both deep agents have), then an answer; the first turn
// waits delayMS.
func script(turns, delayMS int) string {
	var ts []map[string]any
	for i := range turns - 1 {
		var call map[string]any
		switch i % 3 {
		case 0:
			call = map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/notes/" + strconv.Itoa(i) + ".md", "content": strings.Repeat("notes ", 50)}}
		case 1:
			call = map[string]any{"name": "ls", "args": map[string]any{"path": "/notes"}}
		default:
			call = map[string]any{"name": "read_file", "args": map[string]any{"file_path": "/notes/" + strconv.Itoa(i-2) + ".md"}}
		}
		ts = append(ts, map[string]any{"content": "Working on step " + strconv.Itoa(i) + ".", "tool_calls": []any{call}})
	}
	ts = append(ts, map[string]any{"content": "Done."})
	if delayMS > 0 {
		ts[0]["delay_ms"] = delayMS
	}
	b, _ := json.Marshal(map[string]any{"turns": ts})
	return string(b)
}

// each is what one client of the load does: a run of turns turns, the
// time to its first event.
var each = streamLangGraph

// streamLangGraph creates a thread and streams a run on it.
func streamLangGraph(c *http.Client, url string, turns int) (time.Duration, error) {
	tid, err := createThread(c, url)
	if err != nil {
		return 0, err
	}
	f, events, err := streamRun(c, url, tid, script(turns, 0))
	if err == nil && events < 2*turns {
		err = fmt.Errorf("%d events", events)
	}
	return f, err
}

// rpc is a JSON-RPC request's body.
func rpc(method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return b
}

// streamA2A streams a task of a new context (named by the client when
// named), to its final status.
func streamA2A(c *http.Client, url string, turns int, named bool) (time.Duration, error) {
	id := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(rand.Int())
	msg := map[string]any{"kind": "message", "role": "user", "messageId": id,
		"parts": []any{map[string]any{"kind": "text", "text": script(turns, 0)}}}
	if named {
		msg["contextId"] = "ctx-" + id
	}
	t0 := time.Now()
	res, err := c.Post(url+"/a2a/deepagent", "application/json", bytes.NewReader(rpc("message/stream", map[string]any{"message": msg})))
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var first time.Duration
	events := 0
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if events == 0 {
			first = time.Since(t0)
		}
		events++
		if strings.Contains(data, `"error"`) || strings.Contains(data, `"failed"`) {
			return 0, errors.New("task failed: " + data)
		}
		if strings.Contains(data, `"final":true`) {
			if !strings.Contains(data, `"completed"`) {
				return 0, errors.New("task ended: " + data)
			}
			return first, nil
		}
	}
	return 0, fmt.Errorf("the stream ended after %d events without a final status: %v", events, sc.Err())
}

// callMCP calls the assistant's tool with a task (stateless MCP: no
// session to start), to its answer.
func callMCP(c *http.Client, url string, turns int) (time.Duration, error) {
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader(rpc("tools/call", map[string]any{"name": "deepagent", "arguments": map[string]any{"task": script(turns, 0)}})))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	t0 := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"status":"completed"`)) {
		return 0, fmt.Errorf("tools/call: %d %.300s", res.StatusCode, b)
	}
	return time.Since(t0), nil
}

func createThread(c *http.Client, url string) (string, error) {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	err := post(c, url+"/threads", map[string]any{"metadata": map[string]any{}}, http.StatusOK, &th)
	return th.ThreadID, err
}

func input(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"type": "human", "content": text}}}
}

func createRun(c *http.Client, url, tid, text string) (string, error) {
	var rn struct {
		RunID string `json:"run_id"`
	}
	err := post(c, url+"/threads/"+tid+"/runs", map[string]any{"assistant_id": "deepagent", "input": input(text), "stream_mode": []string{"values", "messages-tuple"}}, http.StatusOK, &rn)
	return rn.RunID, err
}

// streamRun streams a run as the Deep Agents UI does and returns the time
// to its first event and the number of events.
func streamRun(c *http.Client, url, tid, text string) (time.Duration, int, error) {
	b, _ := json.Marshal(map[string]any{"assistant_id": "deepagent", "input": input(text), "stream_mode": []string{"values", "messages-tuple"}, "on_disconnect": "continue"})
	t0 := time.Now()
	res, err := c.Post(url+"/threads/"+tid+"/runs/stream", "application/json", bytes.NewReader(b))
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		return 0, 0, fmt.Errorf("stream: %d %s", res.StatusCode, body)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var first time.Duration
	events := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "event: ") {
			if events == 0 {
				first = time.Since(t0)
			}
			events++
			if line == "event: error" {
				sc.Scan()
				return 0, 0, errors.New("run failed: " + sc.Text())
			}
		}
	}
	return first, events, sc.Err()
}

func post(c *http.Client, url string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	res, err := c.Post(url, "application/json", rd)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return fmt.Errorf("POST %s: %d %s", url, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// parallel runs f(0..n-1) on at most width goroutines; the first error wins.
func parallel(n, width int, f func(int) error) error {
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(i); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return first
}

func status(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v << 10
		}
	}
	return 0
}

func rss(pid int) int64 { return status(pid, "VmRSS") }
func hwm(pid int) int64 { return status(pid, "VmHWM") }

func mb(b int64) float64 { return float64(b) / (1 << 20) }
func kb(b int64) float64 { return float64(b) / (1 << 10) }

func pct(ds []time.Duration, p int) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, len(s)*p/100)
	return s[i].Round(100 * time.Microsecond).String()
}
