package main

// check.go: what a declaration must be for its kind, and the Python
// parameter list it gets.

import (
	"fmt"
	"strings"
)

// maxParams, maxTupleParams and maxResults are the typed wrappers'
// (pyext.Func16, FuncE8R3): every declared function takes the compiled
// path, none reflection.
const (
	maxParams      = 16
	maxTupleParams = 8
	maxResults     = 3
)

func (d *decl) check() error {
	method := d.kind == "method" || d.kind == "property" || d.kind == "setter"
	switch {
	case method && d.recv == "":
		return fmt.Errorf("//pyext:%s is for a method (func (t *T) Name...)", d.kind)
	case d.kind == "function" && d.recv != "":
		return fmt.Errorf("//pyext:function on a method: use //pyext:method, on a type declared with //pyext:class")
	case d.kind == "init":
		if d.recv != "" {
			return fmt.Errorf("//pyext:init is for a function returning *T (or *T and an error), not a method")
		}
		if n := len(d.results); n == 0 || n > 2 || n == 2 && !d.hasErr || !strings.HasPrefix(d.results[0], "*") {
			return fmt.Errorf("//pyext:init: want a function returning *T or (*T, error), got (%s)", strings.Join(d.results, ", "))
		}
		d.recv = strings.TrimPrefix(d.results[0], "*")
	}
	if n := len(d.params); n > maxParams {
		return fmt.Errorf("%d parameters (the receiver counted): the compiled path takes at most %d; pass a struct or a slice", n, maxParams)
	}
	if r := d.values(); r > maxResults {
		return fmt.Errorf("%d results: the compiled path returns at most %d values (and an error); return a struct or a slice", r, maxResults)
	}
	if n, r := len(d.params), d.values(); r > 1 && n > maxTupleParams {
		return fmt.Errorf("%d parameters (the receiver counted) and %d results: the compiled path takes at most %d parameters with several results; pass a struct or a slice, or return one", n, r, maxTupleParams)
	}
	if d.kind == "property" && (len(d.params) != 1 || d.values() != 1 || d.hasErr) {
		return fmt.Errorf("//pyext:property: want a getter func (t *T) Name() R")
	}
	if d.kind == "setter" && (len(d.params) != 2 || d.values() != 0) {
		return fmt.Errorf("//pyext:setter: want func (t *T) SetName(v V) or func (t *T) SetName(v V) error")
	}
	if d.sig != nil && d.dunder() {
		return fmt.Errorf("%s takes its arguments as Python passes them: no signature", d.pyName)
	}
	params, err := d.pyParams()
	if err != nil {
		return err
	}
	names := map[string]bool{}
	var list []string
	for _, p := range params {
		if n, _, _ := strings.Cut(p, "="); strings.TrimSpace(n) != "/" && strings.TrimSpace(n) != "*" {
			names[strings.TrimSpace(n)] = true
			list = append(list, strings.TrimSpace(n))
		}
	}
	for _, w := range d.refs {
		parts := splitTop(w.group)
		if w.name == "require" {
			parts = parts[:1]
		}
		for _, n := range parts {
			if !names[n] {
				return fmt.Errorf("%s(%s): no parameter %q (its parameters are %s)", w.name, w.group, n, strings.Join(list, ", "))
			}
		}
	}
	return nil
}

// values is how many results Python gets (an error is raised, not returned).
func (d *decl) values() int {
	if d.hasErr {
		return len(d.results) - 1
	}
	return len(d.results)
}

// dunder says whether d is a special method (__len__, __add__, ...).
func (d *decl) dunder() bool {
	return d.kind == "method" && strings.HasPrefix(d.pyName, "__") && strings.HasSuffix(d.pyName, "__")
}

// pyParams is d's Python parameter list for pyext.Args: the signature's,
// else the Go parameters' names.
func (d *decl) pyParams() ([]string, error) {
	n := len(d.params)
	if d.recv != "" && d.kind != "init" && d.kind != "staticmethod" && d.kind != "classmethod" {
		n-- // the receiver is self
	}
	if d.sig != nil {
		count := 0
		for _, s := range d.sig {
			if s != "/" && s != "*" {
				count++
			}
			name, _, _ := strings.Cut(s, "=")
			if name = strings.TrimSpace(name); name != "/" && name != "*" && !isIdent(name) {
				return nil, fmt.Errorf("signature (%s): %q is not a parameter name", strings.Join(d.sig, ", "), name)
			}
		}
		if count != n {
			return nil, fmt.Errorf("signature (%s) names %d parameters; the Go function has %d", strings.Join(d.sig, ", "), count, n)
		}
		return d.sig, nil
	}
	var names []string
	for _, p := range d.params[len(d.params)-n:] {
		if p.name == "" || p.name == "_" {
			return nil, fmt.Errorf("a parameter without a name: name the parameters in Go, or give the Python signature (//pyext:%s %s(x, y))", d.kind, d.pyName)
		}
		names = append(names, p.name)
	}
	return names, nil
}

// wrapper is the typed wrapper of a function of n parameters (the receiver
// counted) and d's results: Proc2, Func1 (also for a lone error), FuncE1,
// Func2R2, FuncE3R3.
func (d *decl) wrapper() string {
	n, r := len(d.params), d.values()
	switch {
	case r == 0 && !d.hasErr:
		return fmt.Sprintf("Proc%d", n)
	case r == 0, r == 1 && !d.hasErr:
		return fmt.Sprintf("Func%d", n)
	case r == 1:
		return fmt.Sprintf("FuncE%d", n)
	case d.hasErr:
		return fmt.Sprintf("FuncE%dR%d", n, r)
	}
	return fmt.Sprintf("Func%dR%d", n, r)
}

// goFunc is d as a Go expression: the function, or the method expression.
func (d *decl) goFunc() string {
	if d.recv != "" && d.kind != "init" && d.kind != "staticmethod" && d.kind != "classmethod" {
		return fmt.Sprintf("(*%s).%s", d.recv, d.goName)
	}
	return d.goName
}

// typed is pyext.<wrapper>(<function>).
func (d *decl) typed() string { return fmt.Sprintf("pyext.%s(%s)", d.wrapper(), d.goFunc()) }

// pyDoc is d's docstring: its Go doc comment, as written (pyext adds the
// signature line).
func (d *decl) pyDoc() string { return d.doc }
