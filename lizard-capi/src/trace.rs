//! The exported functions of `include/lizard/lizard_trace.h`: [`lizard_trace::TraceClient`] for C and CUDA C.
//!
//! Every body runs inside a panic boundary, looks its client up in the registry of live clients (a NULL, forged or closed
//! handle is a clean failure), reads every pointer only after a NULL check, and writes through an output
//! pointer only on success. What went wrong is kept per thread for `lizard_trace_last_error`.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::time::Duration;

use lizard_trace::{
    ClientConfig, ClientError, Delivery, DeviceError, DeviceMode, DeviceRegion, DeviceUuid,
    IpcHandle, SendPolicy, SocketName, TraceClient,
};

use crate::panic::boundary;
use crate::registry::Registry;
use crate::trace_abi::*;

static CLIENTS: Registry<TraceClient> = Registry::new();

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `message` as this thread's last error and returns `code`. (A thread that is exiting has no slot
/// left; its message is then lost, never a panic.)
fn fail(code: LizardTraceResult, message: impl std::fmt::Display) -> LizardTraceResult {
    let text = message.to_string().replace('\0', " ");
    let _ = LAST_ERROR.try_with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            *last = CString::new(text).unwrap_or_default();
        }
    });
    code
}

/// Runs `body` inside the panic boundary; a panic becomes [`LZT_ERR_INTERNAL`] with its message.
fn guarded(body: impl FnOnce() -> LizardTraceResult) -> LizardTraceResult {
    match boundary(None, || Some(body())) {
        Some(code) => code,
        None => fail(
            LZT_ERR_INTERNAL,
            "internal error in liblizard (a panic was caught)",
        ),
    }
}

/// An error with its causes, one after another.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The code of a client error.
fn code_of(err: &ClientError) -> LizardTraceResult {
    match err {
        ClientError::Connect { .. } => LZT_ERR_CONNECT,
        ClientError::Module(_)
        | ClientError::PayloadTooLarge { .. }
        | ClientError::InlineThreshold { .. } => LZT_ERR_ARGUMENT,
        ClientError::Disconnected(_) => LZT_ERR_DISCONNECTED,
        ClientError::Device(DeviceError::NoCuda(_)) => LZT_ERR_NO_CUDA,
        ClientError::Device(DeviceError::NotDeviceMemory { .. }) => LZT_ERR_NOT_DEVICE_MEMORY,
        ClientError::Device(
            DeviceError::OutsideAllocation { .. } | DeviceError::TooLong { .. },
        ) => LZT_ERR_OUT_OF_RANGE,
        ClientError::Device(_) => LZT_ERR_CUDA,
        ClientError::Refused { .. } => LZT_ERR_REFUSED,
        ClientError::AckTimeout { .. } => LZT_ERR_TIMEOUT,
        ClientError::BadAck(_) => LZT_ERR_PROTOCOL,
        _ => LZT_ERR_SOCKET,
    }
}

/// The result code of a record call.
fn delivered(result: Result<Delivery, ClientError>) -> LizardTraceResult {
    match result {
        Ok(Delivery::Sent | Delivery::Stored { .. }) => LZT_OK,
        Ok(Delivery::Dropped) => fail(
            LZT_DROPPED,
            "dropped: the trace server was slow (counted in the client's sequence numbers)",
        ),
        Err(err) => fail(code_of(&err), chain(&err)),
    }
}

