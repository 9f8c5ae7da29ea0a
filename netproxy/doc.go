// Package netproxy gives sandboxed commands the network by name: a proxy on
// the host, outside the sandbox, that lets a command reach the hosts its
// rules allow and nothing else.
//
// The sandbox (sandbox.Bubblewrap with a Proxy) has a network namespace of
// its own, with only a loopback: no route out, no DNS. Each command gets a
// Unix socket of the proxy's (Proxy.Command), mounted into the sandbox, and
// runs behind a bridge (package bridge, run inside the sandbox by this
// program's own executable) that listens on the sandbox's loopback, at the
// addresses HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name (Env), and passes
// each connection to that socket. On the host the proxy reads what the
// command asks for: an HTTP request for http://host/..., a CONNECT
// host:port (HTTPS, or any TLS: it is never intercepted, but the server
// name of its ClientHello must be the host asked for), or a SOCKS5
// CONNECT by name. It decides by name (Rules: deny wins, then allow, then
// Config.Ask, else a refusal) and only then resolves the name, refusing
// addresses of this machine or its private networks, so an allowed name
// cannot lead to a loopback service. A refusal is an HTTP 403 whose
// status line and body say why (a SOCKS5 client gets "not allowed by
// ruleset").
//
// A tunnel to port 80 (CONNECT or SOCKS5) is read as HTTP requests, each
// of which must name the tunnel's host; one to port 443 must start with a
// ClientHello (read whole, however it is split into records) that names
// the host (with ECH, its outer name). A tunnel to a port a rule names is
// not looked into.
//
// What it promises: a command reaches only allowed names, on ports 80
// and 443 unless a rule names another, never by an IP address; a run's
// commands send at most Config.MaxBytesOut bytes together (Meter); a
// command has at most 256 connections and 4 questions at once, and a
// request's head at most 1 MiB. What it does not: a program that ignores
// the proxy variables reaches nothing (it is not a transparent proxy);
// inside TLS the Host a request names is not seen, nor ECH's inner name,
// so on a CDN that serves many sites from one name a tunnel to an allowed
// name can still ask for another (domain fronting, which some CDNs refuse
// themselves); and what an allowed host does with what it receives is
// that host's business (an allowed github.com takes a push as readily as
// a clone).
package netproxy
