// Package rusage reads peak resident set sizes for the benchmark programs
// under bench/: of the calling process, and of a child that has exited.
// Both are 0 where the operating system does not report them.
package rusage
