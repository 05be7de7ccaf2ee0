//! The few Win32 functions, types and constants `windows` and `windows_watch`
//! use, declared by hand (kernel32, which std links already; see
//! docs/decisions.md for why not `windows-sys`). Layouts are those of the x86_64
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

pub(super) const ERROR_HANDLE_EOF: i32 = 38;
pub(super) const ERROR_BROKEN_PIPE: i32 = 109;
pub(super) const ERROR_PIPE_NOT_CONNECTED: i32 = 233;
pub(super) const ERROR_OPERATION_ABORTED: i32 = 995;
pub(super) const ERROR_IO_INCOMPLETE: i32 = 996;
pub(super) const ERROR_IO_PENDING: i32 = 997;

pub(super) const CREATE_SUSPENDED: u32 = 0x0000_0004;
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
}
