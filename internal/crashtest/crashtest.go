// Package crashtest checks that a durable checkpoint.Saver loses nothing
// it acknowledged when its process is killed with SIGKILL.
//
// The test binary re-executes itself as a child process (selected by an
// environment variable) that acquires a thread and puts checkpoints in a
// loop, printing each checkpoint's ID after Put returned. The parent reads
// some of them, kills the child, and then checks with a fresh Saver that
// every acknowledged checkpoint loads, that the head loads, and that the
// thread can be acquired again and continued.
package crashtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// EnvChild selects the child role; its value names the implementation.
const EnvChild = "DEEPAGENTS_CRASH_CHILD"

// Thread is the thread the child writes.
const Thread = "crash-thread"

// Child is the body of the child process's test function. It skips unless
// the process was started by Parent for name. open makes the Saver, from
// whatever environment the parent passed.
func Child(t *testing.T, name string, open func() (checkpoint.Saver, error)) {
	if os.Getenv(EnvChild) != name {
		t.Skip("helper process for the crash test")
	}
	s, err := open()
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	ctx := context.Background()
	if _, err := s.Acquire(ctx, Thread, nil); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("acquired")
	parent := ""
	deadline := time.Now().Add(2 * time.Minute) // in case the parent dies
	for i := 0; time.Now().Before(deadline); i++ {
		id := fmt.Sprintf("%08d", i)
		cp := &checkpoint.Checkpoint{ThreadID: Thread, ID: id, ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: 2 * i, Messages: stepMessages(i)}}
		if i%5 == 0 {
			cp.Files = map[string]*thread.FileData{"/notes.md": {Content: strings.Repeat("note ", i+1), ModifiedAt: time.Now()}}
		}
		if err := s.Put(ctx, cp); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("ack", id) // only after Put returned
		parent = id
	}
	os.Exit(3)
}

func stepMessages(i int) []llm.Message {
	return []llm.Message{
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text(fmt.Sprintf("step %d: reading the file", i))},
			ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "read_file", Args: []byte(`{"file_path":"/notes.md"}`)}}},
		llm.ToolResult(fmt.Sprintf("call_%d", i), "read_file", strings.Repeat("content ", 40), false),
	}
}

// Parent runs childTest (the name of the test function calling Child) in a
// child process with env added to its environment, kills it after acks
// acknowledged checkpoints, and checks what survived with the Saver that
// open returns (a new one, as another process would have) and closes its
// database with the function open returns with it.
func Parent(t *testing.T, name, childTest string, env []string, acks int, open func(t *testing.T) (s checkpoint.Saver, closeDB func() error)) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+childTest+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(append(os.Environ(), EnvChild+"="+name), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	observer, closeObserver := open(t)
	var acked []string
	timeout := time.After(2 * time.Minute)
	for len(acked) < acks {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("child exited after %d acks", len(acked))
			}
			switch {
			case line == "acquired":
				// The child holds the thread: another process is refused.
				_, err := observer.Acquire(context.Background(), Thread, nil)
				if !errors.Is(err, checkpoint.ErrBusy) {
					t.Errorf("Acquire while the child runs = %v, want ErrBusy", err)
				}
			case strings.HasPrefix(line, "ack "):
				acked = append(acked, strings.TrimPrefix(line, "ack "))
			case strings.HasPrefix(line, "error"):
				t.Fatalf("child: %s", line)
			}
		case <-timeout:
			t.Fatalf("timed out after %d acks", len(acked))
		}
	}
	// Kill it mid-run: it is busy putting the next checkpoints.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	_ = cmd.Wait()
	// Lines printed before the kill are acknowledgements too.
	for line := range lines {
		if strings.HasPrefix(line, "ack ") && !strings.Contains(line, "\x00") {
			if id := strings.TrimPrefix(line, "ack "); len(id) == 8 {
				acked = append(acked, id)
			}
		}
	}
	_ = closeObserver()
	t.Logf("child killed after %d acknowledged checkpoints", len(acked))

	s, closeDB := open(t)
	defer closeDB()
	ctx := context.Background()
	for _, id := range acked {
		snap, err := s.Load(ctx, Thread, id)
		if err != nil {
			t.Fatalf("acknowledged checkpoint %s: %v", id, err)
		}
		i, _ := strconv.Atoi(id)
		if len(snap.Messages) != 2*(i+1) {
			t.Fatalf("checkpoint %s has %d messages, want %d", id, len(snap.Messages), 2*(i+1))
		}
	}
	head, err := s.Load(ctx, Thread, "")
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	last, _ := strconv.Atoi(acked[len(acked)-1])
	if head.Step < last {
		t.Fatalf("head is step %d, before the last acknowledged %d", head.Step, last)
	}
	if _, ok := head.Files["/notes.md"]; !ok {
		t.Errorf("head lost /notes.md")
	}
	// The dead child's hold does not block the thread.
	start := time.Now()
	var lease checkpoint.Lease
	for {
		lease, err = s.Acquire(ctx, Thread, nil)
		if err == nil || !errors.Is(err, checkpoint.ErrBusy) || time.Since(start) > 30*time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Acquire after the kill: %v", err)
	}
	t.Logf("thread re-acquired %v after the kill", time.Since(start).Round(time.Millisecond))
	next := &checkpoint.Checkpoint{ThreadID: Thread, ID: "continued", ParentID: head.ID, Step: head.Step + 1,
		Delta: checkpoint.Delta{Keep: len(head.Messages), Messages: []llm.Message{llm.UserText("still here?")}}}
	if err := s.Put(ctx, next); err != nil {
		t.Fatalf("Put after the kill: %v", err)
	}
	snap, err := s.Load(ctx, Thread, "")
	if err != nil || snap.ID != "continued" || len(snap.Messages) != len(head.Messages)+1 {
		t.Fatalf("Load after continuing: %v, %v", snap, err)
	}
	if err := lease.Release(ctx, checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
}
