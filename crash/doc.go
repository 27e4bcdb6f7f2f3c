// Package crash keeps the crash report: the Go runtime writes the report of
// a fatal error (a crash in C code, an unrecovered panic) to File in the
// data directory as well as to stderr (debug.SetCrashOutput). A kill or a
// power loss writes nothing, so at the next start a non-empty report says
// the last run died of its own fault (Arm); it is kept as PrevFile for the
// operator.
//
// It does not decide what a crash means for the jobs: the daemon fails the
// jobs a crashed run left processing (daemon/crash.go, store.RecoverOptions).
// The crash output is process-wide: Arm is called once, by the daemon's Run.
package crash
