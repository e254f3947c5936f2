//! The CUDA driver API, loaded at run time through `cudarc`: every call of the crate into it, and the only
//! `unsafe` code of the `cuda` feature.
//!
//! `cudarc` panics when a driver function is called and the library or the function cannot be loaded, so
//! [`driver`] looks the library and every function of [`DRIVER_SYMBOLS`] up before the first call and turns
//! their absence into an [`Unavailable`] reason. After that the calls cannot panic; each failure is a
//! [`CudaError`] with the function and its `CUresult`.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use cudarc::driver::sys;

use crate::device::{DeviceUuid, IpcHandle, IPC_HANDLE_LEN};
use crate::device_support::{Unavailable, DRIVER_SYMBOLS};

/// A driver call that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CudaError {
    /// The driver function.
    pub(crate) call: &'static str,
    /// Its `CUresult`.
    pub(crate) code: u32,
}

/// `CUDA_ERROR_INVALID_VALUE`: what pointer queries return for memory the driver does not know.
pub(crate) const INVALID_VALUE: u32 = 1;

/// `CUDA_ERROR_INVALID_CONTEXT`: a call that needs a context on a thread with none current.
pub(crate) const INVALID_CONTEXT: u32 = 201;

/// Turns a `CUresult` into a `Result`.
fn check(call: &'static str, result: sys::CUresult) -> Result<(), CudaError> {
    match result {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        other => Err(CudaError {
            call,
            code: other as u32,
        }),
    }
}

/// Proof that the driver library is loaded, has every function of [`DRIVER_SYMBOLS`], and `cuInit` succeeded:
/// only [`driver`] makes one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Driver {
    /// Not constructible elsewhere.
    _private: (),
}

/// The driver, loaded and initialised once per process; the reason when it cannot be.
pub(crate) fn driver() -> Result<Driver, Unavailable> {
    static DRIVER: OnceLock<Result<Driver, Unavailable>> = OnceLock::new();
    *DRIVER.get_or_init(load)
}

/// Loads the library, looks up every function, initialises the driver.
fn load() -> Result<Driver, Unavailable> {
    // SAFETY: this only tries to open the candidate library names; no driver function is called.
    if !unsafe { sys::is_culib_present() } {
        return Err(Unavailable::LibraryMissing);
    }
    // SAFETY: a library of the candidate names is present (checked above), so `culib` opens one instead of
    // panicking. Opening the NVIDIA driver library runs its initialisers, which is what using it means.
    let library = unsafe { sys::culib() };
    for name in DRIVER_SYMBOLS {
        // SAFETY: looking a symbol up calls nothing; the pointer it gives is dropped unused.
        if unsafe { library.get::<*const c_void>(name.as_bytes()) }.is_err() {
            return Err(Unavailable::SymbolMissing { name });
        }
    }
    // SAFETY: every function is present; cuInit takes flags that must be 0 and has no other input.
    check("cuInit", unsafe { sys::cuInit(0) })
        .map_err(|err| Unavailable::InitFailed { code: err.code })?;
    Ok(Driver { _private: () })
}

/// A GPU's primary context, retained until drop.
#[derive(Debug)]
pub(crate) struct PrimaryContext {
    /// The device.
    device: sys::CUdevice,
    /// The context.
    context: sys::CUcontext,
}

// SAFETY: a context handle names a driver object that any thread may use (push, make current, release);
// the value holds nothing thread-bound.
unsafe impl Send for PrimaryContext {}

