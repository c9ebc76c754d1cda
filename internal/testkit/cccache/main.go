// Command cccache is the C compiler of tools/mutants.py's trees: the real
// compiler, run with the arguments it is given, behind a cache of compiles
// shared by every tree of one run. A mutant changes one line, yet the go
// command compiles its whole cgo package again (pyext: about 240 compiles,
// most of them of Python.h); a compile whose flags and preprocessed source
// match an earlier one's gets that compile's object, output and status.
//
//	cccache CACHE_DIR TREE REAL_CC ARGS...
//
// TREE (the tree the compile runs in) is written out of the key, as are the
// go command's work folder and cgo's temporary input names, so that the same
// file compiled in another tree, or in a later go build, is a hit. Only
// `-c -o OUT FILE.c` compiles are cached; anything else (links, -E, the go
// command's -### probe) is the real compiler's alone.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: cccache CACHE_DIR TREE REAL_CC ARGS...")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2], os.Args[3], os.Args[4:]))
}

// separate are the options whose value is the next argument.
var separate = map[string]bool{"-I": true, "-o": true, "-x": true, "-include": true, "-isystem": true,
	"-iquote": true, "-idirafter": true, "-MF": true, "-MT": true, "-MQ": true, "-D": true, "-U": true,
	"-L": true, "-Xlinker": true}

// compile is a cacheable command line: its output file and its one C input.
type compile struct {
	out, input string
	rest       []string // the arguments less -c, the output and the input
}

// parse says whether args are one C file's compile to an object (ok).
func parse(args []string) (c compile, ok bool) {
	hasC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c":
			hasC = true
		case a == "-o" && i+1 < len(args):
			c.out = args[i+1]
			i++
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			c.out = a[2:]
		case separate[a] && i+1 < len(args):
			c.rest = append(c.rest, a, args[i+1])
			i++
		case a == "-" || a == "-E" || a == "-S" || a == "-M" || a == "-MM" || strings.HasPrefix(a, "-x"):
			return c, false // stdin, preprocessing or another language: not a plain compile
		case !strings.HasPrefix(a, "-"):
			if c.input != "" || !strings.HasSuffix(a, ".c") {
				return c, false
			}
			c.input = a
		default:
			c.rest = append(c.rest, a)
		}
	}
	return c, hasC && c.out != "" && c.input != ""
}

var (
	workDir  = regexp.MustCompile(`go-build[0-9]+(/b[0-9]+)?`)
	cgoInput = regexp.MustCompile(`cgo-gcc-input-[0-9]+`)
)

// normal writes out of s what differs between two runs of the same compile:
// the tree, the go command's work folder, cgo's temporary file names.
func normal(s, tree string) string {
	s = strings.ReplaceAll(s, tree, "<tree>")
	s = workDir.ReplaceAllString(s, "<work>")
	return cgoInput.ReplaceAllString(s, "<cgo-input>")
}

// key is the compile's cache key: its flags (less -frandom-seed, which the
// go command derives from the package's whole content and which changes no
// C object) and its preprocessed source, both written out of the tree.
func key(cc, tree string, c compile) (string, error) {
	pre := exec.Command(cc, append(append([]string{}, c.rest...), "-E", c.input)...)
	var src bytes.Buffer
	pre.Stdout = &src
	if err := pre.Run(); err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "cccache 1\x00%s\x00", cc)
	for _, a := range c.rest {
		if !strings.HasPrefix(a, "-frandom-seed=") {
			fmt.Fprintf(h, "%s\x00", normal(a, tree))
		}
	}
	h.Write([]byte(normal(src.String(), tree)))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// run compiles (or answers from the cache) and returns the exit status.
func run(cache, tree, cc string, args []string) int {
	c, ok := parse(args)
	if !ok || tree == "" {
		return passThrough(cc, args)
	}
	k, err := key(cc, tree, c)
	if err != nil { // the source does not preprocess: the compile says why
		return passThrough(cc, args)
	}
	entry := filepath.Join(cache, k)
	if status, err := replay(entry, tree, c); err == nil {
		return status
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cc, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	status := exitStatus(cmd.Run())
	os.Stdout.Write(stdout.Bytes())
	os.Stderr.Write(stderr.Bytes())
	if status >= 0 {
		store(cache, entry, tree, c, status, stdout.String(), stderr.String())
	}
	if status < 0 {
		return 1
	}
	return status
}

// exitStatus is the compile's exit status, or -1 where it did not run or
// was killed (not a result to keep).
func exitStatus(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	default:
		return -1
	}
}

// store keeps a finished compile under entry: whole or not at all (written
// beside it and renamed; a compile of the same key beside it wins alike).
func store(cache, entry, tree string, c compile, status int, stdout, stderr string) {
	tmp, err := os.MkdirTemp(cache, "tmp-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	if status == 0 {
		obj, err := os.ReadFile(c.out)
		if err != nil || os.WriteFile(filepath.Join(tmp, "obj"), obj, 0o644) != nil {
			return
		}
	}
	in := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, c.input, "<input>"), tree, "<tree>")
	}
	if os.WriteFile(filepath.Join(tmp, "stdout"), []byte(in(stdout)), 0o644) != nil ||
		os.WriteFile(filepath.Join(tmp, "stderr"), []byte(in(stderr)), 0o644) != nil ||
		os.WriteFile(filepath.Join(tmp, "status"), []byte(strconv.Itoa(status)), 0o644) != nil {
		return
	}
	_ = os.Rename(tmp, entry) // an entry already there is the same compile's
}

// replay answers c from entry: its object copied to c's output, its output
// written with this tree and input in them; an error where there is none.
func replay(entry, tree string, c compile) (int, error) {
	b, err := os.ReadFile(filepath.Join(entry, "status"))
	if err != nil {
		return 0, err
	}
	status, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, err
	}
	stdout, err1 := os.ReadFile(filepath.Join(entry, "stdout"))
	stderr, err2 := os.ReadFile(filepath.Join(entry, "stderr"))
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	if status == 0 {
		obj, err := os.ReadFile(filepath.Join(entry, "obj"))
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(c.out, obj, 0o644); err != nil {
			return 0, err
		}
	}
	out := func(s []byte) string {
		return strings.ReplaceAll(strings.ReplaceAll(string(s), "<input>", c.input), "<tree>", tree)
	}
	os.Stdout.WriteString(out(stdout))
	os.Stderr.WriteString(out(stderr))
	return status, nil
}

// passThrough runs the real compiler as is and returns its status.
func passThrough(cc string, args []string) int {
	cmd := exec.Command(cc, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if status := exitStatus(cmd.Run()); status >= 0 {
		return status
	}
	return 1
}
