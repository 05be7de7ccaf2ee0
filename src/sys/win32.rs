//! The few Win32 functions, types and constants `windows`, `windows_watch`,
//! `local_windows`, `random` and `file_lock` use, declared by hand (kernel32, which std links
//! already, and a few of advapi32's security calls; see docs/decisions.md
//! for why not `windows-sys`). Layouts are those of the x86_64
//! and aarch64 Windows ABI, where `usize` is the width of `SIZE_T` and
//! `ULONG_PTR`.

#![allow(non_snake_case, clippy::upper_case_acronyms)]

use std::ffi::c_void;

pub(super) type HANDLE = *mut c_void;
pub(super) type BOOL = i32;

pub(super) const FALSE: BOOL = 0;
pub(super) const TRUE: BOOL = 1;
pub(super) const INVALID_HANDLE_VALUE: HANDLE = -1isize as HANDLE;
pub(super) const INFINITE: u32 = u32::MAX;
pub(super) const WAIT_OBJECT_0: u32 = 0;
pub(super) const WAIT_FAILED: u32 = u32::MAX;
pub(super) const STILL_ACTIVE: u32 = 259;

pub(super) const SYNCHRONIZE: u32 = 0x0010_0000;

pub(super) const ERROR_ACCESS_DENIED: i32 = 5;
pub(super) const ERROR_HANDLE_EOF: i32 = 38;
pub(super) const ERROR_NO_DATA: i32 = 232;
pub(super) const ERROR_SEM_TIMEOUT: i32 = 121;
pub(super) const ERROR_PIPE_BUSY: i32 = 231;
pub(super) const ERROR_PIPE_CONNECTED: i32 = 535;
pub(super) const ERROR_BROKEN_PIPE: i32 = 109;
pub(super) const ERROR_PIPE_NOT_CONNECTED: i32 = 233;
pub(super) const ERROR_OPERATION_ABORTED: i32 = 995;
pub(super) const ERROR_IO_INCOMPLETE: i32 = 996;
pub(super) const ERROR_IO_PENDING: i32 = 997;

pub(super) const WAIT_TIMEOUT: u32 = 258;

pub(super) const CREATE_SUSPENDED: u32 = 0x0000_0004;
pub(super) const DETACHED_PROCESS: u32 = 0x0000_0008;
pub(super) const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
pub(super) const CREATE_BREAKAWAY_FROM_JOB: u32 = 0x0100_0000;
pub(super) const STD_INPUT_HANDLE: u32 = -10i32 as u32;
pub(super) const STD_OUTPUT_HANDLE: u32 = -11i32 as u32;
pub(super) const STD_ERROR_HANDLE: u32 = -12i32 as u32;
pub(super) const HANDLE_FLAG_INHERIT: u32 = 0x0000_0001;
pub(super) const PROCESS_QUERY_LIMITED_INFORMATION: u32 = 0x1000;
pub(super) const TOKEN_QUERY: u32 = 0x0008;
pub(super) const TOKEN_USER_CLASS: i32 = 1;

pub(super) const GENERIC_READ: u32 = 0x8000_0000;
pub(super) const GENERIC_WRITE: u32 = 0x4000_0000;
pub(super) const OPEN_EXISTING: u32 = 3;
pub(super) const FILE_FLAG_OVERLAPPED: u32 = 0x4000_0000;
pub(super) const FILE_FLAG_FIRST_PIPE_INSTANCE: u32 = 0x0008_0000;
pub(super) const SECURITY_SQOS_PRESENT: u32 = 0x0010_0000;
pub(super) const SECURITY_IDENTIFICATION: u32 = 0x0001_0000;
pub(super) const PIPE_ACCESS_DUPLEX: u32 = 0x0000_0003;
pub(super) const PIPE_TYPE_BYTE: u32 = 0x0000_0000;
pub(super) const PIPE_READMODE_BYTE: u32 = 0x0000_0000;
pub(super) const PIPE_WAIT: u32 = 0x0000_0000;
pub(super) const PIPE_REJECT_REMOTE_CLIENTS: u32 = 0x0000_0008;
pub(super) const PIPE_UNLIMITED_INSTANCES: u32 = 255;
pub(super) const SDDL_REVISION_1: u32 = 1;
pub(super) const CREATE_NO_WINDOW: u32 = 0x0800_0000;
pub(super) const DUPLICATE_SAME_ACCESS: u32 = 0x0000_0002;
pub(super) const TH32CS_SNAPTHREAD: u32 = 0x0000_0004;
pub(super) const THREAD_SUSPEND_RESUME: u32 = 0x0002;

pub(super) const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS: i32 = 9;
pub(super) const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: u32 = 0x0000_2000;

pub(super) const CTRL_C_EVENT: u32 = 0;
pub(super) const CTRL_BREAK_EVENT: u32 = 1;
pub(super) const CTRL_CLOSE_EVENT: u32 = 2;
pub(super) const CTRL_LOGOFF_EVENT: u32 = 5;
pub(super) const CTRL_SHUTDOWN_EVENT: u32 = 6;

