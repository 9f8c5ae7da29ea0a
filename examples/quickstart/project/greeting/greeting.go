// Package greeting builds greetings.
package greeting

// For returns the greeting for name.
func For(name string) string {
	return "Hello, " + name + "!"
}
