package main

// directives.go: the //pyext: directives of a Go package, read with go/ast:
// what Python sees, declared once beside each Go declaration.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// decl is one declared function, method, constructor or property accessor.
type decl struct {
	kind    string // function, init, method, property, setter, staticmethod, classmethod
	goName  string // the Go function or method name
	recv    string // the receiver's type name (methods), or the class (init, static, class methods)
	pyName  string // the Python name
	params  []goParam
	results []string // the result types, as written
	hasErr  bool     // the last result is error
	sig     []string // the Python parameters: "x", "a=2.0", "/", "*" (nil: the Go names)
	opts    []string // Go expressions of the options
	refs    []word   // the options that name parameters, as written
	doc     string
	pos     token.Position
}

type goParam struct{ name, typ string }

// class is one //pyext:class type.
type class struct {
	goName, pyName, doc string
	flags               []string // weakref, subclassable, equal_by_value
	pos                 token.Position
}

// pkg is what the directives of one package declare.
type pkg struct {
	dir, module, doc string
	declared         bool // a //pyext:module line
	freeThreaded     bool
	hasMain          bool
	imports          map[string]string // the imports the option expressions need, by name
	funcs            []*decl
	classes          []*class
}

// generated is the file the generator writes (and never reads back).
const generated = "pyext_gen.go"

// load reads the Go files of dir (not tests, not the generated file).
func load(dir string) (*pkg, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	p := &pkg{dir: dir, imports: map[string]string{}}
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasSuffix(base, "_test.go") || base == generated {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != "main" {
			return nil, fmt.Errorf("%s: package %s: a Python extension is a Go package main (built with -buildmode=c-shared)", name, f.Name.Name)
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			p.imports[importName(imp, path)] = path
		}
		if err := p.file(fset, f); err != nil {
			return nil, err
		}
	}
	if p.module == "" {
		p.module = filepath.Base(dir)
		if abs, err := filepath.Abs(dir); err == nil {
			p.module = filepath.Base(abs)
		}
	}
	return p, nil
}

