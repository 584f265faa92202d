// Starting child processes cheaply: for job tasks and detached supervisors (process.cpp) and the
// containment probe (process_tree.cpp). fork() copies the parent's page tables (milliseconds per
// spawn on a virtual machine), and moving a running process into a cgroup v2 group waits for an
// RCU grace period (milliseconds again). A child that shares the parent's memory until it execs
// (CLONE_VM | CLONE_VFORK, as posix_spawn does) and is born inside its group (CLONE_INTO_CGROUP,
// Linux 5.7) pays neither.
#pragma once
#include <sys/types.h>

namespace batchai {

// Runs `child(arg)` in a new process on a stack of its own; the calling thread waits until the
// child has exec'd or exited, and returns its pid. With `group_fd` >= 0 (a cgroup v2 folder open
// O_DIRECTORY) the child starts inside that group. -1 with errno when the kernel refuses or this
// build cannot (not x86-64, sanitizers): callers fall back to fork().
//
// `child` shares this process's memory: it may only make system calls (no malloc, no locks, no
// writes to memory anyone else reads) and must end in execve or _exit (its return value becomes
// the exit status). It starts with every signal blocked and every handler still installed, so it
// must reset handlers before unblocking (reset_signal_handlers).
pid_t vfork_clone(int (*child)(void*), void* arg, int group_fd = -1);

// In a child: every signal with a handler back to its default disposition (ignored ones stay
// ignored, as across exec), so unblocking cannot run a parent's handler in the child.
void reset_signal_handlers();

}  // namespace batchai
