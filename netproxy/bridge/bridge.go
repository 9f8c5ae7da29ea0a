// Package bridge is the network bridge a sandboxed command runs behind
// (see package netproxy): imported for its side effect, it makes the
// program that imports it the bridge when started with Arg, before most
// of the program initialises.
//
//	import _ "github.com/deepagents-go/deepagents/netproxy/bridge"
//
// A program that gives a sandbox a netproxy.Proxy (sandbox.Bubblewrap's
// Proxy, with its Bridge left empty) imports it in its main package: the
// sandbox runs the program's own executable as the bridge. Go initialises
// packages in the order of their import paths, each after its imports,
// and this one imports only the standard library's process and network
// packages: as the bridge, the program runs before the packages whose
// paths sort after net's (and what they need) initialise, which skips
// the costliest of the CLI's (goldmark's, SQLite's).
//
// The bridge listens on the sandbox's loopback, on HTTPPort (HTTP and
// CONNECT) and SOCKSPort (SOCKS5), passes each connection to the proxy's
// Unix socket, runs the command as its child, and exits with the
// command's status.
package bridge

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
)

// Arg is the first argument that makes a program that imports this
// package run as the bridge: PROGRAM Arg SOCKET -- COMMAND...
const Arg = "__deepagents-net-bridge"

// The bridge's addresses on the sandbox's loopback.
const (
	HTTPPort  = 3128
	SOCKSPort = 1080
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(run(os.Args[2:]))
	}
}

// run listens on the loopback, starts the command and passes on its
// connections until it ends; it returns the command's exit status.
func run(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "deepagents network bridge: want SOCKET -- COMMAND...")
		return 125
	}
	socket, argv := args[0], args[2:]
	for _, port := range []int{HTTPPort, SOCKSPort} {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "deepagents network bridge: %v\n", err)
			return 125
		}
		go accept(ln, socket)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "deepagents network bridge: %v\n", err)
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 126
	}
	return 0
}

func accept(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go pass(c, socket)
	}
}

// pass passes one connection to the proxy's socket and back.
func pass(c net.Conn, socket string) {
	defer c.Close()
	up, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}
