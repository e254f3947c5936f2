//! What the driver knows of a pointer (`cuPointerGetAttribute`, `cuPointerGetAttributes`).
//!
//! Device memory this process allocated answers with its allocation (`RANGE_START_ADDR` and `RANGE_SIZE`
//! are the allocation's, as for `cuMemGetAddressRange`); a block mapped from another process's handle
//! answers with the whole block; page-locked host memory with its range. Any other address is unknown:
//! `cuPointerGetAttribute` fails with `CUDA_ERROR_INVALID_VALUE`, while `cuPointerGetAttributes` succeeds and
//! writes each attribute's zero value, as NVIDIA documents.

use std::ffi::c_void;

use crate::context;
use crate::result::{Outcome, INVALID_VALUE, NOT_SUPPORTED};
use crate::state::State;

/// `CU_POINTER_ATTRIBUTE_CONTEXT`.
pub const CONTEXT: u32 = 1;
/// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`.
pub const MEMORY_TYPE: u32 = 2;
/// `CU_POINTER_ATTRIBUTE_DEVICE_POINTER`.
pub const DEVICE_POINTER: u32 = 3;
/// `CU_POINTER_ATTRIBUTE_HOST_POINTER`.
pub const HOST_POINTER: u32 = 4;
/// `CU_POINTER_ATTRIBUTE_BUFFER_ID`.
pub const BUFFER_ID: u32 = 7;
/// `CU_POINTER_ATTRIBUTE_IS_MANAGED`.
pub const IS_MANAGED: u32 = 8;
/// `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`.
pub const DEVICE_ORDINAL: u32 = 9;
/// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR`.
pub const RANGE_START_ADDR: u32 = 11;
/// `CU_POINTER_ATTRIBUTE_RANGE_SIZE`.
pub const RANGE_SIZE: u32 = 12;
/// `CU_POINTER_ATTRIBUTE_MAPPED`.
pub const MAPPED: u32 = 13;

/// `CU_MEMORYTYPE_HOST`.
pub const MEMORYTYPE_HOST: u32 = 1;
/// `CU_MEMORYTYPE_DEVICE`.
pub const MEMORYTYPE_DEVICE: u32 = 2;

/// Where a pointer points, as the driver knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner {
    /// Device or host memory.
    memory_type: u32,
    /// The context it belongs to.
    context: usize,
    /// Its identity.
    buffer_id: u64,
    /// The range it lies in.
    range_start: u64,
    /// The range's length.
    range_size: u64,
}

/// What the driver knows of `ptr`, if anything.
pub(crate) fn owner(state: &State, ptr: u64) -> Option<Owner> {
    if let Some(a) = state.memory.find(ptr) {
        return Some(Owner {
            memory_type: MEMORYTYPE_DEVICE,
            context: a.context,
            buffer_id: a.buffer_id,
            range_start: a.base,
            range_size: a.size,
        });
    }
    if let Some(i) = state.imports.find(ptr) {
        return Some(Owner {
            memory_type: MEMORYTYPE_DEVICE,
            context: i.context,
            buffer_id: i.buffer_id,
            range_start: i.base,
            range_size: i.size,
        });
    }
    let (start, range) = state.host.find(usize::try_from(ptr).ok()?)?;
    Some(Owner {
        memory_type: MEMORYTYPE_HOST,
        context: context::current().unwrap_or(0),
        buffer_id: range.buffer_id,
        range_start: start as u64,
        range_size: range.len as u64,
    })
}

/// One attribute's value, in the C type the driver writes for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    /// `unsigned int`.
    U32(u32),
    /// `int`.
    I32(i32),
    /// `unsigned long long` or `CUdeviceptr`.
    U64(u64),
    /// `size_t`.
    Usize(usize),
    /// `CUcontext` or `void *`.
    Ptr(*mut c_void),
    /// `bool`.
    Bool(bool),
}

impl Value {
    /// Writes the value to `data`.
    ///
    /// # Safety
    ///
    /// `data` must be writable for the value's C type.
    pub(crate) unsafe fn write(self, data: *mut c_void) {
        // SAFETY: the caller gives storage of the attribute's documented type, which is this value's type.
        unsafe {
            match self {
                Value::U32(v) => data.cast::<u32>().write_unaligned(v),
                Value::I32(v) => data.cast::<i32>().write_unaligned(v),
                Value::U64(v) => data.cast::<u64>().write_unaligned(v),
                Value::Usize(v) => data.cast::<usize>().write_unaligned(v),
                Value::Ptr(v) => data.cast::<*mut c_void>().write_unaligned(v),
                Value::Bool(v) => data.cast::<bool>().write_unaligned(v),
            }
        }
    }
}

/// The value of `attribute` of `ptr`, owned by `owner` (`None`: the driver does not know it, and each
/// attribute's zero value is given).
pub(crate) fn value(owner: Option<Owner>, attribute: u32, ptr: u64) -> Outcome<Value> {
    let zero = owner.is_none();
    let o = owner.unwrap_or(Owner {
        memory_type: 0,
        context: 0,
        buffer_id: 0,
        range_start: 0,
        range_size: 0,
    });
    Ok(match attribute {
        CONTEXT if zero => Value::Ptr(std::ptr::null_mut()),
        CONTEXT => Value::Ptr(context::handle(o.context)),
        MEMORY_TYPE => Value::U32(o.memory_type),
        DEVICE_POINTER => Value::U64(if zero { 0 } else { ptr }),
        HOST_POINTER if o.memory_type == MEMORYTYPE_DEVICE => return Err(INVALID_VALUE),
        HOST_POINTER => Value::Ptr(if zero { 0 } else { ptr } as usize as *mut c_void),
        BUFFER_ID => Value::U64(o.buffer_id),
        IS_MANAGED => Value::Bool(false),
        DEVICE_ORDINAL if zero => Value::I32(0),
        DEVICE_ORDINAL => Value::I32(o.context as i32),
        RANGE_START_ADDR => Value::U64(o.range_start),
        RANGE_SIZE => Value::Usize(o.range_size as usize),
        MAPPED => Value::Bool(!zero),
        _ => return Err(NOT_SUPPORTED),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_pointer_has_zero_values() {
        assert_eq!(value(None, MEMORY_TYPE, 0x1000), Ok(Value::U32(0)));
        assert_eq!(value(None, BUFFER_ID, 0x1000), Ok(Value::U64(0)));
        assert_eq!(value(None, 5, 0x1000), Err(NOT_SUPPORTED));
        let device = Owner {
            memory_type: MEMORYTYPE_DEVICE,
            context: 0,
            buffer_id: 7,
            range_start: 0x1000,
            range_size: 64,
        };
        assert_eq!(
            value(Some(device), HOST_POINTER, 0x1000),
            Err(INVALID_VALUE)
        );
        assert_eq!(
            value(Some(device), RANGE_SIZE, 0x1010),
            Ok(Value::Usize(64))
        );
        let mut out = 0u64;
        // SAFETY: `out` is a u64, the type of BUFFER_ID.
        unsafe { Value::U64(7).write((&mut out as *mut u64).cast()) };
        assert_eq!(out, 7);
    }
}
