// Package middleware holds the built-in middleware of the deep agent, one
// file each: todos (the write_todos planning tool), and the others the
// deepagents package stacks by default. Each is an agent.Middleware with the
// optional hooks it needs.
package middleware