impl PrimaryContext {
    /// The context handle, as an opaque address.
    pub(crate) fn raw(&self) -> usize {
        self.context as usize
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        // SAFETY: the context was retained once by `Driver::primary_context` for this device.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}

/// Page-locked host memory from `cuMemAllocHost`, freed on drop: the staging buffer of copies that cannot go
/// straight into the ring.
#[derive(Debug)]
pub(crate) struct PinnedBuffer {
    /// Start of the memory.
    ptr: *mut u8,
    /// Its size, > 0.
    len: usize,
}

impl PinnedBuffer {
    /// The memory, writable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` holds `len` bytes owned by this value, zeroed by `Driver::pinned`, borrowed mutably
        // through `&mut self` only.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl PinnedBuffer {
    /// Gives up a buffer whose memory a context reset has already freed: nothing frees it again.
    pub(crate) fn abandon(self) {
        std::mem::forget(self);
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from cuMemAllocHost and is freed once; no slice of it outlives `self`.
        let _ = unsafe { sys::cuMemFreeHost(self.ptr.cast()) };
    }
}

/// What the driver knows of a device pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PointerInfo {
    /// The allocation's identity: unique per allocation, never reused.
    pub(crate) buffer_id: u64,
    /// The ordinal of the GPU that owns it.
    pub(crate) ordinal: i32,
    /// The context it was allocated in (an opaque address, for pushing it).
    pub(crate) context: usize,
    /// The allocation's base address.
    pub(crate) base: u64,
    /// The allocation's size.
    pub(crate) size: u64,
}

/// A mapping `cuIpcOpenMemHandle` made: the allocation's address in this process and the end of the memory
/// block the handle maps (a handle maps the whole block, which may start before the allocation and hold
/// other allocations after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Opened {
    /// The address the open returned: the allocation's first byte.
    pub(crate) base: u64,
    /// The block's first byte (`cuMemGetAddressRange` of `base`).
    pub(crate) block_start: u64,
    /// One past the block's last byte.
    pub(crate) block_end: u64,
}

impl Opened {
    /// Bytes from `base` to the block's end: the most a record at offset 0 may read; none where the driver
    /// gave a block that does not hold `base`, so that every record of such a mapping is refused.
    pub(crate) fn room(&self) -> u64 {
        if self.block_start <= self.base {
            self.block_end.saturating_sub(self.base)
        } else {
            0
        }
    }
}

impl Driver {
    /// Number of GPUs the driver sees.
    pub(crate) fn device_count(self) -> Result<u32, CudaError> {
        let mut count: c_int = 0;
        // SAFETY: the driver writes one int.
        check("cuDeviceGetCount", unsafe {
            sys::cuDeviceGetCount(&mut count)
        })?;
        Ok(u32::try_from(count).unwrap_or(0))
    }

    /// The device of an ordinal.
    fn device(self, ordinal: u32) -> Result<sys::CUdevice, CudaError> {
        let mut device: sys::CUdevice = 0;
        let ordinal = c_int::try_from(ordinal).map_err(|_| CudaError {
            call: "cuDeviceGet",
            code: INVALID_VALUE,
        })?;
        // SAFETY: the driver writes one device handle; an out-of-range ordinal is an error, not UB.
        check("cuDeviceGet", unsafe {
            sys::cuDeviceGet(&mut device, ordinal)
        })?;
        Ok(device)
    }

    /// The UUID of GPU `ordinal`.
    pub(crate) fn device_uuid(self, ordinal: u32) -> Result<DeviceUuid, CudaError> {
        let device = self.device(ordinal)?;
        let mut uuid = sys::CUuuid { bytes: [0; 16] };
        // SAFETY: the driver writes the 16 bytes of `uuid`. Version 2: under MIG it names the MIG instance,
        // as the runtime's `cudaDeviceProp.uuid` does (version 1 names the physical GPU).
        check("cuDeviceGetUuid_v2", unsafe {
            sys::cuDeviceGetUuid_v2(&mut uuid, device)
        })?;
        Ok(DeviceUuid(uuid.bytes.map(|b| b as u8)))
    }