/// A NUL-terminated UTF-8 string argument, or the code to return.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string readable for the call.
unsafe fn text<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, LizardTraceResult> {
    if ptr.is_null() {
        return Err(fail(LZT_ERR_NULL, format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, and NUL-terminated per the caller's contract.
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| fail(LZT_ERR_ARGUMENT, format!("{what} is not UTF-8")))
}

/// The settings of `options` (NULL: the defaults).
fn config_of(options: Option<&LizardTraceOptions>) -> Result<ClientConfig, LizardTraceResult> {
    let mut config = ClientConfig::default();
    let Some(options) = options else {
        return Ok(config);
    };
    if options.size as usize != std::mem::size_of::<LizardTraceOptions>() {
        return Err(fail(
            LZT_ERR_ARGUMENT,
            format!(
                "options.size is {}, expected sizeof(LizardTraceOptions) = {}",
                options.size,
                std::mem::size_of::<LizardTraceOptions>()
            ),
        ));
    }
    config.device_mode = match options.device_mode {
        LZT_DEVICE_SYNC => DeviceMode::Sync {
            deadline: match options.deadline_ms {
                0 => lizard_trace::client::DEFAULT_DEVICE_DEADLINE,
                ms => Duration::from_millis(u64::from(ms)),
            },
        },
        LZT_DEVICE_ASYNC => DeviceMode::Async,
        other => {
            return Err(fail(
                LZT_ERR_ARGUMENT,
                format!(
                    "options.device_mode {other} is neither LZT_DEVICE_SYNC nor LZT_DEVICE_ASYNC"
                ),
            ))
        }
    };
    if options.block_ms > 0 {
        config.policy = SendPolicy::Block {
            timeout: Duration::from_millis(u64::from(options.block_ms)),
        };
    }
    Ok(config)
}

/// `lizard_trace_connect`.
///
/// # Safety
/// `socket` is NULL or a NUL-terminated string; `client` is NULL or points to writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn lizard_trace_connect(
    socket: *const c_char,
    client: *mut LizardTraceClientHandle,
) -> LizardTraceResult {
    // SAFETY: the same contract as this function's.
    unsafe { lizard_trace_connect_with(socket, std::ptr::null(), client) }
}

/// `lizard_trace_connect_with`.
///
/// # Safety
/// `socket` is NULL or a NUL-terminated string; `options` is NULL or points to a readable
/// `LizardTraceOptions`; `client` is NULL or points to writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn lizard_trace_connect_with(
    socket: *const c_char,
    options: *const LizardTraceOptions,
    client: *mut LizardTraceClientHandle,
) -> LizardTraceResult {
    guarded(|| {
        if client.is_null() {
            return fail(LZT_ERR_NULL, "client (the output pointer) is NULL");
        }
        let name = if socket.is_null() {
            lizard_trace::socket_name::DEFAULT_SOCKET_NAME
        } else {
            // SAFETY: non-NULL, NUL-terminated per the contract.
            match unsafe { text(socket, "socket") } {
                Ok(name) => name,
                Err(code) => return code,
            }
        };
        let Ok(name) = name.parse::<SocketName>();
        if name.is_empty() {
            return fail(LZT_ERR_ARGUMENT, "socket name is empty");
        }
        // SAFETY: `options` is NULL or readable per the contract; it is only read, during the call.
        let options = unsafe { options.as_ref() };
        let config = match config_of(options) {
            Ok(config) => config,
            Err(code) => return code,
        };
        match TraceClient::connect_with(&name, config) {
            Ok(connected) => {
                let handle = CLIENTS.insert(connected);
                // SAFETY: `client` is non-NULL and writable per the contract.
                unsafe { client.write(handle) };
                LZT_OK
            }
            Err(err) => fail(code_of(&err), chain(&err)),
        }
    })
}

/// `lizard_trace_close`.
///
/// # Safety
/// Any value may be passed; only handles this library issued and has not closed are acted on.
#[no_mangle]
pub unsafe extern "C" fn lizard_trace_close(client: LizardTraceClientHandle) -> LizardTraceResult {
    guarded(|| {
        if client.is_null() {
            return fail(LZT_ERR_NULL, "client is NULL");
        }
        match CLIENTS.remove(client) {
            Some(_) => LZT_OK,
            None => fail(
                LZT_ERR_NOT_A_CLIENT,
                "not a live client (closed, or never connected)",
            ),
        }
    })
}

/// Runs `record` on the live client `client` with the module and file arguments read.
///
/// # Safety
/// `module` and `file` are NULL or NUL-terminated strings.
unsafe fn with_client(
    client: LizardTraceClientHandle,
    module: *const c_char,
    file: *const c_char,
    record: impl FnOnce(&mut TraceClient, &str, &str) -> LizardTraceResult,
) -> LizardTraceResult {
    if client.is_null() {
        return fail(LZT_ERR_NULL, "client is NULL");
    }
    // SAFETY: per this function's contract.
    let (module, file) = match unsafe { (text(module, "module"), text(file, "file")) } {
        (Ok(module), Ok(file)) => (module, file),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    CLIENTS
        .with(client, |c| record(c, module, file))
        .unwrap_or_else(|| {
            fail(
                LZT_ERR_NOT_A_CLIENT,
                "not a live client (closed, or never connected)",
            )
        })
}

/// `lizard_trace_record`.
///
/// # Safety
/// `module` and `file` are NULL or NUL-terminated strings; `data` is NULL or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn lizard_trace_record(
    client: LizardTraceClientHandle,
    module: *const c_char,
    file: *const c_char,
    line: u32,
    data: *const c_void,
    len: usize,
) -> LizardTraceResult {
    guarded(|| {
        if data.is_null() && len > 0 {
            return fail(LZT_ERR_NULL, format!("data is NULL with len {len}"));
        }
        let payload: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: `data` is non-NULL and points to `len` readable bytes per the contract.
            unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
        };
        // SAFETY: the string arguments follow this function's contract.
        unsafe {
            with_client(client, module, file, |c, module, file| {
                delivered(c.record_at(module, file, line, payload))
            })
        }
    })
}

