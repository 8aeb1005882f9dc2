package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"
)

// A task is a function literal passed directly to a group's Go or TryGo, or
// as the body of wsgroup.For, ForEach or Map.
type task struct {
	lit  *ast.FuncLit
	call *ast.CallExpr // the Go, TryGo or loop call
	loop string        // "For", "ForEach" or "Map" for a loop body, or ""
}

// noun is what the task is called in messages.
func (t *task) noun() string {
	if t.loop != "" {
		return t.loop + " body"
	}
	return "task"
}

// where says on which goroutine the task may run, and why.
func (t *task) where() string {
	if t.loop != "" {
		return "a " + t.loop + " body runs on a shared worker goroutine or on the goroutine that called " + t.loop + " (it runs bodies itself while it waits)"
	}
	return "a wsgroup task runs on a shared worker goroutine or on the goroutine that called Wait (Wait runs its group's queued tasks itself)"
}

// waiter is the call whose goroutine may run the task.
func (t *task) waiter() string {
	if t.loop != "" {
		return t.loop
	}
	return "Wait"
}

// goexitMethods are the methods of testing.T, B, F and TB that call
// runtime.Goexit.
var goexitMethods = map[string]bool{
	"FailNow": true, "Fatal": true, "Fatalf": true,
	"SkipNow": true, "Skip": true, "Skipf": true,
}

// testingRunMethods are the methods of testing.T, B and F that call a
// function on a goroutine of their own (and wait for it, unless it is
// parallel): what that function does to its goroutine stays there.
var testingRunMethods = map[string]bool{"Run": true, "RunParallel": true, "Fuzz": true}

// inRunLit reports whether stack holds a function literal passed to one of
// testingRunMethods.
func inRunLit(stack []ast.Node, runLits map[*ast.FuncLit]bool) bool {
	for _, n := range stack {
		if lit, ok := n.(*ast.FuncLit); ok && runLits[lit] {
			return true
		}
	}
	return false
}

// checkTasks reports, in task literals, what depends on the goroutine the
// task runs on, and, in loop bodies, waits on channels shared by the loop.
func checkTasks(pass *analysis.Pass, ins *inspector.Inspector) {
	info := pass.TypesInfo
	tasks := map[*ast.FuncLit]*task{}
	var order []*task
	goLits := map[*ast.FuncLit]bool{}
	runLits := map[*ast.FuncLit]bool{}
	ins.Preorder([]ast.Node{(*ast.CallExpr)(nil), (*ast.GoStmt)(nil)}, func(n ast.Node) {
		switch n := n.(type) {
		case *ast.GoStmt:
			if lit, ok := ast.Unparen(n.Call.Fun).(*ast.FuncLit); ok {
				goLits[lit] = true
			}
		case *ast.CallExpr:
			if fn, ok := typeutil.Callee(info, n).(*types.Func); ok && fn.Pkg() != nil &&
				fn.Pkg().Path() == "testing" && fn.Signature().Recv() != nil && testingRunMethods[fn.Name()] {
				for _, arg := range n.Args {
					if lit, ok := ast.Unparen(arg).(*ast.FuncLit); ok {
						runLits[lit] = true
					}
				}
			}
			var arg ast.Expr
			loop := ""
			switch groupMethod(info, n) {
			case "Go", "TryGo":
				if len(n.Args) == 1 {
					arg = n.Args[0]
				}
			}
			if name, ok := pkgFunc(info, n, wsgroupPath, "For", "ForEach", "Map"); ok && len(n.Args) >= 3 {
				arg, loop = n.Args[2], name
			}
			if lit, ok := ast.Unparen(arg).(*ast.FuncLit); ok {
				t := &task{lit: lit, call: n, loop: loop}
				tasks[lit] = t
				order = append(order, t)
			}
		}
	})
	for _, t := range order {
		checkTask(pass, t, tasks, goLits, runLits)
	}
}

// A chanOp is a send, receive or range on a channel in a loop body.
type chanOp struct {
	node   ast.Node
	ch     ast.Expr
	verb   string // "sends on", "receives from" or "ranges over"
	root   *types.Var
	repeat bool // in a loop or a nested function literal of the body
}

