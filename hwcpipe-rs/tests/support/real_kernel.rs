//! For the tests that need the machine's own `perf_event_open`.

/// `false`, after saying so on stderr, where the kernel (or an emulator such as qemu-user) has no
/// `perf_event_open`: tests that need the real call skip there.
pub fn perf_events_present() -> bool {
    let present = hwcpipe::sys::perf_event_open_implemented();
    if !present {
        eprintln!("skipped: this kernel or emulator has no perf_event_open (ENOSYS)");
    }
    present
}
