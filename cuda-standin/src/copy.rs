//! Copies between host memory and device memory: a device range must lie inside one allocation of this
//! process, or inside one block mapped from another process, else `CUDA_ERROR_INVALID_VALUE` and nothing is
//! copied. The copy itself is a `memcpy` made outside the driver's lock, holding the mapping so that a free on
//! another thread cannot unmap it mid-copy.
//!
//! A copy from (or to) a block of an exporter that has exited is a fault: `CUDA_ERROR_ILLEGAL_ADDRESS`, which
//! sticks to the current context until it is reset (the exporter is checked after the `memcpy`, so an
//! exporter that dies during a copy faults that copy).

use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::host_map::HostMap;
use crate::ipc;
use crate::result::{Outcome, ILLEGAL_ADDRESS, INVALID_VALUE};
use crate::state::{self, State};

/// A device range resolved to host bytes.
#[derive(Debug)]
pub(crate) struct Span {
    /// The mapping holding the bytes, kept mapped during the copy.
    pub(crate) map: Arc<HostMap>,
    /// Where the range starts in it.
    pub(crate) offset: usize,
    /// The exporter of an imported block, checked after the copy.
    pub(crate) exporter: Option<Arc<OwnedFd>>,
}

/// The host bytes of the device range `ptr..ptr + len`.
pub(crate) fn resolve(state: &State, ptr: u64, len: u64) -> Outcome<Span> {
    let end = ptr.checked_add(len).ok_or(INVALID_VALUE)?;
    if let Some(a) = state.memory.find(ptr) {
        if end > a.base + a.size {
            return Err(INVALID_VALUE);
        }
        let block = state.memory.block_of(a).ok_or(INVALID_VALUE)?;
        return Ok(Span {
            map: Arc::clone(&block.map),
            offset: usize::try_from(a.offset + (ptr - a.base)).map_err(|_| INVALID_VALUE)?,
            exporter: None,
        });
    }
    if let Some(i) = state.imports.find(ptr) {
        if end > i.base + i.size {
            return Err(INVALID_VALUE);
        }
        return Ok(Span {
            map: Arc::clone(&i.map),
            offset: usize::try_from(ptr - i.base).map_err(|_| INVALID_VALUE)?,
            exporter: Some(Arc::clone(&i.exporter)),
        });
    }
    Err(INVALID_VALUE)
}

/// Which way a copy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Device to host.
    ToHost,
    /// Host to device.
    ToDevice,
}

/// Copies `len` bytes between host address `host` and device address `device` in the calling thread's
/// context.
///
/// # Safety
///
/// `host..host + len` must be valid host memory: readable for [`Direction::ToDevice`], writable for
/// [`Direction::ToHost`], and not overlapping the device range's bytes.
pub(crate) unsafe fn copy(
    host: *mut u8,
    device: u64,
    len: usize,
    direction: Direction,
) -> Outcome<()> {
    let (span, ctx) = state::in_context(|s, ctx| Ok((resolve(s, device, len as u64)?, ctx)))?;
    if len > 0 {
        // SAFETY: `span` keeps the mapping alive, and `resolve` checked that `len` bytes from `offset` lie
        // inside it; the caller vouches for the host range.
        unsafe {
            let bytes = span.map.ptr().add(span.offset);
            match direction {
                Direction::ToHost => std::ptr::copy_nonoverlapping(bytes, host, len),
                Direction::ToDevice => std::ptr::copy_nonoverlapping(host.cast_const(), bytes, len),
            }
        }
    }
    if span.exporter.as_deref().is_some_and(ipc::exited) {
        state::with_state(|s| {
            s.contexts[ctx].sticky = Some(ILLEGAL_ADDRESS);
            Ok(())
        })?;
        return Err(ILLEGAL_ADDRESS);
    }
    Ok(())
}

/// Sets `len` bytes at device address `device` to `value`.
pub(crate) fn set(device: u64, value: u8, len: usize) -> Outcome<()> {
    let span = state::in_context(|s, _| resolve(s, device, len as u64))?;
    // SAFETY: `resolve` checked that the range lies inside the mapping `span` keeps alive.
    unsafe { std::ptr::write_bytes(span.map.ptr().add(span.offset), value, len) };
    Ok(())
}
