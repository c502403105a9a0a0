// Checks tests/data/regex_cases.tsv against Go's own regexp package, the engine pprof
// matches drop_frames and keep_frames with: every expectation the C unit test holds our
// engine to is Go's answer too.
//
//	go run tests/regex_go.go tests/data/regex_cases.tsv
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// unescape reads the subject column: \n \t \\ and \xHH, as test_regex.c does.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'x':
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	bad, n := 0, 0
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if t == "" || t[0] == '#' {
			continue
		}
		col := strings.SplitN(t, "\t", 3)
		if len(col) != 3 {
			fmt.Printf("%d: not three columns\n", line)
			os.Exit(2)
		}
		n++
		re, err := regexp.Compile(col[1])
		got := "!"
		if err == nil {
			got = "0"
			if re.MatchString(unescape(col[2])) {
				got = "1"
			}
		}
		if got != col[0] {
			fmt.Printf("%d: %q on %q: Go says %s, the table %s (%v)\n", line, col[1], col[2], got, col[0], err)
			bad++
		}
	}
	fmt.Printf("%d cases, %d differ from Go's regexp\n", n, bad)
	if bad > 0 {
		os.Exit(1)
	}
}
