/* A bcryptprimitives.dll with ProcessPrng only: a test-harness stand-in for Wine 8.0 (Debian 12),
 * which has no such DLL. Not part of the product: Windows 10 and later ship the real one.
 *
 * Rust's standard library (1.78 on) takes its random bytes from ProcessPrng, so wasmtime's
 * _wasmtime.dll imports it and, under Wine 8.0, does not load ("Could not find module
 * ..._wasmtime.dll (or one of its dependencies)"). Here it is RtlGenRandom (advapi32's
 * SystemFunction036), which Wine has. scripts/windows_lane.py builds it with mingw-w64 and puts it
 * in the Wine prefix's system32. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    /* RtlGenRandom takes a ULONG length: feed it at most 256 MiB at a time. */
    while (size > 0) {
        ULONG part = size > (1u << 28) ? (1u << 28) : (ULONG)size;
        if (!SystemFunction036(data, part))
            return FALSE;
        data += part;
        size -= part;
    }
    return TRUE;
}
