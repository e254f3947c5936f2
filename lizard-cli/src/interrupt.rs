//! Ctrl-C: the first press asks the running subcommand to finish cleanly (and still write its output); a
//! second press (or a second SIGTERM) ends the process at once, with status 130.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// The exit status after a second Ctrl-C: 128 + SIGINT, as a shell reports a process Ctrl-C ended.
pub const INTERRUPTED_STATUS: i32 = 130;

/// Installs the SIGINT/SIGTERM handler (once). If it cannot be installed, Ctrl-C keeps its default effect.
pub fn install() {
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                eprintln!("lizard: interrupted again; stopping now");
                std::process::exit(INTERRUPTED_STATUS);
            }
        });
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
