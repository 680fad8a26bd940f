#include "event_internals.h"

#include <event2/event.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_struct.h>

void pinproxy_bufferevent_activate_read(void *bufferevent) {
    struct bufferevent *bev = bufferevent;
    event_active(&bev->ev_read, EV_READ, 1);
}
