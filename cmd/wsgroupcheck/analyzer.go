package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

const (
	wsgroupPath  = "github.com/go-steal/steal/wsgroup"
	errgroupPath = "golang.org/x/sync/errgroup"
	migrateURL   = "https://github.com/go-steal/steal/blob/main/migrate.md#"
)

// Analyzer reports what changes when code moves from errgroup to wsgroup.
var Analyzer = &analysis.Analyzer{
	Name: "wsgroupcheck",
	Doc: `report what to check when migrating from golang.org/x/sync/errgroup to wsgroup

wsgroupcheck reports imports of golang.org/x/sync/errgroup (with a fix that
imports github.com/go-steal/steal/wsgroup under the name errgroup), and, for
groups of either package, code that relies on what differs: SetLimit after
Go or TryGo on the same group with no Wait between; runtime.Goexit,
t.FailNow, t.Fatal and t.Skip in a task; runtime.LockOSThread or
runtime.UnlockOSThread without its counterpart in a task; and For, ForEach
or Map bodies that wait on a channel shared by the loop.`,
	URL:      "https://github.com/go-steal/steal/blob/main/migrate.md",
	Requires: []*analysis.Analyzer{inspect.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	checkImports(pass)
	checkSetLimit(pass, ins)
	checkTasks(pass, ins)
	return nil, nil
}

func link(anchor string) string { return "; see " + migrateURL + anchor }

// checkImports reports each import of errgroup, with a fix that imports
// wsgroup under the name the file uses for errgroup: wsgroup has errgroup's
// API, so the file compiles unchanged.
func checkImports(pass *analysis.Pass) {
	for _, f := range pass.Files {
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil || path != errgroupPath {
				continue
			}
			name := "errgroup"
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if name == "." {
				// wsgroup exports names errgroup does not (For, Map,
				// PanicMode...), which may collide in a dot-importing file.
				pass.Report(analysis.Diagnostic{
					Pos: spec.Pos(),
					End: spec.End(),
					Message: "errgroup can be replaced by wsgroup by changing this import to " +
						`. "` + wsgroupPath + `"; it is not changed by -fix, since wsgroup exports more names (For, ForEach, Map, ...) that may collide with this file's` +
						link("the-one-line-change"),
				})
				continue
			}
			newSpec := name + ` "` + wsgroupPath + `"`
			pass.Report(analysis.Diagnostic{
				Pos: spec.Pos(),
				End: spec.End(),
				Message: "errgroup can be replaced by wsgroup by changing this import to " + newSpec +
					": the API is the same, so the uses need no edit; then run go mod tidy and check the differences migrate.md lists" +
					link("the-one-line-change"),
				SuggestedFixes: []analysis.SuggestedFix{{
					Message: "Import " + wsgroupPath + " as " + name,
					TextEdits: []analysis.TextEdit{{
						Pos:     spec.Pos(),
						End:     spec.Path.End(),
						NewText: []byte(newSpec),
					}},
				}},
			})
		}
	}
}

// groupMethod returns the name of the method of errgroup.Group or
// wsgroup.Group that call calls, or "".
func groupMethod(info *types.Info, call *ast.CallExpr) string {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok {
		return ""
	}
	recv := fn.Signature().Recv()
	if recv == nil {
		return ""
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.Obj().Name() != "Group" || named.Obj().Pkg() == nil {
		return ""
	}
	switch named.Obj().Pkg().Path() {
	case wsgroupPath, errgroupPath:
		return fn.Name()
	}
	return ""
}

// pkgFunc reports whether call calls the package-level function pkg.name
// (generic functions included, whatever their instantiation).
func pkgFunc(info *types.Info, call *ast.CallExpr, pkg string, names ...string) (string, bool) {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != pkg || fn.Signature().Recv() != nil {
		return "", false
	}
	for _, n := range names {
		if fn.Name() == n {
			return n, true
		}
	}
	return "", false
}

// varKey identifies the variable, or chain of field selections from a
// variable, that e denotes: the same key means the same group. It returns ""
// for any other expression (a call, an index, ...), which is never matched.
func varKey(info *types.Info, e ast.Expr) string {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		if v, ok := info.ObjectOf(e).(*types.Var); ok {
			return fmt.Sprintf("%p", v)
		}
	case *ast.StarExpr:
		return varKey(info, e.X)
	case *ast.UnaryExpr:
		if e.Op == token.AND {
			return varKey(info, e.X)
		}
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[e]; ok {
			if sel.Kind() != types.FieldVal {
				return ""
			}
			if x := varKey(info, e.X); x != "" {
				return fmt.Sprintf("%s.%p", x, sel.Obj())
			}
			return ""
		}
		// A qualified identifier: a package-level variable of another package.
		if v, ok := info.Uses[e.Sel].(*types.Var); ok {
			return fmt.Sprintf("%p", v)
		}
	}
	return ""
}