    /// The name of GPU `ordinal`.
    pub(crate) fn device_name(self, ordinal: u32) -> Result<String, CudaError> {
        let device = self.device(ordinal)?;
        let mut name = [0 as c_char; 256];
        // SAFETY: the driver writes at most `name.len()` bytes, NUL included.
        check("cuDeviceGetName", unsafe {
            sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, device)
        })?;
        let bytes: Vec<u8> = name
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Retains GPU `ordinal`'s primary context.
    pub(crate) fn primary_context(self, ordinal: u32) -> Result<PrimaryContext, CudaError> {
        let device = self.device(ordinal)?;
        let mut context: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the driver writes one context handle, retained until `PrimaryContext` drops.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut context, device)
        })?;
        Ok(PrimaryContext { device, context })
    }

    /// Makes `context` the calling thread's current context.
    pub(crate) fn set_current(self, context: &PrimaryContext) -> Result<(), CudaError> {
        // SAFETY: the context is retained while `context` lives.
        check("cuCtxSetCurrent", unsafe {
            sys::cuCtxSetCurrent(context.context)
        })
    }

    /// Opens an IPC handle in the current context: the allocation's address here and the block it lies in.
    pub(crate) fn ipc_open(self, handle: &IpcHandle) -> Result<Opened, CudaError> {
        let mut raw = sys::CUipcMemHandle {
            reserved: [0; IPC_HANDLE_LEN],
        };
        for (dst, src) in raw.reserved.iter_mut().zip(handle.0) {
            *dst = src as c_char;
        }
        let mut base: sys::CUdeviceptr = 0;
        // SAFETY: the handle is passed by value; the driver writes one device address. A handle that names
        // nothing (freed, forged, from this process) is an error, not UB.
        check("cuIpcOpenMemHandle", unsafe {
            sys::cuIpcOpenMemHandle_v2(
                &mut base,
                raw,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            )
        })?;
        let mut block_start: sys::CUdeviceptr = 0;
        let mut size: usize = 0;
        // SAFETY: `base` is a mapping the driver just made; it writes the range's base and size.
        let range = check("cuMemGetAddressRange", unsafe {
            sys::cuMemGetAddressRange_v2(&mut block_start, &mut size, base)
        });
        if let Err(err) = range {
            self.ipc_close(base);
            return Err(err);
        }
        Ok(Opened {
            base,
            block_start,
            block_end: block_start.saturating_add(size as u64),
        })
    }

    /// Closes a mapping made by [`Driver::ipc_open`], in the context it was opened in (the caller makes it
    /// current).
    pub(crate) fn ipc_close(self, base: u64) {
        // SAFETY: `base` came from cuIpcOpenMemHandle and is closed once; no copy from it is running (copies
        // are synchronous).
        let _ = unsafe { sys::cuIpcCloseMemHandle(base) };
    }

    /// Copies `dst.len()` bytes from device address `src` (in the current context) into `dst`, synchronously.
    pub(crate) fn copy_to_host(self, dst: &mut [u8], src: u64) -> Result<(), CudaError> {
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: `dst` is `dst.len()` writable bytes borrowed for the call; the copy is synchronous, so the
        // driver is done with them when it returns. A bad device range is an error, not UB on the host.
        check("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src, dst.len())
        })
    }

    /// Page-locked host memory of `len` (> 0) bytes.
    pub(crate) fn pinned(self, len: usize) -> Result<PinnedBuffer, CudaError> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        let len = len.max(1);
        // SAFETY: the driver writes one pointer to `len` bytes, freed by `PinnedBuffer`'s drop.
        check("cuMemAllocHost", unsafe {
            sys::cuMemAllocHost_v2(&mut ptr, len)
        })?;
        // SAFETY: the driver gave `len` writable bytes at `ptr`; zeroing them makes every byte initialised.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, len) };
        Ok(PinnedBuffer {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Registers host memory with the driver as page-locked, for every context (`PORTABLE`).
    ///
    /// # Safety
    ///
    /// `ptr..ptr + len` must be mapped memory that stays mapped, and is not moved, until
    /// [`Driver::host_unregister`] is called for `ptr`.
    pub(crate) unsafe fn host_register(self, ptr: *mut u8, len: usize) -> Result<(), CudaError> {
        // SAFETY: the caller keeps the memory mapped until it is unregistered.
        check("cuMemHostRegister", unsafe {
            sys::cuMemHostRegister_v2(ptr.cast(), len, sys::CU_MEMHOSTREGISTER_PORTABLE)
        })
    }

    /// Undoes [`Driver::host_register`].
    pub(crate) fn host_unregister(self, ptr: *mut u8) {
        // SAFETY: unregistering memory that was registered changes no host memory; an address that was not
        // registered is an error, ignored.
        let _ = unsafe { sys::cuMemHostUnregister(ptr.cast()) };
    }

    /// Waits for the current context's work; an error here is the context's sticky error, if it has one.
    pub(crate) fn synchronize(self) -> Result<(), CudaError> {
        // SAFETY: no arguments; the driver reports the current context's state.
        check("cuCtxSynchronize", unsafe { sys::cuCtxSynchronize() })
    }

    /// Resets `context`'s GPU's primary context: every allocation, mapping and pinned buffer made in it is
    /// gone, its sticky error cleared. The context stays retained.
    pub(crate) fn reset(self, context: &PrimaryContext) -> Result<(), CudaError> {
        // SAFETY: the device is the retained context's; the caller drops every mapping and buffer of it.
        check("cuDevicePrimaryCtxReset", unsafe {
            sys::cuDevicePrimaryCtxReset_v2(context.device)
        })
    }

    /// What the driver knows of `ptr`, in one call: device memory only; anything else is `Ok(None)`. Needs a
    /// context current on the calling thread (`CUDA_ERROR_INVALID_CONTEXT` without one).
    pub(crate) fn pointer_info(self, ptr: u64) -> Result<Option<PointerInfo>, CudaError> {
        use sys::CUpointer_attribute as A;
        let mut memory_type: u32 = 0;
        let mut buffer_id: u64 = 0;
        let mut ordinal: c_int = 0;
        let mut context: sys::CUcontext = std::ptr::null_mut();
        let mut base: sys::CUdeviceptr = 0;
        let mut size: usize = 0;
        let mut attributes = [
            A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            A::CU_POINTER_ATTRIBUTE_BUFFER_ID,
            A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            A::CU_POINTER_ATTRIBUTE_CONTEXT,
            A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ];
        let mut data: [*mut c_void; 6] = [
            (&mut memory_type as *mut u32).cast(),
            (&mut buffer_id as *mut u64).cast(),
            (&mut ordinal as *mut c_int).cast(),
            (&mut context as *mut sys::CUcontext).cast(),
            (&mut base as *mut sys::CUdeviceptr).cast(),
            (&mut size as *mut usize).cast(),
        ];
        // SAFETY: each data pointer points at a variable of its attribute's documented type (unsigned int,
        // unsigned long long, int, CUcontext, CUdeviceptr, size_t); both arrays hold six elements. A pointer
        // the driver does not know reads as memory type 0.
        check("cuPointerGetAttributes", unsafe {
            sys::cuPointerGetAttributes(
                attributes.len() as u32,
                attributes.as_mut_ptr(),
                data.as_mut_ptr(),
                ptr,
            )
        })?;
        if memory_type != sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
            return Ok(None);
        }
        Ok(Some(PointerInfo {
            buffer_id,
            ordinal,
            context: context as usize,
            base,
            size: size as u64,
        }))
    }

    /// A GPU's primary context that is active (some code of this process uses it), retained until the value
    /// drops: what a thread with no current context asks pointers through. `None` when no primary context is
    /// active.
    pub(crate) fn active_primary_context(self) -> Result<Option<PrimaryContext>, CudaError> {
        for ordinal in 0..self.device_count()? {
            let device = self.device(ordinal)?;
            let mut flags: u32 = 0;
            let mut active: c_int = 0;
            // SAFETY: the driver writes one unsigned int and one int.
            check("cuDevicePrimaryCtxGetState", unsafe {
                sys::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active)
            })?;
            if active != 0 {
                return self.primary_context(ordinal).map(Some);
            }
        }
        Ok(None)
    }

    /// Runs `f` with the context `context` (an opaque address from [`PointerInfo::context`] or
    /// [`PrimaryContext::raw`]) pushed on the calling thread, and pops it after.
    pub(crate) fn with_context<T>(
        self,
        context: usize,
        f: impl FnOnce() -> Result<T, CudaError>,
    ) -> Result<T, CudaError> {
        // SAFETY: the context is live: an allocation's (live while it is) or a retained primary context.
        check("cuCtxPushCurrent", unsafe {
            sys::cuCtxPushCurrent_v2(context as sys::CUcontext)
        })?;
        let result = f();
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        let _ = unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
        result
    }

    /// The IPC handle of the allocation `info` describes, taken with its context pushed on the calling
    /// thread.
    pub(crate) fn export(self, info: &PointerInfo) -> Result<IpcHandle, CudaError> {
        self.with_context(info.context, || {
            let mut raw = sys::CUipcMemHandle {
                reserved: [0; IPC_HANDLE_LEN],
            };
            // SAFETY: the driver writes the 64 handle bytes of the allocation at `info.base`.
            check("cuIpcGetMemHandle", unsafe {
                sys::cuIpcGetMemHandle(&mut raw, info.base)
            })?;
            Ok(IpcHandle(raw.reserved.map(|b| b as u8)))
        })
    }
}