#[repr(C)]
#[derive(Default)]
pub(super) struct JOBOBJECT_BASIC_LIMIT_INFORMATION {
    pub PerProcessUserTimeLimit: i64,
    pub PerJobUserTimeLimit: i64,
    pub LimitFlags: u32,
    pub MinimumWorkingSetSize: usize,
    pub MaximumWorkingSetSize: usize,
    pub ActiveProcessLimit: u32,
    pub Affinity: usize,
    pub PriorityClass: u32,
    pub SchedulingClass: u32,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct IO_COUNTERS {
    pub ReadOperationCount: u64,
    pub WriteOperationCount: u64,
    pub OtherOperationCount: u64,
    pub ReadTransferCount: u64,
    pub WriteTransferCount: u64,
    pub OtherTransferCount: u64,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct JOBOBJECT_EXTENDED_LIMIT_INFORMATION {
    pub BasicLimitInformation: JOBOBJECT_BASIC_LIMIT_INFORMATION,
    pub IoInfo: IO_COUNTERS,
    pub ProcessMemoryLimit: usize,
    pub JobMemoryLimit: usize,
    pub PeakProcessMemoryUsed: usize,
    pub PeakJobMemoryUsed: usize,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct THREADENTRY32 {
    pub dwSize: u32,
    pub cntUsage: u32,
    pub th32ThreadID: u32,
    pub th32OwnerProcessID: u32,
    pub tpBasePri: i32,
    pub tpDeltaPri: i32,
    pub dwFlags: u32,
}

/// The record of one overlapped operation. The union of `Offset` and
/// `OffsetHigh` with `Pointer` is written as its two `u32`s (8 bytes either
/// way); pipes ignore the offset.
#[repr(C)]
pub(super) struct OVERLAPPED {
    pub Internal: usize,
    pub InternalHigh: usize,
    pub Offset: u32,
    pub OffsetHigh: u32,
    pub hEvent: HANDLE,
}

#[repr(C)]
pub(super) struct SECURITY_ATTRIBUTES {
    pub nLength: u32,
    pub lpSecurityDescriptor: *mut c_void,
    pub bInheritHandle: BOOL,
}

/// The head of what `GetTokenInformation(TokenUser)` writes: the SID it
/// points to follows in the same buffer.
#[repr(C)]
pub(super) struct TOKEN_USER {
    pub Sid: *mut c_void,
    pub Attributes: u32,
}

#[repr(C)]
#[derive(Default)]
pub(super) struct PROCESS_MEMORY_COUNTERS {
    pub cb: u32,
    pub PageFaultCount: u32,
    pub PeakWorkingSetSize: usize,
    pub WorkingSetSize: usize,
    pub QuotaPeakPagedPoolUsage: usize,
    pub QuotaPagedPoolUsage: usize,
    pub QuotaPeakNonPagedPoolUsage: usize,
    pub QuotaNonPagedPoolUsage: usize,
    pub PagefileUsage: usize,
    pub PeakPagefileUsage: usize,
}

pub(super) type HandlerRoutine = unsafe extern "system" fn(ctrl_type: u32) -> BOOL;

#[link(name = "kernel32")]
extern "system" {
    pub(super) fn CloseHandle(handle: HANDLE) -> BOOL;
    pub(super) fn GetCurrentProcess() -> HANDLE;
    pub(super) fn DuplicateHandle(
        source_process: HANDLE,
        source: HANDLE,
        target_process: HANDLE,
        target: *mut HANDLE,
        desired_access: u32,
        inherit: BOOL,
        options: u32,
    ) -> BOOL;
    pub(super) fn WaitForSingleObject(handle: HANDLE, milliseconds: u32) -> u32;
    pub(super) fn GetExitCodeProcess(process: HANDLE, exit_code: *mut u32) -> BOOL;
    pub(super) fn OpenProcess(desired_access: u32, inherit: BOOL, process_id: u32) -> HANDLE;

    pub(super) fn CreateEventW(
        attributes: *mut c_void,
        manual_reset: BOOL,
        initial_state: BOOL,
        name: *const u16,
    ) -> HANDLE;
    pub(super) fn SetEvent(event: HANDLE) -> BOOL;
    pub(super) fn WaitForMultipleObjects(
        count: u32,
        handles: *const HANDLE,
        wait_all: BOOL,
        milliseconds: u32,
    ) -> u32;
    pub(super) fn ReadFile(
        file: HANDLE,
        buffer: *mut c_void,
        bytes_to_read: u32,
        bytes_read: *mut u32,
        overlapped: *mut OVERLAPPED,
    ) -> BOOL;
    pub(super) fn WriteFile(
        file: HANDLE,
        buffer: *const c_void,
        bytes_to_write: u32,
        bytes_written: *mut u32,
        overlapped: *mut OVERLAPPED,
    ) -> BOOL;
    pub(super) fn GetOverlappedResult(
        file: HANDLE,
        overlapped: *const OVERLAPPED,
        bytes_transferred: *mut u32,
        wait: BOOL,
    ) -> BOOL;
    pub(super) fn CancelIoEx(file: HANDLE, overlapped: *const OVERLAPPED) -> BOOL;

    pub(super) fn CreateJobObjectW(attributes: *mut c_void, name: *const u16) -> HANDLE;
    pub(super) fn SetInformationJobObject(
        job: HANDLE,
        class: i32,
        information: *const c_void,
        length: u32,
    ) -> BOOL;
    pub(super) fn AssignProcessToJobObject(job: HANDLE, process: HANDLE) -> BOOL;
    pub(super) fn TerminateJobObject(job: HANDLE, exit_code: u32) -> BOOL;

    pub(super) fn CreateToolhelp32Snapshot(flags: u32, process_id: u32) -> HANDLE;
    pub(super) fn Thread32First(snapshot: HANDLE, entry: *mut THREADENTRY32) -> BOOL;
    pub(super) fn Thread32Next(snapshot: HANDLE, entry: *mut THREADENTRY32) -> BOOL;
    pub(super) fn OpenThread(access: u32, inherit: BOOL, thread_id: u32) -> HANDLE;
    pub(super) fn ResumeThread(thread: HANDLE) -> u32;

    pub(super) fn SetConsoleCtrlHandler(handler: Option<HandlerRoutine>, add: BOOL) -> BOOL;

    pub(super) fn GetStdHandle(which: u32) -> HANDLE;
    pub(super) fn SetHandleInformation(handle: HANDLE, mask: u32, flags: u32) -> BOOL;
    pub(super) fn K32GetProcessMemoryInfo(
        process: HANDLE,
        counters: *mut PROCESS_MEMORY_COUNTERS,
        size: u32,
    ) -> BOOL;
    pub(super) fn LocalFree(memory: *mut c_void) -> *mut c_void;

    pub(super) fn CreateNamedPipeW(
        name: *const u16,
        open_mode: u32,
        pipe_mode: u32,
        max_instances: u32,
        out_buffer_size: u32,
        in_buffer_size: u32,
        default_timeout: u32,
        attributes: *const SECURITY_ATTRIBUTES,
    ) -> HANDLE;
    pub(super) fn ConnectNamedPipe(pipe: HANDLE, overlapped: *mut OVERLAPPED) -> BOOL;
    pub(super) fn DisconnectNamedPipe(pipe: HANDLE) -> BOOL;
    pub(super) fn WaitNamedPipeW(name: *const u16, timeout: u32) -> BOOL;
    pub(super) fn GetNamedPipeClientProcessId(pipe: HANDLE, process_id: *mut u32) -> BOOL;
    pub(super) fn GetNamedPipeServerProcessId(pipe: HANDLE, process_id: *mut u32) -> BOOL;
    pub(super) fn CreateFileW(
        name: *const u16,
        access: u32,
        share_mode: u32,
        attributes: *const SECURITY_ATTRIBUTES,
        disposition: u32,
        flags: u32,
        template: HANDLE,
    ) -> HANDLE;
}

#[link(name = "advapi32")]
extern "system" {
    pub(super) fn OpenProcessToken(process: HANDLE, access: u32, token: *mut HANDLE) -> BOOL;
    pub(super) fn GetTokenInformation(
        token: HANDLE,
        class: i32,
        information: *mut c_void,
        length: u32,
        return_length: *mut u32,
    ) -> BOOL;
    pub(super) fn EqualSid(sid1: *mut c_void, sid2: *mut c_void) -> BOOL;
    pub(super) fn ConvertSidToStringSidW(sid: *mut c_void, string: *mut *mut u16) -> BOOL;
    pub(super) fn ConvertStringSecurityDescriptorToSecurityDescriptorW(
        sddl: *const u16,
        revision: u32,
        descriptor: *mut *mut c_void,
        size: *mut u32,
    ) -> BOOL;
}

pub(super) const LOCKFILE_FAIL_IMMEDIATELY: u32 = 0x0000_0001;
pub(super) const LOCKFILE_EXCLUSIVE_LOCK: u32 = 0x0000_0002;
pub(super) const ERROR_LOCK_VIOLATION: i32 = 33;

// The lock between processes (`file_lock`).
#[link(name = "kernel32")]
extern "system" {
    pub(super) fn LockFileEx(
        file: HANDLE,
        flags: u32,
        reserved: u32,
        bytes_low: u32,
        bytes_high: u32,
        overlapped: *mut OVERLAPPED,
    ) -> BOOL;
    pub(super) fn UnlockFileEx(
        file: HANDLE,
        reserved: u32,
        bytes_low: u32,
        bytes_high: u32,
        overlapped: *mut OVERLAPPED,
    ) -> BOOL;
}

// Random bytes (`random`): RtlGenRandom, exported by advapi32 under this
// name; returns a BOOLEAN.
#[link(name = "advapi32")]
extern "system" {
    pub(super) fn SystemFunction036(buffer: *mut c_void, length: u32) -> u8;
}