/// `lizard_trace_record_cuda`.
///
/// # Safety
/// `module` and `file` are NULL or NUL-terminated strings. `device_ptr` is never dereferenced on the host: the
/// CUDA driver is asked what it is.
#[no_mangle]
pub unsafe extern "C" fn lizard_trace_record_cuda(
    client: LizardTraceClientHandle,
    module: *const c_char,
    file: *const c_char,
    line: u32,
    device_ptr: *const c_void,
    len: usize,
) -> LizardTraceResult {
    guarded(|| {
        if device_ptr.is_null() {
            return fail(LZT_ERR_NULL, "device_ptr is NULL");
        }
        // SAFETY: the string arguments follow this function's contract.
        unsafe {
            with_client(client, module, file, |c, module, file| {
                record_device(c, module, file, line, device_ptr.addr() as u64, len)
            })
        }
    })
}

/// A device record through the driver.
#[cfg(feature = "cuda")]
fn record_device(
    client: &mut TraceClient,
    module: &str,
    file: &str,
    line: u32,
    ptr: u64,
    len: usize,
) -> LizardTraceResult {
    delivered(client.record_device_at(module, file, line, ptr, len))
}

/// A device record in a build without CUDA support.
#[cfg(not(feature = "cuda"))]
fn record_device(
    _client: &mut TraceClient,
    _module: &str,
    _file: &str,
    _line: u32,
    _ptr: u64,
    _len: usize,
) -> LizardTraceResult {
    fail(
        LZT_ERR_NO_CUDA,
        lizard_trace::Unavailable::FeatureOff.to_string(),
    )
}

/// `lizard_trace_record_ipc`.
///
/// # Safety
/// `module` and `file` are NULL or NUL-terminated strings; `ipc_handle` is NULL or points to 64 readable
/// bytes; `device_uuid` is NULL or points to 16 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn lizard_trace_record_ipc(
    client: LizardTraceClientHandle,
    module: *const c_char,
    file: *const c_char,
    line: u32,
    ipc_handle: *const c_void,
    offset: u64,
    len: usize,
    device_uuid: *const c_void,
) -> LizardTraceResult {
    guarded(|| {
        if ipc_handle.is_null() {
            return fail(LZT_ERR_NULL, "ipc_handle is NULL");
        }
        let Ok(len) = u32::try_from(len) else {
            return fail(
                LZT_ERR_OUT_OF_RANGE,
                format!("{len} bytes exceed the largest record"),
            );
        };
        // SAFETY: `ipc_handle` is non-NULL and points to 64 readable bytes per the contract.
        let handle = IpcHandle(unsafe { ipc_handle.cast::<[u8; 64]>().read_unaligned() });
        let device = if device_uuid.is_null() {
            DeviceUuid::ANY
        } else {
            // SAFETY: non-NULL and 16 readable bytes per the contract.
            DeviceUuid(unsafe { device_uuid.cast::<[u8; 16]>().read_unaligned() })
        };
        // The caller took the handle itself: the allocation's size is not known here, so the server checks
        // the record against the memory block the handle maps (which may hold other allocations too).
        let region = DeviceRegion {
            handle,
            offset,
            len,
            device,
            allocation_len: None,
        };
        // SAFETY: the string arguments follow this function's contract.
        unsafe {
            with_client(client, module, file, |c, module, file| {
                delivered(c.record_ipc_at(module, file, line, &region))
            })
        }
    })
}

/// `lizard_trace_last_error`.
#[no_mangle]
pub extern "C" fn lizard_trace_last_error() -> *const c_char {
    // The string lives in this thread's slot until the next failed call replaces it.
    LAST_ERROR
        .try_with(|last| last.try_borrow().map(|s| s.as_ptr()).ok())
        .ok()
        .flatten()
        .unwrap_or(c"".as_ptr())
}
