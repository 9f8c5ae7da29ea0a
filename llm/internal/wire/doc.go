// Package wire holds small helpers shared by the provider packages: tool
// argument normalisation, tool-call ids and retry-after parsing.
package wire
