package main

import (
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/tools/go/analysis/analysistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestImports(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), Analyzer, "imports")
}

func TestSetLimit(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), Analyzer, "setlimit")
}

func TestGoexit(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), Analyzer, "goexit")
}

func TestGoroutineState(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), Analyzer, "goroutinestate")
}

func TestForChannels(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), Analyzer, "forchan")
}
