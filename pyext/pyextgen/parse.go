package main

// parse.go: one directive line of a function or method: its kind, Python
// name, signature and options.

import (
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"regexp"
	"strings"
	"unicode"
)

// token is one word of a directive: a name, a parenthesized group, or a
// name and its group (writes(x, y)).
type word struct{ name, group string }

// words splits a directive line, keeping each parenthesized group whole.
func words(s string) ([]word, error) {
	var out []word
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ' || s[i] == '\t':
			i++
			continue
		}
		w := word{}
		j := i
		for j < len(s) && s[j] != '(' && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		w.name = s[i:j]
		if j < len(s) && s[j] == '(' {
			end, err := closing(s, j)
			if err != nil {
				return nil, err
			}
			w.group = s[j+1 : end]
			j = end + 1
		}
		out = append(out, w)
		i = j
	}
	return out, nil
}

// scan calls at for each byte of s outside quotes, with the depth of
// brackets after it; at returning false stops the scan.
func scan(s string, at func(i int, c byte, depth int) bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"':
			quote = c
			continue
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		}
		if !at(i, c, depth) {
			return
		}
	}
}

// closing is the index of the parenthesis closing the one at open (quotes
// respected).
func closing(s string, open int) (int, error) {
	end := -1
	scan(s[open:], func(i int, c byte, depth int) bool {
		if depth == 0 && (c == ')' || c == ']' || c == '}') {
			end = open + i
			return false
		}
		return true
	})
	if end < 0 {
		return 0, fmt.Errorf("unbalanced parentheses in %q", s[open:])
	}
	return end, nil
}

// splitTop splits s at the commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	start := 0
	scan(s, func(i int, c byte, depth int) bool {
		if c == ',' && depth == 0 {
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
		return true
	})
	if t := strings.TrimSpace(s[start:]); t != "" || len(out) > 0 {
		out = append(out, t)
	}
	return out
}

var kinds = map[string]bool{"function": true, "init": true, "method": true, "property": true, "setter": true,
	"staticmethod": true, "classmethod": true}

// parse reads d's directive line.
func (d *decl) parse(line string) error {
	ws, err := words(line)
	if err != nil {
		return err
	}
	d.kind = ws[0].name
	if !kinds[d.kind] || ws[0].group != "" {
		return fmt.Errorf("//pyext:%s: unknown directive (function, method, init, property, setter, staticmethod, classmethod)", ws[0].name)
	}
	ws = ws[1:]
	if (d.kind == "staticmethod" || d.kind == "classmethod") && d.recv == "" {
		if len(ws) == 0 || ws[0].group != "" {
			return fmt.Errorf("//pyext:%s wants its class first: //pyext:%s Class or Class.name", d.kind, d.kind)
		}
		cls, name, _ := strings.Cut(ws[0].name, ".")
		d.recv, d.pyName = cls, name
		ws = ws[1:]
	}
	// A Python name, unless the first word is an option or the signature.
	if len(ws) > 0 && ws[0].name != "" && !isOption(ws[0].name) && d.pyName == "" {
		d.pyName = ws[0].name
		if ws[0].group != "" {
			d.sig = splitTop(ws[0].group)
			if d.sig == nil {
				d.sig = []string{}
			}
		}
		ws = ws[1:]
	}
	if len(ws) > 0 && ws[0].name == "" && d.sig == nil { // the signature, after a space
		d.sig = splitTop(ws[0].group)
		if d.sig == nil {
			d.sig = []string{}
		}
		ws = ws[1:]
	}
	if d.pyName == "" {
		d.pyName = snake(d.goName)
		if d.kind == "property" || d.kind == "setter" {
			d.pyName = propertyName(d.goName)
		}
	}
	if !isIdent(d.pyName) {
		return fmt.Errorf("%q is not a Python name", d.pyName)
	}
	if pyKeywords[d.pyName] {
		return fmt.Errorf("%q is a Python keyword: no function, method or class can be called so", d.pyName)
	}
	if opt := nearOption(d.pyName); opt != "" && d.pyName != snake(d.goName) {
		return fmt.Errorf("%q, taken as the Python name, is close to the option %s: a name that close to an "+
			"option is refused (the name comes first: //pyext:%s name %s(...))", d.pyName, opt, d.kind, opt)
	}
	for _, w := range ws {
		o, err := option(w)
		if err != nil {
			return err
		}
		d.opts = append(d.opts, o)
		if w.name != "nogil" {
			d.refs = append(d.refs, w)
		}
	}
	return nil
}