func importName(imp *ast.ImportSpec, path string) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// file reads one file's directives.
func (p *pkg) file(fset *token.FileSet, f *ast.File) error {
	if d := directives(f.Doc); len(d) > 0 {
		if err := p.moduleDirective(d, f.Doc, fset.Position(f.Doc.Pos())); err != nil {
			return err
		}
	}
	for _, cg := range f.Comments { // a //pyext:module line may stand alone; nothing else may
		d := directives(cg)
		if cg == f.Doc || len(d) == 0 || attached(f, cg) {
			continue
		}
		if !strings.HasPrefix(d[0], "module") {
			return fmt.Errorf("%s: //pyext:%s belongs in the doc comment of a function, method or type, "+
				"directly above it", fset.Position(cg.Pos()), d[0])
		}
		if err := p.moduleDirective(d, nil, fset.Position(cg.Pos())); err != nil {
			return err
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "main" {
				p.hasMain = true
			}
			if err := p.funcDecl(fset, d); err != nil {
				return err
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				if l := directives(d.Doc); len(l) > 0 {
					return fmt.Errorf("%s: //pyext:%s on a %s: directives declare functions, methods and types",
						fset.Position(d.Pos()), l[0], d.Tok)
				}
				continue
			}
			for _, s := range d.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc
				}
				if err := p.typeDecl(fset, ts, doc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// attached says whether cg is some declaration's doc comment.
func attached(f *ast.File, cg *ast.CommentGroup) bool {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc == cg {
				return true
			}
		case *ast.GenDecl:
			if d.Doc == cg {
				return true
			}
		}
	}
	return false
}

func (p *pkg) moduleDirective(lines []string, doc *ast.CommentGroup, pos token.Position) error {
	for _, l := range lines {
		words := strings.Fields(l)
		if words[0] != "module" {
			return fmt.Errorf("%s: //pyext:%s on the package: only //pyext:module belongs there", pos, words[0])
		}
		if p.module != "" {
			return fmt.Errorf("%s: a second //pyext:module", pos)
		}
		if len(words) < 2 || !isDotted(words[1]) {
			return fmt.Errorf("%s: //pyext:module wants the module's Python name (pkg._core for a package's submodule)", pos)
		}
		p.module, p.declared = words[1], true
		for _, w := range words[2:] {
			if w != "free_threaded" {
				return fmt.Errorf("%s: //pyext:module: unknown flag %q (free_threaded is the one)", pos, w)
			}
			p.freeThreaded = true
		}
	}
	if doc != nil {
		p.doc = docText(doc)
	}
	return nil
}

// directives is the //pyext: lines of cg, without the prefix.
func directives(cg *ast.CommentGroup) []string {
	if cg == nil {
		return nil
	}
	var out []string
	for _, c := range cg.List {
		if rest, ok := strings.CutPrefix(c.Text, "//pyext:"); ok {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

// docText is a doc comment's text without its directives (go/ast drops
// lines of the //word: form already).
func docText(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.TrimSpace(cg.Text())
}

func (p *pkg) typeDecl(fset *token.FileSet, ts *ast.TypeSpec, doc *ast.CommentGroup) error {
	lines := directives(doc)
	if len(lines) == 0 {
		return nil
	}
	pos := fset.Position(ts.Pos())
	if len(lines) > 1 {
		return fmt.Errorf("%s: type %s: one //pyext:class line", pos, ts.Name.Name)
	}
	words := strings.Fields(lines[0])
	if words[0] != "class" {
		return fmt.Errorf("%s: type %s: //pyext:%s on a type (//pyext:class belongs there)", pos, ts.Name.Name, words[0])
	}
	c := &class{goName: ts.Name.Name, pyName: ts.Name.Name, doc: docText(doc), pos: pos}
	for _, w := range words[1:] {
		switch {
		case w == "weakref" || w == "subclassable" || w == "equal_by_value":
			c.flags = append(c.flags, w)
		case isIdent(w) && !pyKeywords[w]:
			c.pyName = w
		default:
			return fmt.Errorf("%s: //pyext:class %s: %q is neither a Python name nor weakref, subclassable or equal_by_value", pos, ts.Name.Name, w)
		}
	}
	if ts.TypeParams != nil {
		return fmt.Errorf("%s: //pyext:class %s: a generic type has no single Python class: declare an instance (type F64 = %s[float64])", pos, ts.Name.Name, ts.Name.Name)
	}
	p.classes = append(p.classes, c)
	return nil
}

func (p *pkg) funcDecl(fset *token.FileSet, fd *ast.FuncDecl) error {
	lines := directives(fd.Doc)
	if len(lines) == 0 {
		return nil
	}
	pos := fset.Position(fd.Pos())
	if fd.Type.TypeParams != nil {
		return fmt.Errorf("%s: %s: a generic function has no single Python function: declare an instance", pos, fd.Name.Name)
	}
	d := &decl{goName: fd.Name.Name, doc: docText(fd.Doc), pos: pos}
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		d.recv = typeName(fd.Recv.List[0].Type)
		d.params = append(d.params, goParam{name: "self", typ: exprText(fd.Recv.List[0].Type)}) // counted by the wrappers
	}
	for _, f := range fd.Type.Params.List {
		t := exprText(f.Type)
		if len(f.Names) == 0 {
			d.params = append(d.params, goParam{typ: t})
		}
		for _, n := range f.Names {
			d.params = append(d.params, goParam{name: n.Name, typ: t})
		}
	}
	if fd.Type.Results != nil {
		for _, f := range fd.Type.Results.List {
			n := max(1, len(f.Names))
			for range n {
				d.results = append(d.results, exprText(f.Type))
			}
		}
	}
	if k := len(d.results); k > 0 && d.results[k-1] == "error" {
		d.hasErr = true
	}
	if len(lines) > 1 {
		// Several lines: the first declares, the others add options.
		for _, l := range lines[1:] {
			lines[0] += " " + l
		}
	}
	if err := d.parse(lines[0]); err != nil {
		return fmt.Errorf("%s: %s: %w", pos, fd.Name.Name, err)
	}
	if err := d.check(); err != nil {
		return fmt.Errorf("%s: %s: %w", pos, fd.Name.Name, err)
	}
	p.funcs = append(p.funcs, d)
	return nil
}

// typeName is a receiver's type name: T for *T and T.
func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return exprText(e)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// isDotted says whether s is a module name: identifiers joined by dots.
func isDotted(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !isIdent(part) {
			return false
		}
	}
	return true
}
