//! The panic boundary every exported function runs inside.
//!
//! A panic must never unwind into the C caller (that is undefined behaviour) nor abort the host
//! process: it is caught here and turned into the function's documented failure value.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`, returning `on_panic` if it panics.
///
/// The state `body` touches is either behind a mutex that recovers from poisoning or dropped with the
/// failed call, so asserting unwind safety is sound for every caller in this crate.
pub(crate) fn boundary<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}

#[cfg(test)]
mod tests {
    use super::boundary;

    #[test]
    fn a_panic_becomes_the_failure_value() {
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let value = boundary(7, || -> i32 { panic!("inside the boundary") });
        std::panic::set_hook(hook);
        assert_eq!(value, 7);
    }

    #[test]
    fn a_normal_return_passes_through() {
        assert_eq!(boundary(0, || 42), 42);
    }
}
