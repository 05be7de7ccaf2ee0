/*
 * A stand-in for Windows' bcryptprimitives.dll, for running Rust programs
 * under Wine 8 only. Rust's std (since 1.78) takes random bytes from
 * bcryptprimitives.dll!ProcessPrng, which Wine 8 does not export, so a Rust
 * .exe fails to start there. This DLL exports ProcessPrng and forwards it to
 * advapi32's SystemFunction036 (RtlGenRandom), which Wine has.
 *
 * Built by scripts/wine/stand-in into a folder beside the .exe under test.
 * Never ship it: real Windows has the real DLL.
 */
#include <windows.h>

/* RtlGenRandom; declared here because its header name varies by SDK. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Same contract as the real one: fills data with len random bytes, TRUE. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
