//! Ctrl-C: the first press asks the running subcommand to finish cleanly (and still write its output).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Installs the SIGINT/SIGTERM handler (once). If it cannot be installed, Ctrl-C keeps its default effect.
pub fn install() {
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    });
}

/// Whether Ctrl-C was pressed since [`install`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Sleeps up to `duration`, waking early when Ctrl-C is pressed. Returns `true` if interrupted.
pub fn sleep(duration: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + duration;
    loop {
        if interrupted() {
            return true;
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
    }
}
