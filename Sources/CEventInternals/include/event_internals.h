// The few libevent operations that need its struct layouts
// (<event2/bufferevent_struct.h>). They live in this C target so that the
// layouts stay out of Swift: importing them would turn every opaque
// `struct bufferevent *` and `struct event *` into typed pointers.
#ifndef PINPROXY_EVENT_INTERNALS_H
#define PINPROXY_EVENT_INTERNALS_H

/// Makes libevent run the bufferevent's own read handler this loop turn, as
/// if its socket had become readable: for records OpenSSL read ahead, which
/// epoll cannot report. `bufferevent` is a `struct bufferevent *`.
void pinproxy_bufferevent_activate_read(void *bufferevent);

#endif