// A step is a statement's place in a statement list: the list's owner (a
// *ast.BlockStmt, *ast.CaseClause or *ast.CommClause) and its index there.
type step struct {
	owner ast.Node
	index int
}

// stmtPath returns the places, outermost first, of the statements that
// enclose the last node of stack.
func stmtPath(stack []ast.Node) []step {
	var path []step
	for i := 0; i+1 < len(stack); i++ {
		var list []ast.Stmt
		switch p := stack[i].(type) {
		case *ast.BlockStmt:
			switch c := stack[i+1].(type) {
			case *ast.CaseClause, *ast.CommClause:
				// The clauses of a switch or select are alternatives,
				// not a sequence: each is a place of its own.
				path = append(path, step{c, -1})
				continue
			}
			list = p.List
		case *ast.CaseClause:
			list = p.Body
		case *ast.CommClause:
			list = p.Body
		default:
			continue
		}
		for j, s := range list {
			if s == stack[i+1] {
				path = append(path, step{stack[i], j})
				break
			}
		}
	}
	return path
}

// runsBefore reports whether a statement at path a, which comes before one
// at path b in the source, runs before it on the way there: a is an earlier
// statement of a list that holds b, or a statement whose part that is not a
// nested list holds a (an if's condition, say) and that encloses b. It is
// false when they are in different branches of an if, switch or select.
func runsBefore(a, b []step) bool {
	for i := range a {
		if i >= len(b) {
			return false
		}
		if a[i] != b[i] {
			return a[i].owner == b[i].owner && a[i].index < b[i].index
		}
	}
	return true
}

type groupEvent struct {
	call *ast.CallExpr
	path []step
}

