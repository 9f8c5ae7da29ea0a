// Command greet prints a greeting.
package main

import (
	"flag"
	"fmt"

	"example.com/greet/greeting"
)

func main() {
	name := flag.String("name", "world", "who to greet")
	flag.Parse()
	fmt.Println(greeting.For(*name))
}
