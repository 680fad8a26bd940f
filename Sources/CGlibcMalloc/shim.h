// glibc's allocator tuning (<malloc.h>), which Swift's Glibc module leaves out.
#ifndef PINPROXY_CGLIBCMALLOC_SHIM_H
#define PINPROXY_CGLIBCMALLOC_SHIM_H
#include <malloc.h>
#endif
