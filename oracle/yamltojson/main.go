// Command yamltojson prints what sigs.k8s.io/yaml.YAMLToJSON (the re-read Flux runs after
// postBuild substitution) makes of each JSON-quoted YAML text on standard input, one per
// line: the JSON, or "error: " and the error. A tool for checking one input by hand.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	for in.Scan() {
		var text string
		if err := json.Unmarshal(in.Bytes(), &text); err != nil {
			fmt.Fprintf(os.Stderr, "yamltojson: each line must be a JSON string: %v\n", err)
			os.Exit(2)
		}
		out, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			fmt.Printf("error: %v\n", err)
		} else {
			fmt.Printf("%s\n", out)
		}
	}
}
