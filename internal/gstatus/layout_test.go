//go:build linux && (amd64 || arm64 || 386 || arm)

package gstatus

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestLayoutMatchesDWARF builds a small program with the toolchain that
// built this test (the go command fetches it if it is not the local one),
// and checks what the check found, and searchBound, against the debug
// information its linker wrote for runtime.g.
func TestLayoutMatchesDWARF(t *testing.T) {
	requireOn(t)
	// runtime/pprof, for its label set's type (see probeLabels).
	d := probeDWARF(t, runtime.GOARCH, "package main\n\nimport (\n\t\"context\"\n\t\"runtime/pprof\"\n)\n\nfunc main() {\n\tpprof.Do(context.Background(), pprof.Labels(\"k\", \"v\"), func(context.Context) { go func() {}() })\n}\n")
	g := findStruct(t, d, "runtime.g")
	if g.ByteSize < int64(searchBound) {
		t.Errorf("runtime.g is %d bytes, the search reads up to %d", g.ByteSize, searchBound)
	}
	l := found.layout
	want := map[string]struct{ offset, size int64 }{
		"atomicstatus": {int64(l.status), 4},
		"goid":         {int64(l.goid), 8},
		"waitreason":   {int64(l.reason), 1},
		"labels":       {int64(found.labels), int64(unsafe.Sizeof(uintptr(0)))},
	}
	seen := 0
	for _, fld := range g.Field {
		w, ok := want[fld.Name]
		if !ok {
			continue
		}
		seen++
		if fld.ByteOffset != w.offset || fld.Type.Size() != w.size {
			t.Errorf("runtime.g.%s: offset %d, size %d; the check found offset %d, size %d",
				fld.Name, fld.ByteOffset, fld.Type.Size(), w.offset, w.size)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the fields %v in runtime.g", seen, want)
	}
	// The labels pointer points to runtime/pprof's labelMap, a label set
	// whose zero value is empty: a slice first (probeLabels relies on it).
	lm := findStruct(t, d, "runtime/pprof.labelMap")
	if size := int64(unsafe.Sizeof(probeLabels)); len(lm.Field) == 0 || lm.Field[0].ByteOffset != 0 || lm.ByteSize > size {
		t.Errorf("runtime/pprof.labelMap: %d bytes, fields %v; probeLabels assumes at most %d bytes, a label set first", lm.ByteSize, lm.Field, size)
	} else if set, ok := underlying(lm.Field[0].Type).(*dwarf.StructType); !ok || len(set.Field) == 0 || !isSlice(set.Field[0].Type) {
		t.Errorf("runtime/pprof.labelMap's first field is %v, not a struct whose first field is a slice", lm.Field[0].Type)
	}
}

// probeDWARF builds the program text for GOARCH arch with the toolchain
// that built this test (the go command fetches it if it is not the local
// one) and returns the debug information of the binary.
func probeDWARF(t *testing.T, arch, text string) *dwarf.Data {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0", "GOFLAGS=", "GOTOOLCHAIN="+runtime.Version())
	files := map[string]string{
		"go.mod":  "module probe\n\ngo 1.26\n",
		"main.go": text,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "probe")
	build := exec.Command(gocmd, "build", "-o", bin, ".")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// underlying strips typedefs off typ.
func underlying(typ dwarf.Type) dwarf.Type {
	for {
		td, ok := typ.(*dwarf.TypedefType)
		if !ok {
			return typ
		}
		typ = td.Type
	}
}

// isSlice reports whether typ is a Go slice, which the debug information
// describes as a struct named "[]T".
func isSlice(typ dwarf.Type) bool {
	st, ok := underlying(typ).(*dwarf.StructType)
	return ok && strings.HasPrefix(st.StructName, "[]")
}

// findStruct returns the struct type named name in d.
func findStruct(t *testing.T, d *dwarf.Data, name string) *dwarf.StructType {
	t.Helper()
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			t.Fatalf("no %s in the debug information", name)
		}
		if e.Tag == dwarf.TagStructType && e.Val(dwarf.AttrName) == name {
			typ, err := d.Type(e.Offset)
			if err != nil {
				t.Fatal(err)
			}
			return typ.(*dwarf.StructType)
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
		}
	}
}
