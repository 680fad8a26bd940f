// Forward-only shims for libevent macros Swift cannot import.
// Include order matters: libc headers first. <event2/event-config.h> defines
// _GNU_SOURCE, and seeing it before <sys/select.h> breaks fd_set against
// Foundation/Dispatch ('__fds_bits' ... is not present in definition of 'fd_set').
#ifndef PINPROXY_CLIBEVENT_SHIM_H
#define PINPROXY_CLIBEVENT_SHIM_H

#include <sys/types.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/eventfd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <malloc.h>

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <event2/dns.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <event2/util.h>

static inline struct event *shim_evtimer_new(struct event_base *b, event_callback_fn cb, void *arg) { return evtimer_new(b, cb, arg); }
static inline int shim_evtimer_add(struct event *ev, const struct timeval *tv) { return evtimer_add(ev, tv); }
static inline int shim_evtimer_del(struct event *ev) { return evtimer_del(ev); }
static inline int shim_EVUTIL_SOCKET_ERROR(void) { return EVUTIL_SOCKET_ERROR(); }

// The nice value of the calling thread alone: on Linux it is per thread, and
// PRIO_PROCESS with a thread id sets that thread's. gettid(2) is declared
// only under _GNU_SOURCE (see above), so it goes through syscall(2).
static inline int shim_set_thread_nice(int value) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), value);
}

// Gives the pages of free heap memory back to the kernel, in every arena
// (glibc: the top of each heap, and free pages inside them by MADV_DONTNEED).
static inline int shim_malloc_trim(void) {
    return malloc_trim(0);
}

// The calling thread's kernel name (at most 15 bytes kept); what
// pthread_setname_np does for the calling thread, which is GNU-only.
static inline int shim_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

// splice(2) and pipe2(2) are declared only under _GNU_SOURCE, which this
// module must not define (see above): called through syscall(2) instead.
// SPLICE_F_MOVE (1) | SPLICE_F_NONBLOCK (2), from <linux/fcntl.h>'s values.
static inline long shim_splice(int from, int to, size_t length) {
    return syscall(SYS_splice, from, (void *)0, to, (void *)0, length, 1u | 2u);
}
static inline int shim_pipe2_nonblocking(int ends[2]) {
    return (int)syscall(SYS_pipe2, ends, O_NONBLOCK | O_CLOEXEC);
}

#endif
