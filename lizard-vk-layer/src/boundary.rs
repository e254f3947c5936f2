//! The panic boundary of every entry point, and the layer's features that turn off when their own work
//! fails.
//!
//! A panic that crossed an `extern "system"` function would abort the application. Every entry point runs
//! its body through [`entry`]; inside, the layer's own work runs through [`work`], one feature at a time,
//! so that a failure in it turns that feature off, with its reason kept for the trace, while the
//! application's call still goes down the chain exactly once.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A part of the layer's own work that can be turned off alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Feature {
    /// Tracking command buffers and recording queries around workloads.
    Workloads,
    /// Copying query results at submission and reading them.
    Timing,
    /// The serialising modes' split submissions.
    Serialise,
    /// Frame boundaries at present.
    Frames,
    /// The entry points' own bookkeeping (dispatch tables, objects).
    Layer,
}

const FEATURES: usize = 5;

impl Feature {
    /// The feature's name in the trace.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Feature::Workloads => "workload tracking",
            Feature::Timing => "workload timing",
            Feature::Serialise => "serialised submission",
            Feature::Frames => "frame boundaries",
            Feature::Layer => "layer bookkeeping",
        }
    }
}

static OFF: [AtomicBool; FEATURES] = [
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
    AtomicBool::new(false),
];

/// Reasons not yet written to the trace: `(feature, reason)`.
static REASONS: Mutex<Vec<(Feature, String)>> = Mutex::new(Vec::new());

/// Whether `feature` is still on.
#[inline]
pub(crate) fn is_on(feature: Feature) -> bool {
    !OFF[feature as usize].load(Ordering::Relaxed)
}

/// Turns `feature` off for the rest of the process, keeping `reason` for the trace.
pub(crate) fn turn_off(feature: Feature, reason: String) {
    if !OFF[feature as usize].swap(true, Ordering::Relaxed) {
        let mut reasons = REASONS.lock().unwrap_or_else(|e| e.into_inner());
        reasons.push((feature, reason));
    }
}

/// The reasons kept since the last call, oldest first.
pub(crate) fn take_reasons() -> Vec<(Feature, String)> {
    std::mem::take(&mut *REASONS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Turns every feature back on (a new session of a reloaded layer starts whole).
pub(crate) fn reset() {
    for off in &OFF {
        off.store(false, Ordering::Relaxed);
    }
    take_reasons();
}

/// The layer's own work panics at `point` when `LIZARD_VK_FAULT` names it (`record`: recording a render
/// pass; `submit`: preparing a submission's copies; `present`: a frame's end): how the tests show that a
/// failure of the layer turns its feature off and leaves the application's calls whole.
#[inline]
pub(crate) fn fault(point: &'static str) {
    static FAULT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let wanted = FAULT.get_or_init(|| std::env::var("LIZARD_VK_FAULT").ok());
    if wanted.as_deref() == Some(point) {
        panic!("LIZARD_VK_FAULT={point}: a failure of the layer's own, on purpose");
    }
}

/// The text of a panic's payload.
fn message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Runs the layer's own work `f` for `feature` in command `command`: nothing when the feature is off;
/// `None` when `f` panics, which turns the feature off with the panic's message.
#[inline]
pub(crate) fn work<R>(feature: Feature, command: &'static str, f: impl FnOnce() -> R) -> Option<R> {
    if !is_on(feature) {
        return None;
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            turn_off(
                feature,
                format!(
                    "{command}: the layer's own work panicked: {}",
                    message(&*payload)
                ),
            );
            None
        }
    }
}

/// Runs the layer's own work `f`, which must run whatever is off (ending a session, releasing a device's
/// objects): `None` when it panics, which turns `feature` off with the panic's message.
pub(crate) fn always<R>(
    feature: Feature,
    command: &'static str,
    f: impl FnOnce() -> R,
) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            turn_off(
                feature,
                format!(
                    "{command}: the layer's own work panicked: {}",
                    message(&*payload)
                ),
            );
            None
        }
    }
}

/// The boundary of an entry point: runs `f`, and returns `fallback` if it panics (the layer's bookkeeping
/// failed before the command could be passed on; the failure is kept for the trace).
#[inline]
pub(crate) fn entry<R>(command: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            turn_off(
                Feature::Layer,
                format!("{command}: panicked: {}", message(&*payload)),
            );
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_turns_its_feature_off_once_and_keeps_the_reason() {
        reset();
        assert_eq!(work(Feature::Serialise, "vkTest", || 3), Some(3));
        let r: Option<()> = work(Feature::Serialise, "vkTest", || panic!("boom"));
        assert_eq!(r, None);
        assert!(!is_on(Feature::Serialise));
        // Off: the work is not run at all.
        assert_eq!(work(Feature::Serialise, "vkTest", || 4), None);
        let reasons = take_reasons();
        assert_eq!(reasons.len(), 1);
        assert!(reasons[0].1.contains("boom"), "{reasons:?}");
        assert_eq!(entry("vkTest", 7, || panic!("again")), 7);
        reset();
        assert!(is_on(Feature::Serialise) && is_on(Feature::Layer));
    }
}
