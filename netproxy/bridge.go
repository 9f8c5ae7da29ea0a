package netproxy

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

// BridgeArg is the first argument that makes a program run as the bridge
// (see MaybeBridge).
const BridgeArg = "__deepagents-net-bridge"

// The bridge's addresses on the sandbox's loopback: HTTP (and CONNECT)
// on HTTPPort, SOCKS5 on SOCKSPort. Both reach the same proxy, which
// tells the two apart by their first byte.
const (
	HTTPPort  = 3128
	SOCKSPort = 1080
)

// Env returns the environment that sends a command's connections to the
// bridge: the proxy variables curl, git, Go, npm, pip and most HTTP
// clients read, in both cases.
func Env() []string {
	httpProxy := "http://127.0.0.1:" + strconv.Itoa(HTTPPort)
	socks := "socks5h://127.0.0.1:" + strconv.Itoa(SOCKSPort)
	noProxy := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + httpProxy, "http_proxy=" + httpProxy,
		"HTTPS_PROXY=" + httpProxy, "https_proxy=" + httpProxy,
		"ALL_PROXY=" + socks, "all_proxy=" + socks,
		"NO_PROXY=" + noProxy, "no_proxy=" + noProxy,
	}
}

// BridgeCommand returns the command line that runs argv behind the
// bridge: exe (a program that calls MaybeBridge first, as the sandbox
// sees it) listening on the loopback and passing each connection to the
// Unix socket at socket.
func BridgeCommand(exe, socket string, argv ...string) []string {
	return append([]string{exe, BridgeArg, socket, "--"}, argv...)
}

// MaybeBridge runs this process as the bridge, and exits, when its
// arguments are those of BridgeCommand; otherwise it returns at once. A
// program that gives sandboxed commands a Proxy calls it first thing in
// main (the deepagents CLI does).
func MaybeBridge() {
	if len(os.Args) > 1 && os.Args[1] == BridgeArg {
		os.Exit(runBridge(os.Args[2:]))
	}
}

// runBridge listens on the loopback, starts the command and passes on
// its connections until it ends; it returns the command's exit status.
func runBridge(args []string) int {
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
		go bridgeAccept(ln, socket)
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

func bridgeAccept(ln net.Listener, socket string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go bridgeConn(c, socket)
	}
}

// bridgeConn passes one connection to the proxy's socket and back.
func bridgeConn(c net.Conn, socket string) {
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