// checkSetLimit reports x.SetLimit(n) that follows x.Go or x.TryGo in the same
// function with no x.Wait, nor an assignment to x, in between (in the source).
func checkSetLimit(pass *analysis.Pass, ins *inspector.Inspector) {
	info := pass.TypesInfo

	// The groups that each function literal assigned to a variable waits
	// for: a call of the variable, such as a test's wait := func() { ...
	// g.Wait() ... }, counts as a Wait.
	closureWaits := map[types.Object][]string{}
	addClosure := func(id *ast.Ident, rhs ast.Expr) {
		lit, ok := ast.Unparen(rhs).(*ast.FuncLit)
		obj := info.ObjectOf(id)
		if !ok || obj == nil {
			return
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && groupMethod(info, call) == "Wait" {
				if k := varKey(info, ast.Unparen(call.Fun).(*ast.SelectorExpr).X); k != "" {
					closureWaits[obj] = append(closureWaits[obj], k)
				}
			}
			return true
		})
	}
	ins.Preorder([]ast.Node{(*ast.AssignStmt)(nil), (*ast.ValueSpec)(nil)}, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, lhs := range n.Lhs {
					if id, ok := ast.Unparen(lhs).(*ast.Ident); ok {
						addClosure(id, n.Rhs[i])
					}
				}
			}
		case *ast.ValueSpec:
			if len(n.Names) == len(n.Values) {
				for i, id := range n.Names {
					addClosure(id, n.Values[i])
				}
			}
		}
	})

	ins.Preorder([]ast.Node{(*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)}, func(n ast.Node) {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.FuncDecl:
			body = n.Body
		case *ast.FuncLit:
			body = n.Body
		}
		if body == nil {
			return
		}

		gos := map[string][]groupEvent{}
		type limitEvent struct {
			key string
			groupEvent
		}
		var limits []limitEvent
		// Positions that separate a Go from a later SetLimit: a Wait, or an
		// assignment of the variable, anywhere in the function (nested
		// literals included: a goroutine may call Wait while this one
		// waits for it).
		separators := map[string][]token.Pos{}
		var stack []ast.Node
		depth := 0 // of nested function literals
		ast.Inspect(body, func(n ast.Node) bool {
			if n == nil {
				if _, ok := stack[len(stack)-1].(*ast.FuncLit); ok {
					depth--
				}
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			switch n := n.(type) {
			case *ast.FuncLit:
				depth++
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					if k := varKey(info, lhs); k != "" {
						separators[k] = append(separators[k], n.Pos())
					}
				}
			case *ast.CallExpr:
				if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
					for _, k := range closureWaits[info.Uses[id]] {
						separators[k] = append(separators[k], n.Pos())
					}
				}
				m := groupMethod(info, n)
				if m == "" {
					// A function given the group may wait for it.
					for _, arg := range n.Args {
						if k := varKey(info, arg); k != "" {
							separators[k] = append(separators[k], n.Pos())
						}
					}
					break
				}
				sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
				if !ok {
					break
				}
				if m == "" {
					break
				}
				k := varKey(info, sel.X)
				if k == "" {
					break
				}
				switch m {
				case "Wait":
					separators[k] = append(separators[k], n.Pos())
				case "Go", "TryGo":
					if depth == 0 {
						gos[k] = append(gos[k], groupEvent{n, stmtPath(stack)})
					}
				case "SetLimit":
					if depth > 0 || len(n.Args) != 1 || deferred(stack) {
						break
					}
					// Removing the limit is allowed while tasks run.
					if tv, ok := info.Types[n.Args[0]]; ok && tv.Value != nil &&
						tv.Value.Kind() == constant.Int && constant.Sign(tv.Value) < 0 {
						break
					}
					limits = append(limits, limitEvent{k, groupEvent{n, stmtPath(stack)}})
				}
			}
			return true
		})

		// separated reports whether a separator of the group k, or of a
		// variable k is a field of, stands between from and to.
		separated := func(k string, from, to token.Pos) bool {
			for sk, ps := range separators {
				if sk != k && !strings.HasPrefix(k, sk+".") {
					continue
				}
				for _, p := range ps {
					if p > from && p < to {
						return true
					}
				}
			}
			return false
		}
		for _, s := range limits {
			var last *groupEvent
			for i := range gos[s.key] {
				g := &gos[s.key][i]
				if g.call.Pos() < s.call.Pos() && runsBefore(g.path, s.path) &&
					!separated(s.key, g.call.Pos(), s.call.Pos()) {
					last = g
				}
			}
			if last == nil {
				continue
			}
			sel := ast.Unparen(s.call.Fun).(*ast.SelectorExpr)
			pass.Report(analysis.Diagnostic{
				Pos: s.call.Pos(),
				End: s.call.End(),
				Message: fmt.Sprintf("SetLimit on %s after a %s on it (line %d) with no Wait between: wsgroup panics when SetLimit is called while tasks of the group are active, whether or not a limit was set (errgroup panics only when a limit was already set); call SetLimit before the first Go, or after Wait returns",
					types.ExprString(sel.X), ast.Unparen(last.call.Fun).(*ast.SelectorExpr).Sel.Name,
					pass.Fset.Position(last.call.Pos()).Line) + link("setlimit-after-go"),
			})
		}
	})
}

// deferred reports whether the last node of stack is the call of a defer
// statement, which runs when the function returns, not where it stands.
func deferred(stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	d, ok := stack[len(stack)-2].(*ast.DeferStmt)
	return ok && d.Call == stack[len(stack)-1]
}
