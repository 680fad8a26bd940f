// Child processes for the custom policy's command (CustomCheckProcess) and
// for the tests' tools (ChildProcess):
// posix_spawn and the glibc pieces Swift's Glibc module leaves out
// (posix_spawn_file_actions_addclosefrom_np, glibc 2.34; pidfd_open, 2.36).
// Forward-only: every choice (which fds, which signals) is made in Swift.
#ifndef PINPROXY_CPROCESS_SHIM_H
#define PINPROXY_CPROCESS_SHIM_H
// No _GNU_SOURCE: defining it here changes fd_set's definition against the
// other C modules'; what this needs is in glibc's default (__USE_MISC) set.
#include <sys/types.h>
#include <sys/select.h>
#include <spawn.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/pidfd.h>
#include <fcntl.h>
#include <unistd.h>

static inline int shim_posix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
// Test support (ChildProcess) starts tools in a working directory of their own.
static inline int shim_posix_spawn_file_actions_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}
// glibc declares pipe2 only under _GNU_SOURCE (see above); the function is always there.
extern int pipe2(int pipedes[2], int flags);
static inline int shim_pipe2(int pipedes[2], int flags) { return pipe2(pipedes, flags); }
static inline int shim_pidfd_open(pid_t pid) { return pidfd_open(pid, 0); }
static inline int shim_WIFEXITED(int status) { return WIFEXITED(status); }
static inline int shim_WEXITSTATUS(int status) { return WEXITSTATUS(status); }
static inline int shim_WIFSIGNALED(int status) { return WIFSIGNALED(status); }
static inline int shim_WTERMSIG(int status) { return WTERMSIG(status); }
#endif