func checkTask(pass *analysis.Pass, t *task, tasks map[*ast.FuncLit]*task, goLits, runLits map[*ast.FuncLit]bool) {
	info := pass.TypesInfo
	// The channel operations of selects with a default case, which do not
	// wait.
	nonBlocking := map[ast.Node]bool{}
	var ops []chanOp
	var stack []ast.Node
	ast.Inspect(t.lit.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if lit, ok := n.(*ast.FuncLit); ok && (goLits[lit] || tasks[lit] != nil) {
			// A goroutine's function does not run in the task; a nested
			// task is checked on its own.
			return false
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.CallExpr:
			if !inRunLit(stack, runLits) {
				checkTaskCall(pass, t, n)
			}
		case *ast.SelectStmt:
			var comms []ast.Stmt
			hasDefault := false
			for _, c := range n.Body.List {
				cc := c.(*ast.CommClause)
				if cc.Comm == nil {
					hasDefault = true
				}
				comms = append(comms, cc.Comm)
			}
			if hasDefault {
				for _, c := range comms {
					switch c := c.(type) {
					case *ast.SendStmt:
						nonBlocking[c] = true
					case *ast.ExprStmt:
						nonBlocking[ast.Unparen(c.X)] = true
					case *ast.AssignStmt:
						nonBlocking[ast.Unparen(c.Rhs[0])] = true
					}
				}
			}
		}
		if t.loop == "" || nonBlocking[n] {
			return true
		}
		var ch ast.Expr
		verb := ""
		switch n := n.(type) {
		case *ast.SendStmt:
			ch, verb = n.Chan, "sends on"
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				ch, verb = n.X, "receives from"
			}
		case *ast.RangeStmt:
			if typ := info.TypeOf(n.X); typ != nil && isChan(typ) {
				ch, verb = n.X, "ranges over"
			}
		}
		if ch == nil {
			return true
		}
		root := chanRoot(info, ch)
		if root == nil || (root.Pos() >= t.lit.Pos() && root.Pos() < t.lit.End()) {
			return true
		}
		repeat := false
		for _, s := range stack[:len(stack)-1] {
			switch s.(type) {
			case *ast.ForStmt, *ast.RangeStmt, *ast.FuncLit:
				repeat = true
			}
		}
		ops = append(ops, chanOp{node: n, ch: ch, verb: verb, root: root, repeat: repeat})
		return true
	})

	sends := map[*types.Var]int{}
	for _, op := range ops {
		if op.verb == "sends on" {
			sends[op.root]++
		}
	}
	for _, op := range ops {
		if op.verb == "sends on" && sends[op.root] == 1 && !op.repeat && bufferedForLoop(pass, t, op) {
			continue
		}
		pass.Report(analysis.Diagnostic{
			Pos: op.node.Pos(),
			End: op.node.End(),
			Message: fmt.Sprintf("this %s %s %s, a channel declared outside the body and so shared by its indices: at most GOMAXPROCS bodies of a loop run at once, so a body that waits for another index of the same loop can hang; run the stages as tasks of a Group (Go), or make sure no body waits for another (a channel with a buffer of at least the loop's length that each body sends on once, say)",
				t.noun(), op.verb, types.ExprString(op.ch)) + link("a-for-body-that-waits-for-another-index"),
		})
	}
}

func checkTaskCall(pass *analysis.Pass, t *task, call *ast.CallExpr) {
	fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return
	}
	method := fn.Signature().Recv() != nil
	report := func(msg, anchor string) {
		pass.Report(analysis.Diagnostic{Pos: call.Pos(), End: call.End(), Message: msg + link(anchor)})
	}
	const goexitAnchor = "goexit-failnow-and-fatal-in-a-task"
	const lockAnchor = "lockosthread-in-a-task"
	switch path, name := fn.Pkg().Path(), fn.Name(); {
	case path == "runtime" && !method && name == "Goexit":
		report(fmt.Sprintf("runtime.Goexit in a %s: %s, and Goexit ends that goroutine, not only the %s; return an error instead",
			t.noun(), t.where(), t.noun()), goexitAnchor)
	case path == "testing" && method && goexitMethods[name]:
		report(fmt.Sprintf("%s calls runtime.Goexit in a %s: %s, and Goexit ends that goroutine, not only the %s; return an error instead, or call %s.Error and return",
			types.ExprString(call.Fun), t.noun(), t.where(), t.noun(), receiverText(call)), goexitAnchor)
	// A task that locks its thread and unlocks it again (with a deferred
	// UnlockOSThread, say) leaves the goroutine as it found it, which the
	// package documentation allows: only a call without its counterpart
	// in the same task is reported. Profiler labels are not checked: a
	// task carries the labels of the goroutine that called Go, and the
	// goroutine that ran it gets its own labels back when it returns, so
	// pprof.SetGoroutineLabels in a task lasts to the end of the task, as
	// on errgroup's goroutine.
	case path == "runtime" && !method && name == "LockOSThread" && !t.calls(pass, "runtime", "UnlockOSThread"):
		report(fmt.Sprintf("runtime.LockOSThread without runtime.UnlockOSThread in a %s: %s, so the lock, and whatever the %s does to the thread, stays with that goroutine for what runs on it next, where errgroup's goroutine would have ended; unlock before the %s returns (defer runtime.UnlockOSThread()), or do thread-bound work on a goroutine of your own, started and waited for inside the %s",
			t.noun(), t.where(), t.noun(), t.noun(), t.noun()), lockAnchor)
	case path == "runtime" && !method && name == "UnlockOSThread" && !t.calls(pass, "runtime", "LockOSThread"):
		report(fmt.Sprintf("runtime.UnlockOSThread without runtime.LockOSThread in a %s: %s, so it can undo a lock that goroutine holds (a caller of %s locked to the main thread, say); unlock only what the %s locked",
			t.noun(), t.where(), t.waiter(), t.noun()), lockAnchor)
	}
}

