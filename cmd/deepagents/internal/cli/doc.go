// Package cli implements the deepagents command. It lives apart from
// package main so that tests can run commands in-process.
package cli
