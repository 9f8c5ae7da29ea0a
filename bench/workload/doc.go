// Package workload defines the agent workload that bench/compare runs in
// every implementation (deepagents-go, the JavaScript DeepAgents and Eino's
// deep agent): n tool steps driven by a scripted model, then a final answer.
//
// Step i (0-based) calls, by i mod 3:
//
//	0  write_file  {"file_path": P(w), "content": C(w)}   a new file each time
//	1  read_file   {"file_path": P(w)}                    the file just written
//	2  ls          {"path": D(w)}                          its directory
//
// where w = i/3 numbers the write, D(w) = "/d{w/FilesPerDir}",
// P(w) = D(w)+"/f{w}.txt" and C(w) = "file {w}: the quick brown fox jumps
// over the lazy dog\n". The call id is "call_{i}". After the n tool steps
// the model answers "done", so a run makes n+1 model calls.
//
// Why this shape: every tool result is small and bounded (a 56-byte file, a
// listing of at most FilesPerDir entries), whatever n is. Writes fill one
// directory at a time, FilesPerDir files each, so the directory that ls
// lists never holds more than FilesPerDir files, while the total number of
// files grows as n/3. Any growth of the cost per step with n is therefore
// the implementation's own: its conversation history (which grows in every
// implementation by one assistant and one tool message per step) and its
// file store (a backend that scans every file to list one directory pays
// for the total, not for what it lists).
//
// Every scripted turn reports usage (100 input and 10 output tokens), as a
// provider would, and the model declares a context window large enough that
// no implementation summarizes: summarization would need extra, unscripted
// model calls.
//
// The JavaScript and Eino drivers (bench/js/driver.mjs, bench/eino) build
// the same calls in their own code; bench/compare checks that all three
// produce identical calls (see Canonical).
package workload