// calls reports whether the task's literal calls the function pkg.name
// anywhere in its body (in nested literals too).
func (t *task) calls(pass *analysis.Pass, pkg, name string) bool {
	found := false
	ast.Inspect(t.lit.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			_, found = pkgFunc(pass.TypesInfo, call, pkg, name)
		}
		return !found
	})
	return found
}

// receiverText returns the receiver of a method call as written, or "t".
func receiverText(call *ast.CallExpr) string {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		return types.ExprString(sel.X)
	}
	return "t"
}

// chanRoot returns the variable that the channel expression e is, or is a
// field or element of, or nil (for a call's result, say).
func chanRoot(info *types.Info, e ast.Expr) *types.Var {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := info.ObjectOf(e).(*types.Var)
		return v
	case *ast.StarExpr:
		return chanRoot(info, e.X)
	case *ast.IndexExpr:
		return chanRoot(info, e.X)
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[e]; ok {
			if sel.Kind() == types.FieldVal {
				return chanRoot(info, e.X)
			}
			return nil
		}
		v, _ := info.Uses[e.Sel].(*types.Var)
		return v
	}
	return nil
}

// bufferedForLoop reports whether op, a send on a channel variable, cannot
// block for the loop: the variable is local, assigned only where it is
// declared, as make(chan T, c), and c is at least the loop's length (the same
// constant or expression, or len of the slice of ForEach or Map).
func bufferedForLoop(pass *analysis.Pass, t *task, op chanOp) bool {
	info := pass.TypesInfo
	v := op.root
	if _, ok := ast.Unparen(op.ch).(*ast.Ident); !ok || v.Parent() == nil || v.Parent() == pass.Pkg.Scope() {
		return false
	}
	var file *ast.File
	for _, f := range pass.Files {
		if f.FileStart <= v.Pos() && v.Pos() < f.FileEnd {
			file = f
		}
	}
	if file == nil {
		return false
	}
	var init ast.Expr
	ok := true
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, lhs := range n.Lhs {
				id, isID := ast.Unparen(lhs).(*ast.Ident)
				if !isID {
					continue
				}
				if info.Defs[id] == v && len(n.Rhs) == len(n.Lhs) {
					init = n.Rhs[i]
				} else if info.Uses[id] == v {
					ok = false
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if info.Defs[id] == v && len(n.Values) == len(n.Names) {
					init = n.Values[i]
				}
			}
		case *ast.UnaryExpr:
			if id, isID := ast.Unparen(n.X).(*ast.Ident); isID && n.Op == token.AND && info.Uses[id] == v {
				ok = false
			}
		}
		return ok
	})
	mk, isCall := ast.Unparen(init).(*ast.CallExpr)
	if !ok || !isCall || len(mk.Args) != 2 || mk.Pos() > t.call.Pos() {
		return false
	}
	if b, isBuiltin := info.Uses[calleeIdent(mk)].(*types.Builtin); !isBuiltin || b.Name() != "make" {
		return false
	}
	c := mk.Args[1]
	switch t.loop {
	case "For":
		n := t.call.Args[1]
		cv, nv := info.Types[c].Value, info.Types[n].Value
		if cv != nil && nv != nil {
			return constant.Compare(cv, token.GEQ, nv)
		}
		return types.ExprString(c) == types.ExprString(n)
	case "ForEach", "Map":
		l, isCall := ast.Unparen(c).(*ast.CallExpr)
		if !isCall || len(l.Args) != 1 {
			return false
		}
		if b, isBuiltin := info.Uses[calleeIdent(l)].(*types.Builtin); !isBuiltin || b.Name() != "len" {
			return false
		}
		return types.ExprString(l.Args[0]) == types.ExprString(t.call.Args[1])
	}
	return false
}

// calleeIdent returns the identifier that call calls, or nil.
func calleeIdent(call *ast.CallExpr) *ast.Ident {
	id, _ := ast.Unparen(call.Fun).(*ast.Ident)
	return id
}

func isChan(t types.Type) bool {
	_, ok := t.Underlying().(*types.Chan)
	return ok
}
