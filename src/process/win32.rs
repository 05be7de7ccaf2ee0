//! The few Win32 functions, types and constants `windows` and `windows_watch`
//! use, declared by hand (kernel32 and advapi32 are linked by std already; see
//! ARCHITECTURE.md for why not `windows-sys`). Layouts are those of the x86_64
//! and aarch64 Windows ABI, where `usize` is the width of `SIZE_T` and
//! `ULONG_PTR`.

#![allow(non_snake_case, clippy::upper_case_acronyms)]

use std::ffi::c_void;

pub type HANDLE = *mut c_void;
pub type BOOL = i32;

pub const FALSE: BOOL = 0;
pub const TRUE: BOOL = 1;
pub const INVALID_HANDLE_VALUE: HANDLE = -1isize as HANDLE;
pub const INFINITE: u32 = u32::MAX;
pub const WAIT_OBJECT_0: u32 = 0;
pub const WAIT_FAILED: u32 = u32::MAX;
pub const STILL_ACTIVE: u32 = 259;

pub const SYNCHRONIZE: u32 = 0x0010_0000;

pub const ERROR_HANDLE_EOF: i32 = 38;
pub const ERROR_BROKEN_PIPE: i32 = 109;
pub const ERROR_PIPE_NOT_CONNECTED: i32 = 233;
pub const ERROR_OPERATION_ABORTED: i32 = 995;
pub const ERROR_IO_INCOMPLETE: i32 = 996;
pub const ERROR_IO_PENDING: i32 = 997;

pub const CREATE_SUSPENDED: u32 = 0x0000_0004;
pub const CREATE_NO_WINDOW: u32 = 0x0800_0000;
pub const DUPLICATE_SAME_ACCESS: u32 = 0x0000_0002;
pub const TH32CS_SNAPTHREAD: u32 = 0x0000_0004;
pub const THREAD_SUSPEND_RESUME: u32 = 0x0002;

pub const JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS: i32 = 9;
pub const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: u32 = 0x0000_2000;

pub const CTRL_C_EVENT: u32 = 0;
pub const CTRL_BREAK_EVENT: u32 = 1;
pub const CTRL_CLOSE_EVENT: u32 = 2;
pub const CTRL_LOGOFF_EVENT: u32 = 5;
pub const CTRL_SHUTDOWN_EVENT: u32 = 6;

#[repr(C)]
#[derive(Default)]
pub struct JOBOBJECT_BASIC_LIMIT_INFORMATION {
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
pub struct IO_COUNTERS {
    pub ReadOperationCount: u64,
    pub WriteOperationCount: u64,
    pub OtherOperationCount: u64,
    pub ReadTransferCount: u64,
    pub WriteTransferCount: u64,
    pub OtherTransferCount: u64,
}

#[repr(C)]
#[derive(Default)]
pub struct JOBOBJECT_EXTENDED_LIMIT_INFORMATION {
    pub BasicLimitInformation: JOBOBJECT_BASIC_LIMIT_INFORMATION,
    pub IoInfo: IO_COUNTERS,
    pub ProcessMemoryLimit: usize,
    pub JobMemoryLimit: usize,
    pub PeakProcessMemoryUsed: usize,
    pub PeakJobMemoryUsed: usize,
}

#[repr(C)]
#[derive(Default)]
pub struct THREADENTRY32 {
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
pub struct OVERLAPPED {
    pub Internal: usize,
    pub InternalHigh: usize,
    pub Offset: u32,
    pub OffsetHigh: u32,
    pub hEvent: HANDLE,
}

pub type HandlerRoutine = unsafe extern "system" fn(ctrl_type: u32) -> BOOL;

#[link(name = "kernel32")]
extern "system" {
    pub fn CloseHandle(handle: HANDLE) -> BOOL;
    pub fn GetCurrentProcess() -> HANDLE;
    pub fn DuplicateHandle(
        source_process: HANDLE,
        source: HANDLE,
        target_process: HANDLE,
        target: *mut HANDLE,
        desired_access: u32,
        inherit: BOOL,
        options: u32,
    ) -> BOOL;
    pub fn WaitForSingleObject(handle: HANDLE, milliseconds: u32) -> u32;
    pub fn GetExitCodeProcess(process: HANDLE, exit_code: *mut u32) -> BOOL;
    pub fn OpenProcess(desired_access: u32, inherit: BOOL, process_id: u32) -> HANDLE;

    pub fn CreateEventW(
        attributes: *mut c_void,
        manual_reset: BOOL,
        initial_state: BOOL,
        name: *const u16,
    ) -> HANDLE;
    pub fn SetEvent(event: HANDLE) -> BOOL;
    pub fn WaitForMultipleObjects(
        count: u32,
        handles: *const HANDLE,
        wait_all: BOOL,
        milliseconds: u32,
    ) -> u32;
    pub fn ReadFile(
        file: HANDLE,
        buffer: *mut c_void,
        bytes_to_read: u32,
        bytes_read: *mut u32,
        overlapped: *mut OVERLAPPED,
    ) -> BOOL;
    pub fn WriteFile(
        file: HANDLE,
        buffer: *const c_void,
        bytes_to_write: u32,
        bytes_written: *mut u32,
        overlapped: *mut OVERLAPPED,
    ) -> BOOL;
    pub fn GetOverlappedResult(
        file: HANDLE,
        overlapped: *const OVERLAPPED,
        bytes_transferred: *mut u32,
        wait: BOOL,
    ) -> BOOL;
    pub fn CancelIoEx(file: HANDLE, overlapped: *const OVERLAPPED) -> BOOL;

    pub fn CreateJobObjectW(attributes: *mut c_void, name: *const u16) -> HANDLE;
    pub fn SetInformationJobObject(
        job: HANDLE,
        class: i32,
        information: *const c_void,
        length: u32,
    ) -> BOOL;
    pub fn AssignProcessToJobObject(job: HANDLE, process: HANDLE) -> BOOL;
    pub fn TerminateJobObject(job: HANDLE, exit_code: u32) -> BOOL;

    pub fn CreateToolhelp32Snapshot(flags: u32, process_id: u32) -> HANDLE;
    pub fn Thread32First(snapshot: HANDLE, entry: *mut THREADENTRY32) -> BOOL;
    pub fn Thread32Next(snapshot: HANDLE, entry: *mut THREADENTRY32) -> BOOL;
    pub fn OpenThread(access: u32, inherit: BOOL, thread_id: u32) -> HANDLE;
    pub fn ResumeThread(thread: HANDLE) -> u32;

    pub fn SetConsoleCtrlHandler(handler: Option<HandlerRoutine>, add: BOOL) -> BOOL;
}
