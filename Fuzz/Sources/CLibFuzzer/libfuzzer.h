// libFuzzer's documented entry point for programs that own `main`
// (compiler-rt FuzzerInterface.h / FuzzerDriver.cpp). The library itself is
// linked by `-sanitize=fuzzer`; this header only declares it for Swift.
#ifndef PINPROXY_FUZZ_LIBFUZZER_H
#define PINPROXY_FUZZ_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
