// Command hello is the program TestProgram builds.
package main

import "fmt"

func main() { fmt.Println("hello") }
