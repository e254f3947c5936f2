//! Primary contexts and the calling thread's current context.
//!
//! Each device has one primary context. It is active while someone retains it
//! (`cuDevicePrimaryCtxRetain`); released to zero, or reset (`cuDevicePrimaryCtxReset`), it loses every
//! allocation, mapping and registration made in it. A context is current **per thread**: each thread has its
//! own stack (`cuCtxSetCurrent` replaces the top, `cuCtxPushCurrent`/`cuCtxPopCurrent` push and pop), and a
//! call that needs a context on a thread with none fails with `CUDA_ERROR_INVALID_CONTEXT`, as a runtime-API
//! program's worker thread that never called the runtime finds. A fault during a copy leaves a **sticky**
//! error on the context: every later call that needs it fails with that error until the context is reset.

use std::cell::RefCell;
use std::ffi::c_void;

use crate::device::COUNT;
use crate::result::CuResult;

/// One primary context's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Context {
    /// How many times it is retained; active while above zero.
    pub(crate) retained: u32,
    /// The sticky error a fault left, until a reset.
    pub(crate) sticky: Option<CuResult>,
}

/// One byte per device whose address is its primary context's handle (`CUcontext`): stable for the life of
/// the process and never a pointer to anything a caller could use.
static HANDLES: [u8; COUNT] = [0; COUNT];

/// The `CUcontext` handle of device `index`'s primary context.
pub(crate) fn handle(index: usize) -> *mut c_void {
    std::ptr::addr_of!(HANDLES[index]).cast_mut().cast()
}

/// The device whose primary context `handle` is, if it is one.
pub(crate) fn index_of(handle: *mut c_void) -> Option<usize> {
    (0..COUNT).find(|&i| self::handle(i) == handle)
}

thread_local! {
    /// This thread's context stack: device indices, the current one last.
    static STACK: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The calling thread's current context, if any.
pub(crate) fn current() -> Option<usize> {
    STACK.with(|s| s.borrow().last().copied())
}

/// `cuCtxSetCurrent`: replaces the top of this thread's stack with `index`, or pops it for `None`.
pub(crate) fn set_current(index: Option<usize>) {
    STACK.with(|s| {
        let mut stack = s.borrow_mut();
        match index {
            Some(i) => match stack.last_mut() {
                Some(top) => *top = i,
                None => stack.push(i),
            },
            None => {
                stack.pop();
            }
        }
    });
}

/// `cuCtxPushCurrent`.
pub(crate) fn push(index: usize) {
    STACK.with(|s| s.borrow_mut().push(index));
}

/// `cuCtxPopCurrent`: the context popped, if the stack was not empty.
pub(crate) fn pop() -> Option<usize> {
    STACK.with(|s| s.borrow_mut().pop())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_thread_has_its_own_current_context() {
        assert_eq!(index_of(handle(0)), Some(0));
        assert_eq!(index_of(std::ptr::null_mut()), None);
        set_current(Some(0));
        assert_eq!(current(), Some(0));
        std::thread::spawn(|| assert_eq!(current(), None))
            .join()
            .unwrap();
        push(0);
        assert_eq!(pop(), Some(0));
        set_current(None);
        assert_eq!(current(), None);
        assert_eq!(pop(), None);
    }
}