func isOption(name string) bool {
	switch name {
	case "nogil", "writes", "convert", "convert_write_back", "require":
		return true
	}
	return false
}

// reqNames are pyext's requirement constructors, written bare in require().
var reqNames = regexp.MustCompile(`(^|[^.\w])(Shape|Ndim|DTypeIs|CContig|FContig|Strided|OnCPU|OnCUDA|AnyDevice)\b`)

// bareCall is a requirement written without a package: Shape(-1, 3), CContig.
var bareCall = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(\(|$)`)

var knownReqs = map[string]bool{"Shape": true, "Ndim": true, "DTypeIs": true, "CContig": true, "FContig": true,
	"Strided": true, "OnCPU": true, "OnCUDA": true, "AnyDevice": true}

// option is the Go expression of one option word.
func option(w word) (string, error) {
	quoted := func(names []string) (string, error) {
		if len(names) == 0 {
			return "", fmt.Errorf("%s() names no parameter", w.name)
		}
		q := make([]string, len(names))
		for i, n := range names {
			if !isIdent(n) {
				return "", fmt.Errorf("%s(%s): %q is not a parameter name", w.name, w.group, n)
			}
			q[i] = fmt.Sprintf("%q", n)
		}
		return strings.Join(q, ", "), nil
	}
	switch w.name {
	case "nogil":
		if w.group != "" {
			return "", fmt.Errorf("nogil takes no arguments")
		}
		return "pyext.ReleaseGIL", nil
	case "writes", "convert", "convert_write_back":
		names, err := quoted(splitTop(w.group))
		if err != nil {
			return "", err
		}
		fn := map[string]string{"writes": "Writes", "convert": "Convert", "convert_write_back": "ConvertWriteBack"}[w.name]
		return fmt.Sprintf("pyext.%s(%s)", fn, names), nil
	case "require":
		parts := splitTop(w.group)
		if len(parts) < 2 {
			return "", fmt.Errorf("require(%s): want require(param, Shape(-1, 3), ...)", w.group)
		}
		name, err := quoted(parts[:1])
		if err != nil {
			return "", err
		}
		reqs := make([]string, len(parts)-1)
		for i, r := range parts[1:] {
			if m := bareCall.FindStringSubmatch(r); m != nil && !knownReqs[m[1]] {
				return "", fmt.Errorf("require(%s): unknown requirement %s (Shape, Ndim, DTypeIs, CContig, FContig, "+
					"Strided, OnCPU, OnCUDA, AnyDevice, or a qualified Go expression of a pyext.Req)", w.group, m[1])
			}
			reqs[i] = reqNames.ReplaceAllString(r, "${1}pyext.$2")
		}
		return fmt.Sprintf("pyext.Require(%s, %s)", name, strings.Join(reqs, ", ")), nil
	}
	return "", fmt.Errorf("unknown option %q (nogil, writes(...), convert(...), convert_write_back(...), require(...))", w.name)
}

// snake is a Go name in Python's style: MeanStd → mean_std, Sum64 → sum64,
// ParseURL → parse_url.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]))
			nextLower := i > 0 && i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(c))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// propertyName is a getter's or setter's Python name: Count and SetCount
// are count.
func propertyName(goName string) string {
	if rest, ok := strings.CutPrefix(goName, "Set"); ok && rest != "" && unicode.IsUpper([]rune(rest)[0]) {
		goName = rest
	}
	return snake(goName)
}

// exprText is a type expression as written.
func exprText(e ast.Expr) string {
	var b strings.Builder
	_ = printer.Fprint(&b, token.NewFileSet(), e)
	return b.String()
}

// pyKeywords are Python's reserved words (and soft keywords a stub cannot
// name a def after).
var pyKeywords = map[string]bool{"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true, "del": true,
	"elif": true, "else": true, "except": true, "finally": true, "for": true, "from": true, "global": true,
	"if": true, "import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true}

// nearOption is the option a name is a near miss of (a misspelt option
// would otherwise become the Python name), "" for none.
func nearOption(name string) string {
	for _, opt := range []string{"nogil", "writes", "convert", "require", "convert_write_back"} {
		if name != opt && distance(name, opt) <= 2 {
			return opt
		}
	}
	return ""
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
